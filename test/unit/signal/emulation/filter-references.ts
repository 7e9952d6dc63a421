/**
 * Float64 references of the IIR and FIR filters the emulated filter tests share, each written from its
 * definition (never from src/signal): the cascade of sections in direct form I (a different recurrence
 * from the kernels' transposed form II), the same in transposed form II with scipy's state zi, and
 * filtfilt's recipe (scipy's extensions, steady-state starts found by running a constant input to convergence).
 */
import type { Sos } from '../../../../src/signal/index.js';

/** Direct form I through the cascade, from a zero state. */
export function sosReference(sos: Sos, x: ArrayLike<number>): Float64Array {
  let v = Float64Array.from(x);
  for (const [b0, b1, b2, , a1, a2] of sos) {
    const y = new Float64Array(v.length);
    for (let t = 0; t < v.length; t++)
      y[t] =
        b0! * v[t]! + b1! * (v[t - 1] ?? 0) + b2! * (v[t - 2] ?? 0) - a1! * (y[t - 1] ?? 0) - a2! * (y[t - 2] ?? 0);
    v = y;
  }
  return v;
}

/**
 * scipy.signal.sosfilt of one series, sample after sample (transposed direct form II, as scipy's
 * _sosfilt), from the state zi (sections × 2 of this series; zeros by default): its output and final state.
 */
export function sosfiltSequential(
  sos: Sos,
  x: ArrayLike<number>,
  zi?: ArrayLike<number>,
): { y: Float64Array; zf: Float64Array } {
  const z = Float64Array.from({ length: 2 * sos.length }, (_, i) => zi?.[i] ?? 0);
  const y = new Float64Array(x.length);
  for (let t = 0; t < x.length; t++) {
    let v = x[t]!;
    sos.forEach(([b0, b1, b2, , a1, a2], s) => {
      const out = b0! * v + z[2 * s]!;
      z[2 * s] = b1! * v - a1! * out + z[2 * s + 1]!;
      z[2 * s + 1] = b2! * v - a2! * out;
      v = out;
    });
    y[t] = v;
  }
  return { y, zf: z };
}

/** scipy's odd_ext / even_ext / const_ext: `x` extended by `edge` samples at each end. */
export function extend(x: ArrayLike<number>, edge: number, padtype: 'odd' | 'even' | 'constant' = 'odd'): Float64Array {
  const n = x.length;
  return Float64Array.from({ length: n + 2 * edge }, (_, i) => {
    if (i >= edge && i < edge + n) return x[i - edge]!;
    const [end, mirrored] = i < edge ? [x[0]!, x[edge - i]!] : [x[n - 1]!, x[n - 2 - (i - edge - n)]!];
    return padtype === 'odd' ? 2 * end - mirrored : padtype === 'even' ? mirrored : end;
  });
}

/** A steady-state start for a linear filter: the output at which a constant input settles (run to convergence). */
function settledStart(
  filter: (x: Float64Array) => Float64Array,
  value: number,
  tail: number,
): (x: Float64Array) => Float64Array {
  return (x) => filter(Float64Array.from([...new Float64Array(tail).fill(value), ...x])).subarray(tail);
}

/** filtfilt by its recipe: extend (padtype), filter forward from steady state, reverse, again, reverse, trim. */
export function filtfiltReference(
  filter: (x: Float64Array) => Float64Array,
  x: ArrayLike<number>,
  edge: number,
  padtype: 'odd' | 'even' | 'constant' = 'odd',
): Float64Array {
  const ext = extend(x, edge, padtype);
  const forward = settledStart(filter, ext[0]!, 4000)(ext);
  const backward = settledStart(filter, forward[forward.length - 1]!, 4000)(forward.slice().reverse());
  return backward.reverse().subarray(edge, edge + x.length);
}
