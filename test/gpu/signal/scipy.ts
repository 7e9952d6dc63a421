/**
 * Runs test/gpu/fixtures/scipy_signal_reference.py (python3 with scipy and numpy) on inputs written
 * to a temporary folder, and reads its float64 outputs back. `scipy.ok` says whether it can run
 * here; when not, `scipy.reason` is the one-line reason the comparisons print as they skip.
 */
import { execa, execaSync } from 'execa';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Stream } from '../../../src/runtime/stream.js';
import { clearSignalCaches } from '../../../src/signal/index.js';
import type { DType } from '../../../src/runtime/memory/dtype.js';
import { absentTool, notInstalled, toolFailure } from '../../setup/tool-probe.js';

const SCRIPT = join(import.meta.dirname, '..', 'fixtures', 'scipy_signal_reference.py');

function probe(): { ok: boolean; reason: string; version: string } {
  // Bounded, but generously: importing scipy on a loaded machine took over the 60 s once allowed,
  // and the tests then skipped silently. Only an absent python3 or scipy skips (tool-probe.ts).
  const r = execaSync('python3', ['-c', 'import numpy, scipy.signal; print(scipy.__version__)'], {
    reject: false,
    timeout: 600_000,
  });
  if (r.exitCode === 0) return { ok: true, reason: '', version: String(r.stdout).trim() };
  if (notInstalled(r)) return { ok: false, reason: absentTool('python3 is not installed'), version: '' };
  const last = String(r.stderr).trim().split('\n').pop() ?? '';
  if (r.exitCode === 1 && /ModuleNotFoundError|ImportError/.test(last))
    return { ok: false, reason: absentTool(`python3 cannot import scipy/numpy: ${last}`), version: '' };
  throw toolFailure('python3 (importing scipy)', r);
}

/** Whether the scipy reference can run here. */
export const scipy = probe();

/** One reference computation: scipy op, input (float64, complex interleaved when `complex`), its shape, scipy's keyword arguments. */
export interface ScipyCase {
  id: string;
  op: 'stft' | 'istft' | 'spectrogram' | 'welch' | 'detrend' | 'get_window' | 'call';
  input?: Float64Array;
  shape: number[];
  complex?: boolean;
  params: Record<string, unknown>;
}

export interface ScipyResult {
  values: Float64Array;
  shape: number[];
  complex: boolean;
  f?: Float64Array;
  t?: Float64Array;
}

function readF64(path: string): Float64Array {
  const b = readFileSync(path);
  return new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

/** Runs every case in one python3 process. */
export async function scipyReference(cases: readonly ScipyCase[]): Promise<Map<string, ScipyResult>> {
  const dir = mkdtempSync(join(tmpdir(), 'tscuda-scipy-'));
  try {
    const request = {
      outDir: dir,
      cases: cases.map((c) => {
        let input: string | null = null;
        if (c.input) {
          input = join(dir, `${c.id}.in.f64`);
          writeFileSync(input, new Uint8Array(c.input.buffer, c.input.byteOffset, c.input.byteLength));
        }
        return { id: c.id, op: c.op, input, shape: c.shape, complex: c.complex ?? false, params: c.params };
      }),
    };
    // The request goes through stdin: as an argument, a few hundred cases passed the kernel's argument limit (E2BIG).
    const r = await execa('python3', [SCRIPT, '-'], { input: JSON.stringify(request), timeout: 300_000 });
    const parsed = JSON.parse(String(r.stdout)) as { results: Record<string, { shape: number[]; complex: boolean }> };
    const out = new Map<string, ScipyResult>();
    for (const c of cases) {
      const meta = parsed.results[c.id]!;
      const res: ScipyResult = { values: readF64(join(dir, `${c.id}.f64`)), shape: meta.shape, complex: meta.complex };
      if (existsSync(join(dir, `${c.id}.f.f64`))) res.f = readF64(join(dir, `${c.id}.f.f64`));
      if (existsSync(join(dir, `${c.id}.t.f64`))) res.t = readF64(join(dir, `${c.id}.t.f64`));
      out.set(c.id, res);
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** ‖a − b‖₂ / ‖b‖₂ (Infinity when lengths differ or a value is NaN: poisoned outputs fail). */
export function relativeL2(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Infinity;
  let num = 0;
  let den = 0;
  for (let i = 0; i < b.length; i++) {
    const d = a[i]! - b[i]!;
    num += d * d;
    den += b[i]! * b[i]!;
  }
  const r = Math.sqrt(num) / Math.sqrt(den || 1e-300);
  return Number.isNaN(r) ? Infinity : r;
}

/** Fresh standard-normal-ish values (sum of uniforms) with a random offset and trend, never all zero. */
export function randomSeries(n: number): Float64Array {
  const a = new Float64Array(n);
  const offset = Math.random() * 4 - 2;
  const slope = (Math.random() - 0.5) * 0.01;
  for (let i = 0; i < n; i++) a[i] = Math.random() + Math.random() + Math.random() - 1.5 + offset + slope * i;
  return a;
}

/**
 * `batch` series of `segments` back-to-back segments of `nperseg` samples (use noverlap 0 and
 * detrend false), each segment one impulse at offset nperseg/3 (even series) or nperseg/6 (odd),
 * of random height 1..1.5, over noise of 0.01: each frame's phase falls linearly along
 * frequency by 2*pi/3 (or pi/3) per bin, so it wraps every 3 (or 6) bins, with every step well
 * away from +-pi. Unwrapped along frequency (scipy's 'phase') it is a line; along time it would
 * stay wrapped.
 */
export function wrappingPhaseSeries(batch: number, segments: number, nperseg: number): Float64Array {
  const n = segments * nperseg;
  const x = new Float64Array(batch * n);
  for (let b = 0; b < batch; b++) {
    const offset = Math.round(b % 2 === 0 ? nperseg / 3 : nperseg / 6);
    for (let t = 0; t < n; t++)
      x[b * n + t] = 0.01 * (Math.random() - 0.5) + (t % nperseg === offset ? 1 + 0.5 * Math.random() : 0);
  }
  return x;
}

/** The values as a device buffer of precision `p` (f32 rounds them). */
export function deviceSeries(p: 'f32' | 'f64', values: Float64Array): DeviceBuffer<'f32'> | DeviceBuffer<'f64'> {
  return p === 'f32' ? DeviceBuffer.from('f32', Float32Array.from(values)) : DeviceBuffer.from('f64', values);
}

/** The values as the device holds them in precision `p`, widened back to float64 for scipy. */
export function asHeld(p: 'f32' | 'f64', values: Float64Array): Float64Array {
  return p === 'f32' ? Float64Array.from(Float32Array.from(values)) : values;
}

/** A device buffer's values as float64 (complex interleaved re, im); read after the stream is done. */
export function hostValues(buffer: DeviceBuffer<DType>): Float64Array {
  return Float64Array.from(buffer.read() as ArrayLike<number>);
}

/**
 * The stream of one describe block of GPU comparisons and the buffers its tests make, all released
 * after its tests (with the signal caches); nothing is created where `skip` says why not to. Call
 * inside the describe block.
 */
export function gpuTestScope(
  label: string,
  skip: string,
): { stream: Stream | undefined; keep: <T extends DeviceBuffer<DType>>(buffer: T) => T } {
  const stream = skip ? undefined : new Stream({ label });
  const made: DeviceBuffer<DType>[] = [];
  afterAll(async () => {
    if (!stream) return;
    await stream.done();
    for (const b of made) if (!b.disposed) b.dispose();
    clearSignalCaches();
    stream.dispose();
  });
  return { stream, keep: (buffer) => (made.push(buffer), buffer) };
}
