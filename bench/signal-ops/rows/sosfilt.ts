/**
 * Row `sosfilt` (issue 41): scipy.signal.sosfilt of 16 × 1M float32 series through an 8th-order
 * Butterworth band-pass, butter(8, [0.1, 0.25], btype='bandpass', output='sos'): 8 second-order
 * sections (scipy's N = 8 doubles into 16 poles for a band-pass). tscuda: `sosfilt(sos, x, { batch,
 * output })`, float64 arithmetic and state as scipy's (long series: in parallel along time by tiles
 * of chunks staged in shared memory, src/kernels/sos.cu and src/signal/sos-scan.ts). Checked against a float64 transposed direct form II on the host over the
 * whole of the first and last series.
 */
import { DeviceBuffer } from '../../../src/runtime/index.js';
import { butter, sosfilt } from '../../../src/signal/index.js';
import { relativeL2 } from '../../tscuda/engine-reference.js';
import { sosfiltReference } from '../references.js';
import type { RowCheck, SignalOpRow } from '../row.js';
import { timeMetric } from '../specs.js';

export const SOSFILT_ORDER = 8;
export const SOSFILT_BAND: readonly [number, number] = [0.1, 0.25];

/** tscuda's output `y` (batch × length) against sosfiltReference over the whole of the first and last series. */
export function sosfiltCheck(
  host: Float32Array,
  sos: readonly (readonly number[])[],
  y: Float32Array,
  batch: number,
  length: number,
): RowCheck {
  let worst = 0;
  for (const s of [0, batch - 1]) {
    const want = sosfiltReference(sos, host.subarray(s * length, (s + 1) * length));
    worst = Math.max(worst, relativeL2(y.subarray(s * length, (s + 1) * length), want));
  }
  return {
    error: worst,
    tolerance: 1e-5,
    what: `series 0 and ${batch - 1} whole, against a float64 transposed direct form II on the host`,
  };
}

export const SOSFILT_ROW: SignalOpRow = {
  id: 'sosfilt',
  job: `sosfilt(sos, x) of 16 x 1M float32 series, sos = butter(${SOSFILT_ORDER}, [${SOSFILT_BAND.join(', ')}], btype='bandpass', output='sos') (${SOSFILT_ORDER} sections); 16 x 1M float32 out`,
  metrics: { time: timeMetric('sosfilt') },
  bound: {
    hbm: false,
    why: 'the recurrence is sequential along time: a parallel implementation filters chunks from a zero state and again from their true starting states (twice the arithmetic, 8 sections of float64 per sample each time), so float64 arithmetic, not the 8 bytes a sample moves, bounds it',
  },
  // A float32 recurrence (a peer's own choice) drifts further from float64 than float32 sums do; a wrong filter is off by order one.
  peerTolerance: 1e-3,
  prepare(input) {
    const { batch, length, stream } = input;
    const sos = butter(SOSFILT_ORDER, [...SOSFILT_BAND], { btype: 'bandpass' });
    const output = DeviceBuffer.alloc('f32', batch * length, { stream, label: 'bench signal sosfilt out' });
    return {
      run: () => void sosfilt(sos, input.x, { batch, stream, output }),
      output,
      outputShape: [batch, length],
      check: (y) => sosfiltCheck(input.host, sos, y, batch, length),
      traffic: { read: 4 * batch * length, written: 4 * batch * length },
      peerJob: { sos },
      dispose: () => output.dispose(),
    };
  },
};
