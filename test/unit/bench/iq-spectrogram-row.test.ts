/**
 * The pure parts of the iq_spectrogram rows (bench/signal-ops/rows/iq-spectrogram.ts): the IQ
 * series made from the shared input, their int16 quantization, and the row's check, which must
 * accept scipy.signal.spectrogram's output (two-sided, on this host) and refuse it perturbed.
 * Skipped, with the reason, where python3 with scipy is missing.
 */
import { describe, expect, it } from 'vitest';
import {
  iq16Series,
  iqSeries,
  iqSpectrogramCheck,
  IQ_SPECTROGRAM_PARAMS,
} from '../../../bench/signal-ops/rows/iq-spectrogram.js';
import { signalOpsInput } from '../../../bench/signal-ops/input.js';
import { scipy, scipyReference } from '../../gpu/signal/scipy.js';

describe('the IQ series of the iq_spectrogram rows', () => {
  it('pairs series b (I) with series b + 1 (Q), the last with the first', () => {
    const host = signalOpsInput(3, 8);
    const iq = iqSeries(host, 3, 8);
    expect(iq.length).toBe(2 * 3 * 8);
    for (const [b, q] of [
      [0, 1],
      [1, 2],
      [2, 0],
    ])
      for (let t = 0; t < 8; t++) {
        expect(iq[2 * (b! * 8 + t)]).toBe(host[b! * 8 + t]);
        expect(iq[2 * (b! * 8 + t) + 1]).toBe(host[q! * 8 + t]);
      }
  });

  it('quantizes to int16 at full scale: the peak maps to ±32767, every value within half a step', () => {
    const iq = iqSeries(signalOpsInput(2, 1024), 2, 1024);
    const { pairs, scale } = iq16Series(iq);
    let top = 0;
    for (let i = 0; i < iq.length; i++) {
      top = Math.max(top, Math.abs(pairs[i]!));
      expect(Math.abs(pairs[i]! * scale - iq[i]!)).toBeLessThanOrEqual(scale / 2 + 1e-12);
    }
    expect(top).toBe(32767);
  });
});

describe.skipIf(!scipy.ok)(
  `the iq_spectrogram rows' check${scipy.ok ? '' : ` (skipped: ${scipy.reason})`}`,
  { timeout: 120_000 },
  () => {
    it("accepts scipy's two-sided spectrogram of the IQ series and refuses it perturbed, for complex64 and int16 input", async () => {
      const [batch, length] = [3, 8192];
      const iq = iqSeries(signalOpsInput(batch, length), batch, length);
      const { pairs, scale } = iq16Series(iq);
      const inputs = { c64: Float64Array.from(iq), i16: Float64Array.from(pairs, (v) => Math.fround(v * scale)) };
      const { window, nperseg, noverlap, detrend, return_onesided, scaling, mode } = IQ_SPECTROGRAM_PARAMS;
      const ref = await scipyReference(
        Object.entries(inputs).map(([id, input]) => ({
          id,
          op: 'spectrogram' as const,
          input,
          shape: [batch, length],
          complex: true,
          params: { window, nperseg, noverlap, detrend, return_onesided, scaling, mode },
        })),
      );
      for (const [id, input] of Object.entries(inputs)) {
        const sxx = Float32Array.from(ref.get(id)!.values);
        const ok = iqSpectrogramCheck(input, sxx, batch, length);
        expect(ok.error, id).toBeLessThan(ok.tolerance);
        // The first frame of series 0 (always checked) one bin off.
        const shifted = sxx.slice();
        shifted[0] = sxx[1]!;
        shifted[1] = sxx[0]!;
        expect(iqSpectrogramCheck(input, shifted, batch, length).error, id).toBeGreaterThan(ok.tolerance);
      }
    });
  },
);
