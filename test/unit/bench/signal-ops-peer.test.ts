/**
 * bench/peers/signal_ops_peer.py end to end without a GPU: a data folder written by the same code
 * tscuda's side uses (bench/signal-ops/data.ts), read by the peer's own loop with a CPU stand-in
 * backend (fixtures/signal_ops_cpu_peer.py: scipy), and its line parsed as the harness parses it.
 * Also the peers' host designs (signal_ops_design.py --self-test: the polyphase weights and the
 * chunked state-space cascade against scipy). Skipped, with the reason, where python3 with scipy is
 * missing.
 */
import { execa, execaSync } from 'execa';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { peerOutcome, type PeerOutcome } from '../../../bench/harness/peers.js';
import {
  INPUT_FILE,
  removeSignalOpsData,
  signalOpsDataDir,
  writeDataFile,
  writeManifest,
  type RowManifest,
} from '../../../bench/signal-ops/data.js';
import { signalOpsInput } from '../../../bench/signal-ops/input.js';
import { FFTCONVOLVE_CUTOFF, FFTCONVOLVE_TAPS, fftconvolveCheck } from '../../../bench/signal-ops/rows/fftconvolve.js';
import { RESAMPLE_DOWN, RESAMPLE_UP, resamplePolyCheck } from '../../../bench/signal-ops/rows/resample-poly.js';
import { analyticReference, sosfiltReference } from '../../../bench/signal-ops/references.js';
import { SOSFILT_BAND, SOSFILT_ORDER } from '../../../bench/signal-ops/rows/sosfilt.js';
import { butter, firwin, resamplePolyPlan } from '../../../src/signal/index.js';
import { scipy } from '../../gpu/signal/scipy.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const FIXTURE = join(import.meta.dirname, 'fixtures', 'signal_ops_cpu_peer.py');
const BATCH = 3;
const LENGTH = 4096;

function manifest(id: string, fields: Partial<RowManifest>): RowManifest {
  return {
    id,
    metric: `signal_${id}_ms`,
    job: `${id} test job`,
    batch: BATCH,
    length: LENGTH,
    input: INPUT_FILE,
    output: null,
    outputDtype: 'f32',
    outputShape: [BATCH, LENGTH],
    tolerance: 1e-4,
    params: {},
    ...fields,
  };
}

/** python3 with torch: the PyTorch peer's rows then run on the CPU too (torch is on GPU hosts, seldom elsewhere). */
const torch = ((): { ok: boolean; reason: string } => {
  if (!scipy.ok) return { ok: false, reason: scipy.reason };
  const r = execaSync('python3', ['-c', 'import torch'], { reject: false, timeout: 120_000 });
  return r.exitCode === 0 ? { ok: true, reason: '' } : { ok: false, reason: 'python3 has no torch' };
})();

async function runPeer(...extra: string[]): Promise<PeerOutcome> {
  const r = await execa('python3', [FIXTURE, '--data', signalOpsDataDir(), '--reps', '3', ...extra], {
    reject: false,
    timeout: 120_000,
  });
  const peer = extra.includes('--torch') ? 'torch' : 'cupy';
  return peerOutcome(peer, { exitCode: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) });
}

describe.skipIf(!scipy.ok)(`signal-ops peer program${scipy.ok ? '' : ` (skipped: ${scipy.reason})`}`, () => {
  beforeAll(() => {
    const x = signalOpsInput(BATCH, LENGTH);
    writeDataFile(INPUT_FILE, x);
    const sos = butter(SOSFILT_ORDER, [...SOSFILT_BAND], { btype: 'bandpass' });
    // "tscuda's output" of two rows, as the runner writes it after its own check: here the rows' CPU references.
    const filtered = new Float32Array(BATCH * LENGTH);
    const analytic = new Float32Array(2 * BATCH * LENGTH);
    for (let s = 0; s < BATCH; s++) {
      filtered.set(sosfiltReference(sos, x.subarray(s * LENGTH, (s + 1) * LENGTH)), s * LENGTH);
      analytic.set(analyticReference(x.subarray(s * LENGTH, (s + 1) * LENGTH)), 2 * s * LENGTH);
    }
    writeManifest(manifest('sosfilt', { output: writeDataFile('sosfilt-out.bin', filtered), params: { sos } }));
    writeManifest(
      manifest('hilbert', { output: writeDataFile('hilbert-out.bin', analytic), outputDtype: 'c64', params: {} }),
    );
    // A row whose tscuda side failed: no output, so the peer is checked against scipy on the CPU.
    const taps = Array.from(firwin(65, 0.1));
    writeManifest(manifest('fftconvolve', { outputShape: [BATCH, LENGTH + 64], params: { taps, mode: 'full' } }));
    const resampled = Math.ceil((LENGTH * 3) / 7);
    writeManifest(
      manifest('resample_poly', {
        outputShape: [BATCH, resampled],
        params: { up: 3, down: 7, window: ['kaiser', 5], outLength: resampled },
      }),
    );
  });
  afterAll(() => removeSignalOpsData());

  it("reports each row that equals tscuda's output, and says what it was checked against", async () => {
    const out = await runPeer();
    expect(out.status, out.reason).toBe('ok');
    expect(Object.keys(out.errors)).toEqual([]);
    const m = out.passes[0]!;
    expect(Object.keys(m).sort()).toEqual([
      'signal_fftconvolve_ms',
      'signal_hilbert_ms',
      'signal_resample_poly_ms',
      'signal_sosfilt_ms',
    ]);
    expect(m.signal_sosfilt_ms!.samples).toBe(3);
    expect(m.signal_sosfilt_ms!.median).toBeGreaterThan(0);
    expect(m.signal_sosfilt_ms!.note).toMatch(
      /^scipy sosfilt; checked against tscuda's output, every series: relative L2 /,
    );
    expect(m.signal_sosfilt_ms!.note).toContain(
      'also tried: a skipped candidate: not run: a stand-in that is never run',
    );
    expect(m.signal_hilbert_ms!.note).toContain("tscuda's output, every series");
    expect(m.signal_fftconvolve_ms!.note).toContain('scipy on the CPU in float64, first and last series');
    expect(m.signal_fftconvolve_ms!.note).toContain('a CPU stand-in');
  }, 150_000);

  it.skipIf(!torch.ok)(
    `runs the PyTorch peer's own rows on the CPU, each equal to tscuda's output or scipy's${torch.ok ? '' : ` (skipped: ${torch.reason})`}`,
    async () => {
      const out = await runPeer('--torch');
      expect(out.status, out.reason).toBe('ok');
      expect(Object.keys(out.errors)).toEqual([]);
      const m = out.passes[0]!;
      expect(Object.keys(m).sort()).toEqual([
        'signal_fftconvolve_ms',
        'signal_hilbert_ms',
        'signal_resample_poly_ms',
        'signal_sosfilt_ms',
      ]);
      expect(m.signal_fftconvolve_ms!.note).toContain('torch has no fftconvolve');
      expect(m.signal_resample_poly_ms!.note).toContain('polyphase conv1d');
      expect(m.signal_sosfilt_ms!.note).toContain('state-space');
    },
    150_000,
  );

  it('refuses a peer that computes another filter, and runs only the rows --only names', async () => {
    const out = await runPeer('--wrong', 'sosfilt', '--only', '^(signal_sosfilt_ms)$');
    expect(out.status, out.reason).toBe('ok');
    expect(Object.keys(out.passes[0]!)).toEqual([]);
    expect(out.errors.signal_sosfilt_ms).toMatch(
      /scipy sosfilt: differs \(relative L2 [\d.e+-]+ > 0\.0001\), not a peer/,
    );
  }, 150_000);

  it("builds the torch peer's polyphase weights and chunked cascade as scipy computes them", async () => {
    const r = await execa('python3', [join(ROOT, 'bench', 'peers', 'signal_ops_design.py'), '--self-test'], {
      reject: false,
      timeout: 120_000,
    });
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
  }, 150_000);

  it("accepts scipy's fftconvolve and resample_poly in the rows' own checks, and refuses them shifted by a sample", async () => {
    // The checks decide on the GPU host whether tscuda's side is measured at all: a check that
    // refused a right answer would lose the row, one that took a wrong one would time it.
    const batch = 2;
    const length = 8192;
    const x = signalOpsInput(batch, length, 5);
    const taps = firwin(FFTCONVOLVE_TAPS, FFTCONVOLVE_CUTOFF);
    const dir = mkdtempSync(join(tmpdir(), 'tscuda-signal-check-'));
    try {
      writeFileSync(join(dir, 'x.bin'), x);
      writeFileSync(join(dir, 'taps.bin'), taps);
      const script = [
        'import sys, numpy as np, scipy.signal as ss',
        'd = sys.argv[1]',
        `x = np.fromfile(d + '/x.bin', np.float32).reshape(${batch}, ${length}).astype(np.float64)`,
        "h = np.fromfile(d + '/taps.bin', np.float64)",
        "ss.fftconvolve(x, h[None, :], axes=-1).astype(np.float32).tofile(d + '/conv.bin')",
        `ss.resample_poly(x, ${RESAMPLE_UP}, ${RESAMPLE_DOWN}, axis=-1).astype(np.float32).tofile(d + '/resampled.bin')`,
      ].join('\n');
      const r = await execa('python3', ['-c', script, dir], { reject: false, timeout: 120_000 });
      expect(r.exitCode, String(r.stderr)).toBe(0);
      const read = (name: string): Float32Array => {
        const b = readFileSync(join(dir, name));
        return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
      };
      const conv = read('conv.bin');
      const good = fftconvolveCheck(x, taps, conv, batch, length);
      expect(good.error).toBeLessThan(1e-6);
      // A low-passed output is smooth, so a one-sample shift moves it by a tenth, still a thousand tolerances.
      expect(
        fftconvolveCheck(
          x,
          taps,
          Float32Array.from(conv, (_, i) => conv[i + 1] ?? 0),
          batch,
          length,
        ).error,
      ).toBeGreaterThan(100 * good.tolerance);
      const plan = resamplePolyPlan(length, RESAMPLE_UP, RESAMPLE_DOWN);
      const resampled = read('resampled.bin');
      expect(resampled.length).toBe(batch * plan.outLength);
      const ok = resamplePolyCheck(x, plan, resampled, batch, length);
      expect(ok.error).toBeLessThan(ok.tolerance);
      const shifted = Float32Array.from(resampled, (_, i) => resampled[i + 1] ?? 0);
      expect(resamplePolyCheck(x, plan, shifted, batch, length).error).toBeGreaterThan(100 * ok.tolerance);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 150_000);
});
