// `tscuda filter` end to end on a GPU: a fresh stereo WAV (16-bit PCM) and a CSV filtered by the
// command, the WAVs it writes read back and compared with scipy.signal.sosfilt / sosfiltfilt of
// the same samples with scipy's own designs (butter, cheby1).
import { execa } from 'execa';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import wavefile from 'wavefile';
import { afterAll, describe, expect, it } from 'vitest';
import { gpu } from '../gpu-available.js';
import { ROOT } from '../helpers.js';
import { relativeL2, scipy, scipyReference } from '../signal/scipy.js';

const reason = !gpu.available ? gpu.reason : !scipy.ok ? scipy.reason : '';

/** The channels of a WAV file as float64 arrays, and its rate and sample encoding. */
function readWav(path: string): { channels: Float64Array[]; fs: number; bitDepth: string } {
  const w = new wavefile.WaveFile(readFileSync(path));
  const samples = w.getSamples(false, Float64Array) as unknown as Float64Array | Float64Array[];
  const fmt = w.fmt as { sampleRate: number };
  return {
    channels: Array.isArray(samples) ? samples : [samples],
    fs: fmt.sampleRate,
    bitDepth: w.bitDepth,
  };
}

/** scipy's sections of a design (a `call` case: scipy.signal.<fn>(*args, output='sos', **kwargs)). */
async function scipySos(fn: string, args: unknown[], kwargs: Record<string, unknown>): Promise<number[][]> {
  const ref = await scipyReference([
    { id: 'sos', op: 'call', shape: [], params: { fn, args, kwargs: { ...kwargs, output: 'sos' } } },
  ]);
  const flat = ref.get('sos')!.values;
  return Array.from({ length: flat.length / 6 }, (_, s) => Array.from(flat.subarray(6 * s, 6 * s + 6)));
}

async function tscuda(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await execa('node', [join(ROOT, 'bin', 'tscuda.js'), 'filter', ...args], {
    cwd: ROOT,
    reject: false,
    timeout: 120_000,
  });
  if (r.exitCode !== 0) console.log(r.stdout, r.stderr);
  return { code: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

describe.skipIf(reason !== '')(`tscuda filter${reason ? ` (skipped: ${reason})` : ''}`, { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tscuda-filter-gpu-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('band-passes each channel of a stereo WAV as scipy.signal.sosfilt does, into a float WAV of the same rate', async () => {
    const [fs, n] = [16000, 48000];
    // Fresh random PCM: a tone in the band, one below, one above, and noise, different per channel.
    const channel = (): number[] => {
      const phase = Math.random() * 2 * Math.PI;
      return Array.from({ length: n }, (_, i) => {
        const t = i / fs;
        const v =
          0.3 * Math.sin(2 * Math.PI * 1000 * t + phase) +
          0.3 * Math.sin(2 * Math.PI * 60 * t) +
          0.2 * Math.sin(2 * Math.PI * 6000 * t) +
          0.1 * (Math.random() * 2 - 1);
        return Math.round(v * 32767 * 0.9);
      });
    };
    const pcm = [channel(), channel()];
    const w = new wavefile.WaveFile();
    w.fromScratch(2, fs, '16', pcm);
    const input = join(dir, 'stereo.wav');
    writeFileSync(input, w.toBuffer());
    const out = join(dir, 'made', 'band.wav');
    const r = await tscuda(
      input,
      '--band',
      '300',
      '3400',
      '--order',
      '4',
      '--precision',
      'f64',
      '--json',
      '--out',
      out,
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      ok: true,
      channels: 2,
      fs,
      filter: { sections: 4, scipy: 'sosfilt' },
    });
    const written = readWav(out);
    expect(written.fs).toBe(fs);
    expect(written.bitDepth).toBe('32f');
    expect(written.channels).toHaveLength(2);
    const sos = await scipySos('butter', [4, [300, 3400]], { btype: 'bandpass', fs });
    // The samples as the command reads them: 16-bit PCM over 32768.
    const x = Float64Array.from(pcm.flat(), (v) => v / 32768);
    const ref = (
      await scipyReference([
        { id: 'y', op: 'call', input: x, shape: [2, n], params: { fn: 'sosfilt', args: [sos, '$x'] } },
      ])
    ).get('y')!.values;
    for (let c = 0; c < 2; c++) {
      const expected = ref.subarray(c * n, (c + 1) * n);
      // The WAV holds float32: its rounding bounds the agreement.
      expect(relativeL2(written.channels[c]!, expected), `channel ${c}`).toBeLessThan(1e-6);
    }
  });

  it('low-passes a CSV with a zero-phase cheby1 as scipy.signal.sosfiltfilt does (f32 on the GPU)', async () => {
    const n = 20_000;
    const values = Float64Array.from(
      { length: n },
      (_, i) => Math.sin(i / 40) + 0.5 * Math.sin(i / 3) + (Math.random() - 0.5),
    );
    const input = join(dir, 'series.csv');
    // Written with 9 significant digits: the reference reads the same decimals the command reads.
    const text = Array.from(values, (v) => v.toPrecision(9));
    writeFileSync(input, `value\n${text.join('\n')}\n`);
    const x = Float64Array.from(text, Number);
    const out = join(dir, 'low.wav');
    const r = await tscuda(
      input,
      '--fs',
      '1000',
      '--lowpass',
      '20',
      '--design',
      'cheby1',
      '--rp',
      '0.5',
      '--order',
      '5',
      '--zero-phase',
      '--out',
      out,
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/cheby1 lowpass 20 Hz, order 5 \(3 sections\), zero phase \(sosfiltfilt\)/);
    const sos = await scipySos('cheby1', [5, 0.5, 20], { btype: 'lowpass', fs: 1000 });
    const ref = (
      await scipyReference([
        { id: 'y', op: 'call', input: x, shape: [n], params: { fn: 'sosfiltfilt', args: [sos, '$x'] } },
      ])
    ).get('y')!.values;
    const written = readWav(out);
    expect(written.fs).toBe(1000);
    expect(written.channels).toHaveLength(1);
    // float32 samples on the GPU (the filter's arithmetic is float64) and in the WAV.
    expect(relativeL2(written.channels[0]!, ref)).toBeLessThan(1e-5);
  });
});
