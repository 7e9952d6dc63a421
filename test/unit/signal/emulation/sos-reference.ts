/**
 * sosfilt by its recurrence in float64, written here from the definition (never from src/signal):
 * transposed direct form II per section (scipy's _sosfilt), series after series, from an initial
 * state in scipy's layout (sections, batch, 2), returning the final state in the same layout.
 */
import type { Sos } from '../../../../src/signal/index.js';

/** y and zf of `batch` series (rows of x) through `sos` from zi (zero where absent). */
export function sosStateReference(
  sos: Sos,
  x: ArrayLike<number>,
  batch: number,
  zi?: ArrayLike<number>,
): { y: Float64Array; zf: Float64Array } {
  const n = x.length / batch;
  const y = new Float64Array(x.length);
  const zf = new Float64Array(sos.length * batch * 2);
  for (let b = 0; b < batch; b++) {
    const z = Float64Array.from({ length: 2 * sos.length }, (_, k) => zi?.[((k >> 1) * batch + b) * 2 + (k & 1)] ?? 0);
    for (let t = 0; t < n; t++) {
      let v = x[b * n + t]!;
      sos.forEach(([b0, b1, b2, , a1, a2], s) => {
        const out = b0! * v + z[2 * s]!;
        z[2 * s] = b1! * v - a1! * out + z[2 * s + 1]!;
        z[2 * s + 1] = b2! * v - a2! * out;
        v = out;
      });
      y[b * n + t] = v;
    }
    z.forEach((v, k) => (zf[((k >> 1) * batch + b) * 2 + (k & 1)] = v));
  }
  return { y, zf };
}
