/**
 * Row `resample_poly` (issue 41): scipy.signal.resample_poly(x, 3, 7, axis=-1) of 16 × 1M float32
 * series (scipy's default low-pass, firwin(141, 1/7, window=('kaiser', 5.0)) × 3). tscuda:
 * `resamplePoly(x, 3, 7, { batch, output })`, one polyphase kernel (float64 sums). Checked against
 * direct float64 sums of upfirdn's definition at sampled outputs of the first and last series.
 */
import { DeviceBuffer } from '../../../src/runtime/index.js';
import { resamplePoly, resamplePolyPlan, type UpfirdnWindow } from '../../../src/signal/index.js';
import { relativeL2 } from '../../tscuda/engine-reference.js';
import { checkPositions, uniformSource } from '../input.js';
import type { RowCheck, SignalOpRow } from '../row.js';
import { fractionMetric, timeMetric } from '../specs.js';

export const RESAMPLE_UP = 3;
export const RESAMPLE_DOWN = 7;
const CHECKED = 512;

/** tscuda's output `y` (batch × plan.outLength) against upfirdn's definition summed in float64 at sampled outputs of the first and last series. */
export function resamplePolyCheck(
  host: Float32Array,
  plan: UpfirdnWindow,
  y: Float32Array,
  batch: number,
  length: number,
): RowCheck {
  const { taps, up, down, start, outLength } = plan;
  const uniform = uniformSource(11);
  const got: number[] = [];
  const want: number[] = [];
  for (const s of [0, batch - 1]) {
    const x = host.subarray(s * length, (s + 1) * length);
    for (const k of checkPositions(outLength, CHECKED, 32, uniform)) {
      // upfirdn: the signal upsampled by zeros, filtered, every down-th sample; output k is upfirdn's start + k.
      const m = (start + k) * down;
      let sum = 0;
      for (let j = 0; j < taps.length; j++) {
        const t = m - j;
        if (t >= 0 && t % up === 0 && t / up < length) sum += taps[j]! * x[t / up]!;
      }
      want.push(sum);
      got.push(y[s * outLength + k]!);
    }
  }
  return {
    error: relativeL2(got, want),
    tolerance: 1e-6,
    what: `series 0 and ${batch - 1}, ${CHECKED} outputs each (both ends among them), against upfirdn's definition summed in float64`,
  };
}

export const RESAMPLE_POLY_ROW: SignalOpRow = {
  id: 'resample_poly',
  job: `resample_poly(x, ${RESAMPLE_UP}, ${RESAMPLE_DOWN}) of 16 x 1M float32 series, scipy's default window ('kaiser', 5.0); 16 x ceil(1M x ${RESAMPLE_UP} / ${RESAMPLE_DOWN}) float32 out`,
  metrics: { time: timeMetric('resample_poly'), fraction: fractionMetric('resample_poly') },
  bound: {
    hbm: true,
    why: 'one polyphase pass: each output sums about 47 taps of samples already in cache, so the input read once and the output written once bound it',
  },
  peerTolerance: 1e-4,
  prepare(input) {
    const { batch, length, stream } = input;
    const plan = resamplePolyPlan(length, RESAMPLE_UP, RESAMPLE_DOWN);
    const outLength = plan.outLength;
    const output = DeviceBuffer.alloc('f32', batch * outLength, { stream, label: 'bench signal resample_poly out' });
    return {
      run: () => void resamplePoly(input.x, RESAMPLE_UP, RESAMPLE_DOWN, { batch, stream, output }),
      output,
      outputShape: [batch, outLength],
      check: (y) => resamplePolyCheck(input.host, plan, y, batch, length),
      traffic: { read: 4 * batch * length, written: 4 * batch * outLength },
      peerJob: { up: RESAMPLE_UP, down: RESAMPLE_DOWN, window: ['kaiser', 5.0], outLength },
      dispose: () => output.dispose(),
    };
  },
};
