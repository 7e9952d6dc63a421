// validateJob: the caller's choices carried through to the normalized job, and scipy's framing (stft
// with boundary 'zeros', padded) from frame counts scipy 1.17 computed, at overlaps other than half.
import { describe, expect, it } from 'vitest';
import { validateJob } from '../../../src/engine/validate.js';
import { spectralGeometry, STFT_DEFAULTS } from '../../../src/signal/geometry.js';
import { ctx, data, job } from './validate-edges-fixture.js';

describe('validateJob carries the caller’s choices', { timeout: 10_000 }, () => {
  it('detrend: linear by default, else as given', () => {
    expect(job({}).detrend).toBe('linear');
    expect(job({ detrend: 'constant' }).detrend).toBe('constant');
    expect(job({ detrend: false }).detrend).toBe(false);
  });

  it('label, timeoutMs, signal, stageParams, into and flags come through (flags as a copy)', () => {
    const signal = new AbortController().signal;
    const filtered = new Float32Array(64);
    const flags = ['stft', 'supdem'];
    const j = job({
      flags,
      label: 'run 7',
      timeoutMs: 250,
      signal,
      stageParams: { supdem: { k: 2 } },
      into: { filtered },
    });
    expect(j).toMatchObject({
      label: 'run 7',
      timeoutMs: 250,
      stageParams: { supdem: { k: 2 } },
      stages: ['supdem'],
      stft: true,
      cycles: false,
      wavelet: false,
    });
    expect(j.signal).toBe(signal);
    expect(j.into.filtered).toBe(filtered);
    expect(j.flags).toEqual(flags);
    expect(j.flags).not.toBe(flags);
  });

  it('waveletBands false and bandWaves true by default, else as given', () => {
    expect(job({}).waveletBands).toBe(false);
    expect(job({}).bandWaves).toBe(true);
    const w = job({ flags: ['wavelet'], freqs: [0.1], bands: [[0.05, 0.2]], waveletBands: true, bandWaves: false });
    expect([w.waveletBands, w.bandWaves, w.wavelet, w.freqs, w.bands]).toEqual([
      true,
      false,
      true,
      [0.1],
      [[0.05, 0.2]],
    ]);
  });

  it('nCycles 6 by default, else as given; fs 1 by default', () => {
    expect(job({}).nCycles).toBe(6);
    expect(job({ nCycles: 3.5 }).nCycles).toBe(3.5);
    expect(job({}).fs).toBe(1);
  });
});

describe('validateJob framing against scipy.signal.stft (boundary zeros, padded)', { timeout: 10_000 }, () => {
  // [N, nperseg, noverlap, frames of scipy's Zxx]; the window: hann, or boxcar where hann violates NOLA.
  it.each([
    [100, 16, 10, 18],
    [100, 16, 0, 8],
    [37, 8, 7, 38],
    [64, 64, 0, 2],
    [64, 64, 63, 65],
    [50, 10, 3, 9],
    [33, 32, 5, 3],
    [128, 7, 2, 27],
  ])('N = %d, nperseg = %d, noverlap = %d: %d frames', (n, nperseg, noverlap, frames) => {
    const hop = nperseg - noverlap;
    const framing = validateJob(
      { data: data(n), flags: ['stft'], nperseg, noverlap, window: noverlap === 0 ? 'boxcar' : 'hann' },
      ctx,
    ).framing;
    expect(framing).toMatchObject({
      length: n,
      nperseg,
      noverlap,
      hop,
      nfft: nperseg,
      boundary: 'zeros',
      extension: Math.floor(nperseg / 2),
      extendedLength: (frames - 1) * hop + nperseg,
      frames,
      freqs: Math.floor(nperseg / 2) + 1,
    });
  });

  it('noverlap defaults to nperseg / 2, floored', () => {
    expect(job({ nperseg: 9 }).framing).toMatchObject({ noverlap: 4, hop: 5 });
  });

  it("the framing is the signal layer's stft geometry with the job's fs, window and detrend", () => {
    const framing = job({ nperseg: 16, noverlap: 12, fs: 250, window: ['kaiser', 8], detrend: 'constant' }).framing;
    const options = {
      fs: 250,
      window: ['kaiser', 8] as const,
      nperseg: 16,
      noverlap: 12,
      detrend: 'constant' as const,
    };
    const { window, ...rest } = spectralGeometry(64, options, STFT_DEFAULTS);
    expect(framing).toMatchObject(rest);
    expect(Array.from(framing!.window)).toEqual(Array.from(window));
    // The job's detrend default (linear) is the framing's, not stft's (none).
    expect(job({ nperseg: 16 }).framing?.detrend).toBe('linear');
  });
});
