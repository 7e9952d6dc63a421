import { describe, expect, it } from 'vitest';
import { createGradientDispatcher, type InterpolationItem } from '../../../src/pipeline/batching/batch-dispatchers.js';
import { GpuBatcher, gradientBatcher, lerpBatcher, slerpBatcher } from '../../../src/pipeline/batching/gpu-batcher.js';
import { gpu } from '../gpu-available.js';
import { randomF32 } from '../helpers.js';

/** The objective of kernels/batch.cu: f(v) = sum_j sin(v_j) * v_{(j+1) mod dim}, in float64. */
function objective(v: ArrayLike<number>, k: number, dk: number): number {
  const dim = v.length;
  let acc = 0;
  for (let j = 0; j < dim; j++) {
    const n = (j + 1) % dim;
    acc += Math.sin(v[j]! + (j === k ? dk : 0)) * (v[n]! + (n === k ? dk : 0));
  }
  return acc;
}

function gradientReference(v: ArrayLike<number>, h: number): Float64Array {
  return Float64Array.from({ length: v.length }, (_, k) => (objective(v, k, h) - objective(v, k, -h)) / (2 * h));
}

function analyticGradient(v: ArrayLike<number>): Float64Array {
  const dim = v.length;
  return Float64Array.from(
    { length: dim },
    (_, k) => Math.cos(v[k]!) * v[(k + 1) % dim]! + Math.sin(v[(k - 1 + dim) % dim]!),
  );
}

function slerpReference(a: ArrayLike<number>, b: ArrayLike<number>, t: number): Float64Array {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let j = 0; j < a.length; j++) {
    dot += a[j]! * b[j]!;
    na += a[j]! * a[j]!;
    nb += b[j]! * b[j]!;
  }
  const omega = Math.acos(Math.min(1, Math.max(-1, dot / (Math.sqrt(na) * Math.sqrt(nb)))));
  const [wa, wb] =
    omega < 1e-4 ? [1 - t, t] : [Math.sin((1 - t) * omega) / Math.sin(omega), Math.sin(t * omega) / Math.sin(omega)];
  return Float64Array.from({ length: a.length }, (_, j) => wa * a[j]! + wb * b[j]!);
}

function maxAbsError(got: ArrayLike<number>, want: ArrayLike<number>): number {
  if (got.length !== want.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < want.length; i++) {
    const e = Math.abs(got[i]! - want[i]!);
    if (!(e <= worst)) worst = Number.isNaN(e) ? Infinity : e;
  }
  return worst;
}

/** Random submit sizes from many concurrent callers, each checking only its own results. */
async function concurrentSubmitters<I>(
  callers: number,
  makeItem: () => I,
  submit: (items: I[]) => Promise<Float32Array[]>,
  check: (item: I, out: Float32Array) => void,
): Promise<number> {
  let total = 0;
  await Promise.all(
    Array.from({ length: callers }, async (_, c) => {
      // Stagger the callers so that batches flush on size and on timeout both.
      if (c % 3 === 0) await new Promise((r) => setTimeout(r, c % 7));
      const items = Array.from({ length: 1 + ((c * 7919) % 23) }, makeItem);
      total += items.length;
      const outs = await submit(items);
      expect(outs.length).toBe(items.length);
      items.forEach((item, i) => check(item, outs[i]!));
    }),
  );
  return total;
}

/** Unit-ish random vectors whose pairwise angle keeps slerp well conditioned (|cos| <= 0.9). */
function wellSeparatedPair(dim: number): { a: Float32Array; b: Float32Array } {
  for (;;) {
    const a = randomF32(dim);
    const b = randomF32(dim);
    let dot = 0;
    let na = 0;
    let nb = 0;
    for (let j = 0; j < dim; j++) {
      dot += a[j]! * b[j]!;
      na += a[j]! * a[j]!;
      nb += b[j]! * b[j]!;
    }
    if (na > 0.1 && nb > 0.1 && Math.abs(dot / Math.sqrt(na * nb)) <= 0.9) return { a, b };
  }
}

describe.skipIf(!gpu.available)(`Batcher GPU dispatchers${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  it('batches gradients from many concurrent submitters, matching a float64 CPU reference', async () => {
    const dim = 16;
    const h = 1e-2;
    await using g = gradientBatcher({ dim, h, maxBatchSize: 256, maxWaitMs: 2, channelSize: 512, label: 'gradients' });
    let worstFd = 0;
    let worstAnalytic = 0;
    const total = await concurrentSubmitters(
      300,
      () => randomF32(dim),
      (items) => g.submit(items),
      (x, out) => {
        worstFd = Math.max(worstFd, maxAbsError(out, gradientReference(x, h)));
        worstAnalytic = Math.max(worstAnalytic, maxAbsError(out, analyticGradient(x)));
      },
    );
    const m = g.metrics;
    console.log(
      `gradient batcher: ${total} vectors in ${m.batches} batches (fill ${(100 * m.fillRate).toFixed(0)}%), max error ${worstFd.toExponential(2)} vs float64 differences, ${worstAnalytic.toExponential(2)} vs analytic`,
    );
    expect(worstFd).toBeLessThan(5e-4);
    expect(worstAnalytic).toBeLessThan(2e-3);
    expect(m.items).toBe(total);
    expect(m.batches).toBeLessThan(300);
    expect(m.failedBatches).toBe(0);
  });

  it('batches lerp and slerp from many concurrent submitters, matching float64 CPU references', async () => {
    const dim = 8;
    await using lerp = lerpBatcher({ dim, maxBatchSize: 128, maxWaitMs: 1, channelSize: 256 });
    await using slerp = slerpBatcher({ dim, maxBatchSize: 128, maxWaitMs: 1, channelSize: 256 });
    const item = (): InterpolationItem => ({ ...wellSeparatedPair(dim), t: Math.random() });
    let worstLerp = 0;
    let worstSlerp = 0;
    const [lerpItems, slerpItems] = await Promise.all([
      concurrentSubmitters(
        200,
        item,
        (items) => lerp.submit(items),
        ({ a, b, t }, out) => {
          const tf = Math.fround(t);
          worstLerp = Math.max(
            worstLerp,
            maxAbsError(
              out,
              Float64Array.from({ length: dim }, (_, j) => a[j]! + tf * (b[j]! - a[j]!)),
            ),
          );
        },
      ),
      concurrentSubmitters(
        200,
        item,
        (items) => slerp.submit(items),
        ({ a, b, t }, out) => {
          worstSlerp = Math.max(worstSlerp, maxAbsError(out, slerpReference(a, b, Math.fround(t))));
        },
      ),
    ]);
    // Identical endpoints: the arc has length zero and every t gives the endpoint back.
    const same = randomF32(dim);
    const [atSame] = await slerp.submit([{ a: same, b: same, t: 0.3 }]);
    console.log(
      `lerp: ${lerpItems} items, max error ${worstLerp.toExponential(2)}; slerp: ${slerpItems} items, max error ${worstSlerp.toExponential(2)}`,
    );
    expect(worstLerp).toBeLessThan(1e-6);
    expect(worstSlerp).toBeLessThan(1e-4);
    expect(maxAbsError(atSame!, same)).toBeLessThan(1e-5);
    expect(lerp.metrics.items).toBe(lerpItems);
    expect(slerp.metrics.items).toBe(slerpItems + 1);
  });

  it('refuses a malformed item at submit without failing the batch it would have joined', async () => {
    await using lerp = lerpBatcher({ dim: 4, maxBatchSize: 64, maxWaitMs: 5, channelSize: 64 });
    const good = lerp.submit([{ a: [0, 0, 0, 0], b: [1, 2, 3, 4], t: 0.5 }]);
    const wrongLength = lerp.submit([{ a: [0, 0, 0], b: [1, 2, 3, 4], t: 0.5 }]);
    const wrongT = lerp.submitOne({ a: [0, 0, 0, 0], b: [1, 2, 3, 4], t: Number.NaN });
    await expect(wrongLength).rejects.toThrow(/3 values, expected 4/);
    await expect(wrongT).rejects.toThrow(/finite number/);
    const [out] = await good;
    expect(Array.from(out!)).toEqual([0.5, 1, 1.5, 2]);
    expect(lerp.metrics.failedBatches).toBe(0);
  });

  it('grows its staging when a batch is larger than it was sized for', async () => {
    const dispatcher = createGradientDispatcher({ dim: 3, maxBatchSize: 4, depth: 1 });
    await using g = new GpuBatcher(dispatcher, { maxBatchSize: 64, maxWaitMs: 1, channelSize: 8 });
    const xs = Array.from({ length: 500 }, () => randomF32(3));
    const outs = await g.submit(xs);
    xs.forEach((x, i) => expect(maxAbsError(outs[i]!, gradientReference(x, 5e-3))).toBeLessThan(5e-4));
    expect(g.metrics.batches).toBe(Math.ceil(500 / 64));
  });
});
