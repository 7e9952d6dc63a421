/**
 * Runs every product kernel (src/kernels/*.cu) with small valid inputs, for compute-sanitizer
 * (bench/sanitizer/run.sh). The batch kernels are launched directly; the signal kernels through
 * the signal layer's public operations (which choose their valid launch shapes), each in both
 * precisions. Every launch is counted per kernel; the last line says which product kernels never
 * ran, so a kernel added later without a call here shows up instead of passing unchecked.
 *
 *   npx tsx bench/sanitizer/all-kernels.ts          # exit 1 if an operation failed or a kernel never ran
 */
import { existsSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Kernel, DeviceBuffer, Stream } from '../../src/runtime/index.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** Launch counts by kernel name, from a wrapper around Kernel's three launch paths. */
const launched = new Map<string, number>();
const proto = Kernel.prototype as unknown as Record<
  'launch' | 'launchPrepared' | 'launchEx',
  (this: Kernel, ...a: unknown[]) => void
>;
for (const method of ['launch', 'launchPrepared', 'launchEx'] as const) {
  const original = proto[method];
  proto[method] = function (this: Kernel, ...args: unknown[]): void {
    original.apply(this, args);
    launched.set(this.name, (launched.get(this.name) ?? 0) + 1);
  };
}

const failures: string[] = [];
async function step(name: string, run: () => Promise<void> | void): Promise<void> {
  try {
    await run();
    console.log(`ok    ${name}`);
  } catch (e) {
    failures.push(name);
    console.log(`FAIL  ${name}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

const stream = new Stream({ label: 'sanitizer' });
const random = (n: number): Float32Array => Float32Array.from({ length: n }, () => Math.random() * 2 - 1);

// Which product kernels exist: the sources, and the generated signature tables of the launchers.
// private-path: the generated signature tables of every product kernel (the sanitizer runs each one)
const launchers = (await import('../../src/kernels/launchers.generated.js')) as Record<string, unknown>;
const expected = new Map<string, string[]>();
for (const file of readdirSync(join(ROOT, 'src', 'kernels')).filter((f) => f.endsWith('.cu'))) {
  const table = launchers[`${basename(file, '.cu').toUpperCase()}_SIGNATURES`] as Record<string, unknown> | undefined;
  expected.set(file, table ? Object.keys(table) : []);
}

// batch.cu
if (typeof launchers.loadBatchKernels === 'function' && existsSync(join(ROOT, 'kernels', 'build', 'batch.fatbin'))) {
  const k = (
    launchers.loadBatchKernels as () => {
      gradient_f32(
        c: object,
        x: DeviceBuffer<'f32'>,
        g: DeviceBuffer<'f32'>,
        dim: number,
        count: number,
        h: number,
      ): void;
      lerp_f32(
        c: object,
        a: DeviceBuffer<'f32'>,
        b: DeviceBuffer<'f32'>,
        t: DeviceBuffer<'f32'>,
        out: DeviceBuffer<'f32'>,
        dim: number,
        count: number,
      ): void;
      slerp_f32(
        c: object,
        a: DeviceBuffer<'f32'>,
        b: DeviceBuffer<'f32'>,
        t: DeviceBuffer<'f32'>,
        out: DeviceBuffer<'f32'>,
        dim: number,
        count: number,
      ): void;
    }
  )();
  const dim = 7;
  const count = 33;
  const n = dim * count;
  const cfg = { grid: Math.ceil(n / 64), block: 64, stream };
  const x = DeviceBuffer.from('f32', random(n), { stream });
  const a = DeviceBuffer.from('f32', random(n), { stream });
  const b = DeviceBuffer.from('f32', random(n), { stream });
  const t = DeviceBuffer.from(
    'f32',
    Float32Array.from({ length: count }, () => Math.random()),
    { stream },
  );
  const out = DeviceBuffer.alloc('f32', n, { stream });
  await step('batch: gradient_f32', async () => {
    k.gradient_f32(cfg, x, out, dim, count, 0.5);
    await stream.done();
  });
  await step('batch: lerp_f32', async () => {
    k.lerp_f32(cfg, a, b, t, out, dim, count);
    await stream.done();
  });
  await step('batch: slerp_f32', async () => {
    k.slerp_f32({ grid: 1, block: 64, stream }, a, b, t, out, dim, count);
    await stream.done();
  });
}

// signal.cu, through the signal layer (each operation picks valid launch shapes).
if (
  existsSync(join(ROOT, 'kernels', 'build', 'signal.fatbin')) &&
  existsSync(join(ROOT, 'src', 'signal', 'index.ts'))
) {
  const signal = (await import('../../src/signal/index.js')) as unknown as Record<string, (...a: unknown[]) => unknown>;
  const call = (name: string, ...args: unknown[]): unknown => {
    const f = signal[name];
    if (typeof f !== 'function') throw new Error(`tscuda/signal has no ${name}()`);
    return f(...args);
  };
  const batch = 3;
  const length = 256;
  const fs = 100;
  for (const p of ['f32', 'f64'] as const) {
    const host = p === 'f32' ? random(batch * length) : Float64Array.from(random(batch * length));
    const x = DeviceBuffer.from(p, host as never, { stream });
    const series = { batch, length, stream };
    await step(`signal ${p}: detrend linear / constant`, async () => {
      call('detrend', x, 'linear', { batch, stream });
      call('detrend', x, 'constant', { batch, stream });
      await stream.done();
    });
    await step(
      `signal ${p}: detrendWindow, rfft, bandMask, irfft, magnitude, band powers, dominant cycle`,
      async () => {
        const y = DeviceBuffer.alloc(p, batch * length, { stream });
        call('detrendWindow', x, y, { ...series, detrend: 'linear', window: 'hann' });
        const bins = Math.floor(length / 2) + 1;
        const spectrum = DeviceBuffer.alloc(p === 'f32' ? 'c64' : 'c128', batch * bins, { stream });
        call('rfft', y, spectrum, series);
        const mag = DeviceBuffer.alloc(p, batch * bins, { stream });
        call('spectrumMagnitude', spectrum, mag, { ...series, bins });
        const powers = DeviceBuffer.alloc('f64', batch * 2, { stream });
        call('bandPowers', spectrum, powers, {
          ...series,
          fs,
          bands: [
            [1, 10],
            [10, 40],
          ],
        });
        const dominant = DeviceBuffer.alloc('f64', batch * 4, { stream });
        call('dominantCycleDevice', spectrum, dominant, { ...series, fs });
        const bands = DeviceBuffer.alloc(spectrum.dtype, 2 * spectrum.length, { stream });
        call('bandMaskMany', spectrum, bands, {
          ...series,
          fs,
          bands: [
            [1, 10],
            [10, 40],
          ],
        });
        call('bandMask', spectrum, { ...series, fs, band: [2, 30] });
        call('irfft', spectrum, y, series);
        await stream.done();
      },
    );
    await step(`signal ${p}: stft, istft, spectrogram, welch`, async () => {
      const options = { fs, nperseg: 64, noverlap: 48, batch, stream };
      const z = call('stft', x, options) as { Zxx: DeviceBuffer; t: Float64Array };
      call('istft', z.Zxx, { fs, nperseg: 64, noverlap: 48, batch, stream, frames: z.t.length });
      call('spectrogram', x, options);
      call('welch', x, options);
      call('spectrogram', x, { ...options, mode: 'phase' });
      call('welch', x, { ...options, average: 'median' });
      await stream.done();
    });
    // 16-bit samples (issue 26): the i16/f16/bf16 variants of the first kernels, into this precision, and narrow.
    await step(`signal ${p}: 16-bit input (detrendWindow, stft) and narrow`, async () => {
      const counts = Int16Array.from(random(batch * length), (v) => Math.round(v * 8000));
      const bits = Uint16Array.from(random(batch * length), (v) => 0x3c00 + (Math.round(Math.abs(v) * 100) & 0x3ff));
      const inputs = [
        DeviceBuffer.from('i16', counts, { stream }),
        DeviceBuffer.from('f16', bits, { stream }),
        DeviceBuffer.from('bf16', bits, { stream }),
      ];
      const y = DeviceBuffer.alloc(p, batch * length, { stream });
      for (const x16 of inputs) {
        call('detrendWindow', x16, y, { ...series, detrend: 'linear', window: 'hann' });
        call('stft', x16, { fs, nperseg: 64, noverlap: 48, batch, stream, precision: p });
      }
      call('narrow', y, DeviceBuffer.alloc('f16', batch * length, { stream }), { stream });
      call('narrow', y, DeviceBuffer.alloc('bf16', batch * length, { stream }), { stream });
      await stream.done();
    });
    await step(`signal ${p}: cwt complex, power, bands`, async () => {
      const freqs = [2, 5, 11];
      call('cwt', x, { fs, freqs, output: 'complex', batch, stream });
      call('cwt', x, { fs, freqs, output: 'power', batch, stream });
      call('cwt', x, {
        fs,
        freqs,
        output: 'power',
        bands: [
          [1, 6],
          [6, 20],
        ],
        batch,
        stream,
      });
      await stream.done();
    });
    // sos.cu: shared memory and barriers (racecheck, synccheck), a last tile and a last chunk both partial.
    await step(`signal ${p}: sosfilt in parallel along time, zi and zf`, async () => {
      const long = 3 * 4096 + 5;
      const samples = random(batch * long);
      const xl = DeviceBuffer.from(p, (p === 'f32' ? samples : Float64Array.from(samples)) as never, { stream });
      const sos = call('butter', 4, [0.1, 0.3], { btype: 'bandpass' }) as number[][];
      const state = random(sos.length * batch * 2);
      const zi = DeviceBuffer.from(p, (p === 'f32' ? state : Float64Array.from(state)) as never, { stream });
      call('sosfilt', sos, xl, { batch, stream, zi, zf: zi, output: xl });
      await stream.done();
    });
  }
}

// Coverage: every kernel of every product source must have run at least once.
const missing: string[] = [];
for (const [file, names] of expected) {
  const ran = names.filter((n) => launched.has(n));
  console.log(`${file}: ${ran.length}/${names.length} kernels ran`);
  for (const n of names) if (!launched.has(n)) missing.push(`${file}:${n}`);
}
console.log(
  `all-kernels: ${launched.size} kernels, ${[...launched.values()].reduce((a, b) => a + b, 0)} launches; ${failures.length} failed operation(s)${failures.length ? ` (${failures.join('; ')})` : ''}; never ran: ${missing.length ? missing.join(', ') : 'none'}`,
);
process.exitCode = failures.length || missing.length ? 1 : 0;
