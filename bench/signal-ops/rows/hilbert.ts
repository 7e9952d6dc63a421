/**
 * Row `hilbert` (issue 41): scipy.signal.hilbert of 16 × 1M float32 series, the analytic signal
 * (complex64 out). tscuda: `hilbert(x, { batch, output })` (one batched R2C, the one-sided weights
 * into a full complex spectrum, one batched C2C inverse in place). Checked over the whole of the
 * first and last series against the analytic signal computed in float64 with fft.js.
 */
import { DeviceBuffer } from '../../../src/runtime/index.js';
import { hilbert } from '../../../src/signal/index.js';
import { relativeL2 } from '../../tscuda/engine-reference.js';
import { analyticReference } from '../references.js';
import type { RowCheck, SignalOpRow } from '../row.js';
import { timeMetric } from '../specs.js';

/** tscuda's output `z` (batch × length complex64, interleaved) against analyticReference over the whole of the first and last series. */
export function hilbertCheck(host: Float32Array, z: Float32Array, batch: number, length: number): RowCheck {
  let worst = 0;
  for (const s of [0, batch - 1]) {
    const want = analyticReference(host.subarray(s * length, (s + 1) * length));
    worst = Math.max(worst, relativeL2(z.subarray(2 * s * length, 2 * (s + 1) * length), want));
  }
  return {
    error: worst,
    tolerance: 1e-5,
    what: `series 0 and ${batch - 1} whole, against the analytic signal computed in float64 (fft.js)`,
  };
}

export const HILBERT_ROW: SignalOpRow = {
  id: 'hilbert',
  job: 'hilbert(x) of 16 x 1M float32 series; 16 x 1M complex64 out (the analytic signal)',
  metrics: { time: timeMetric('hilbert') },
  bound: {
    hbm: false,
    why: 'every implementation goes through a forward and an inverse 1M-point FFT, several passes over HBM each: the compulsory bytes’ fraction is reported, not held to 0.8',
  },
  peerTolerance: 1e-4,
  prepare(input) {
    const { batch, length, stream } = input;
    const output = DeviceBuffer.alloc('c64', batch * length, { stream, label: 'bench signal hilbert out' });
    return {
      run: () => void hilbert(input.x, { batch, stream, output }),
      output,
      outputShape: [batch, length],
      check: (z) => hilbertCheck(input.host, z, batch, length),
      traffic: { read: 4 * batch * length, written: 8 * batch * length },
      peerJob: {},
      dispose: () => output.dispose(),
    };
  },
};
