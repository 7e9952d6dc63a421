/**
 * The pure parts of the signal-ops rows (bench/signal-ops/): the HBM bound, the shared input and
 * the check positions, the rows' float64 CPU references, the catalogue entries, and how a peer's
 * line for these rows folds into the results and is judged against the best peer.
 */
import { describe, expect, it } from 'vitest';
import { foldEnginePeer } from '../../../bench/harness/engine-peers.js';
import { mergeMetrics } from '../../../bench/harness/merge.js';
import { selectMetrics } from '../../../bench/harness/metrics.js';
import { peerOutcome, type PeerOutcome } from '../../../bench/harness/peers.js';
import { hbmBound, hbmNote } from '../../../bench/signal-ops/bound.js';
import { checkPositions, signalOpsInput, uniformSource } from '../../../bench/signal-ops/input.js';
import { SIGNAL_OPS_PEER_FILE } from '../../../bench/signal-ops/peers.js';
import { rowMetricNames } from '../../../bench/signal-ops/row.js';
import { SIGNAL_OP_ROWS } from '../../../bench/signal-ops/rows/index.js';
import { analyticReference, sosfiltReference } from '../../../bench/signal-ops/references.js';

describe('signal-ops HBM bound', () => {
  it('is the compulsory bytes over the time, against the measured bandwidth', () => {
    // 64 MB in + 64 MB out in 0.1 ms is 1,280 GB/s; at 3,200 GB/s the bytes need 0.04 ms.
    const b = hbmBound({ read: 64e6, written: 64e6 }, 0.1, 3200);
    expect(b.gigabytes).toBeCloseTo(0.128, 12);
    expect(b.achievedGBps).toBeCloseTo(1280, 9);
    expect(b.boundMs).toBeCloseTo(0.04, 12);
    expect(b.fraction).toBeCloseTo(0.4, 12);
    // Twice as fast, twice the fraction; the bound does not move.
    const faster = hbmBound({ read: 64e6, written: 64e6 }, 0.05, 3200);
    expect(faster.fraction).toBeCloseTo(0.8, 12);
    expect(faster.boundMs).toBeCloseTo(b.boundMs, 12);
  });

  it('refuses what would make a fraction meaningless, naming the value', () => {
    expect(() => hbmBound({ read: 0, written: 0 }, 1, 3000)).toThrow(/traffic must be > 0 bytes, got 0/);
    expect(() => hbmBound({ read: 1, written: 1 }, 0, 3000)).toThrow(/time must be > 0 ms, got 0/);
    expect(() => hbmBound({ read: 1, written: 1 }, Number.NaN, 3000)).toThrow(/time must be > 0 ms, got NaN/);
    expect(() => hbmBound({ read: 1, written: 1 }, 1, -5)).toThrow(/bandwidth must be > 0 GB\/s, got -5/);
  });

  it('says the bytes, the rate, the fraction and the bound in its note', () => {
    const note = hbmNote(hbmBound({ read: 64e6, written: 64e6 }, 0.1, 3200), 3200);
    expect(note).toContain('128 MB compulsory');
    expect(note).toContain('1280 GB/s');
    expect(note).toContain('0.4 of the 3200 GB/s');
    expect(note).toContain('bound 0.04 ms');
  });
});

describe('signal-ops input and check positions', () => {
  it('is the same every run, differs by seed and series, and is broadband noise with tones', () => {
    const a = signalOpsInput(2, 4096);
    expect(signalOpsInput(2, 4096)).toEqual(a);
    expect(signalOpsInput(2, 4096, 7)).not.toEqual(a);
    expect(a.subarray(0, 4096)).not.toEqual(a.subarray(4096));
    let sum = 0;
    let squares = 0;
    for (const v of a) {
      sum += v;
      squares += v * v;
    }
    // Unit noise plus tones of power (1 + 0.49 + 0.25) / 2: the mean square is about 1.87.
    expect(Math.abs(sum / a.length)).toBeLessThan(0.1);
    expect(squares / a.length).toBeGreaterThan(1.6);
    expect(squares / a.length).toBeLessThan(2.2);
  });

  it('checks both ends of a series and spreads the rest, each position once, ascending', () => {
    const p = checkPositions(1000, 50, 5, uniformSource(3));
    expect(p).toHaveLength(50);
    expect(new Set(p).size).toBe(50);
    expect(p.slice(0, 5)).toEqual([0, 1, 2, 3, 4]);
    expect(p.slice(-5)).toEqual([995, 996, 997, 998, 999]);
    expect([...p].sort((x, y) => x - y)).toEqual(p);
    // A series shorter than the count: every position.
    expect(checkPositions(8, 50, 5, uniformSource(3))).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});

describe("signal-ops rows' float64 references", () => {
  it('sosfiltReference runs each section in transposed direct form II from rest', () => {
    // y[n] = x[n] + 0.5 y[n - 1]: the impulse response is 0.5^n.
    const y = sosfiltReference([[1, 0, 0, 1, -0.5, 0]], [1, 0, 0, 0, 0]);
    expect(Array.from(y)).toEqual([1, 0.5, 0.25, 0.125, 0.0625]);
    // Two sections in cascade: a pure delay (z^-1) then a gain of 3 and the z^-2 tap.
    const z = sosfiltReference(
      [
        [0, 1, 0, 1, 0, 0],
        [3, 0, 1, 1, 0, 0],
      ],
      [1, 2, 0, 0, 0],
    );
    expect(Array.from(z)).toEqual([0, 3, 6, 1, 2]);
  });

  it('analyticReference turns a cosine of a whole number of cycles into its complex exponential', () => {
    const n = 256;
    const k = 9;
    const x = Array.from({ length: n }, (_, i) => Math.cos((2 * Math.PI * k * i) / n + 0.3));
    const z = analyticReference(x);
    for (let i = 0; i < n; i++) {
      const phase = (2 * Math.PI * k * i) / n + 0.3;
      expect(z[2 * i]).toBeCloseTo(Math.cos(phase), 12);
      expect(z[2 * i + 1]).toBeCloseTo(Math.sin(phase), 12);
    }
  });
});

describe('signal-ops rows in the catalogue and the results', () => {
  it('names every row once, time first, the HBM fraction only where HBM bounds the row', () => {
    expect(SIGNAL_OP_ROWS.map((r) => r.id)).toEqual([
      'fftconvolve',
      'sosfilt',
      'resample_poly',
      'hilbert',
      'iq_spectrogram',
      'iq16_spectrogram',
    ]);
    for (const row of SIGNAL_OP_ROWS) {
      expect(rowMetricNames(row)[0]).toBe(`signal_${row.id}_ms`);
      expect(row.metrics.fraction !== undefined, row.id).toBe(row.bound.hbm);
      expect(row.bound.why.length, row.id).toBeGreaterThan(20);
      expect(row.peerTolerance, row.id).toBeLessThanOrEqual(1e-3);
    }
  });

  it("folds the signal-ops peer's line into the peer's column and judges the row against the best peer", () => {
    const line = JSON.stringify({
      peer: 'cupy',
      available: true,
      version: 'cupy 14',
      metrics: {
        signal_sosfilt_ms: { median: 3, spread: 0.02, samples: 15, note: 'cupyx.scipy.signal.sosfilt' },
        signal_hilbert_ms: { median: 0.5, spread: 0.02, samples: 15 },
      },
      errors: { signal_fftconvolve_ms: 'RuntimeError: scipy fftconvolve: differs, not a peer' },
    });
    const cupy = peerOutcome('cupy', { exitCode: 0, stdout: `noise\n${line}\n`, stderr: '' });
    expect(cupy.status).toBe('ok');
    const torchMissing: PeerOutcome = { peer: 'torch', status: 'absent', reason: 'no torch', passes: [], errors: {} };
    const names = ['signal_fftconvolve_ms', 'signal_sosfilt_ms', 'signal_hilbert_ms'];
    const torch = foldEnginePeer(
      { peer: 'torch', status: 'ok', passes: [{}], errors: {} },
      torchMissing,
      names,
      SIGNAL_OPS_PEER_FILE,
    );
    expect(torch.errors.signal_sosfilt_ms).toBe('signal_ops_peer.py absent: no torch');
    const specs = selectMetrics(/^signal_(fftconvolve|sosfilt|hilbert)_ms$/);
    const rows = mergeMetrics(
      specs,
      { cupy: foldEnginePeer(undefined, cupy, names, SIGNAL_OPS_PEER_FILE), torch },
      {
        signal_fftconvolve_ms: { passes: [{ median: 1, spread: 0.01, samples: 15 }], notes: [] },
        signal_sosfilt_ms: { passes: [{ median: 2, spread: 0.01, samples: 15 }], notes: [] },
        signal_hilbert_ms: { passes: [{ median: 1, spread: 0.01, samples: 15 }], notes: [] },
      },
    );
    const by = Object.fromEntries(rows.map((r) => [r.name, r]));
    // 2 ms against CuPy's 3 ms: ahead. 1 ms against 0.5 ms: behind. No peer value: no verdict.
    expect(by.signal_sosfilt_ms!.met).toBe(true);
    expect(by.signal_hilbert_ms!.met).toBe(false);
    expect(by.signal_fftconvolve_ms!.met).toBeNull();
    expect(by.signal_fftconvolve_ms!.notes.join('\n')).toContain(
      'CuPy: failed: RuntimeError: scipy fftconvolve: differs',
    );
    expect(by.signal_sosfilt_ms!.notes).toContain('CuPy: cupyx.scipy.signal.sosfilt');
    expect(by.signal_sosfilt_ms!.notes).toContain('PyTorch: failed: signal_ops_peer.py absent: no torch');
  });
});
