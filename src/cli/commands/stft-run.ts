/**
 * The GPU side of `tscuda stft` (loaded by stft.ts once the options and the input are good):
 * signal.stft for the spectrogram, one job engine job (flag cycles over the whole signal,
 * rectangular window, no detrend: an FFT-mask filter) for the band powers, the band-passed
 * waves and the dominant cycle; then the files.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { DEFAULT_MAX_RESULT_BYTES, JobEngine } from '../../engine/index.js';
import type { JobResult } from '../../engine/types.js';
import { resolvePlacement } from '../../runtime/defaults.js';
import { Device } from '../../runtime/device.js';
import { DeviceBuffer } from '../../runtime/memory/device-buffer.js';
import { PlacementError } from '../../runtime/placement-rules.js';
import { Stream } from '../../runtime/stream.js';
import { frameSpan, framesGeometry, spectralFrequencies, spectralTimes } from '../../signal/geometry.js';
import type { ComplexBuffer } from '../../signal/primitives.js';
import { stftWithGeometry } from '../../signal/stft.js';
import { bandLabel } from '../../report/band-chart-svg.js';
import { svgToPng } from '../../report/rasterize.js';
import { spectrogramSvg } from '../../report/spectrogram-svg.js';
import { gpuUnavailableLine } from '../gpu-errors.js';
import { CommandReport } from '../report.js';
import { ProgressBar } from '../progress.js';
import { encodeWavFloat32, raw16Value } from '../signal-input.js';
import type { DType } from '../../runtime/memory/dtype.js';
import type { SignalInput } from '../../signal/samples.js';
import { extendSignal, frameChunks, type StftPlan } from './stft-plan.js';

/** Signals at least this long get a progress bar (unless --quiet). */
const PROGRESS_FROM_SAMPLES = 1 << 20;

/** 'band-300-3400Hz.wav', with decimals kept where the edges have them. */
export function bandWavName(lo: number, hi: number): string {
  const f = (v: number): string => Number(v.toPrecision(6)).toString().replace('.', 'p');
  return `band-${f(lo)}-${f(hi)}Hz.wav`;
}

/** Runs the STFT and writes the outputs; resolves with the exit status. */
export async function runStft(
  plan: StftPlan,
  report: CommandReport = new CommandReport('stft', plan.options.json),
): Promise<number> {
  const { options: o, input, geometry: g, bands } = plan;
  const n = input.length;
  const say = (s: string): void => report.say(s);
  const bar = new ProgressBar({ label: `stft ${o.file}`, total: 4, silent: o.quiet || n < PROGRESS_FROM_SAMPLES });
  let devices: Device[];
  try {
    // The one placement rule: every GPU by default; a device the machine lacks is refused with its count.
    // (stft.ts asked whether the GPU and cuFFT are there before making the output folder.)
    devices = resolvePlacement({ devices: o.devices }, '--devices');
  } catch (e) {
    if (e instanceof PlacementError) return report.fail(e.message, 2, e.name);
    const line = gpuUnavailableLine('stft', e);
    if (line === undefined) throw e;
    return report.fail(line, 1, 'GpuUnavailable');
  }
  if (input.format === 'wav' && input.fsSource === 'option')
    report.note(`--fs ${input.fs} replaces the WAV header's sampling rate`);
  if (input.fsSource === 'default')
    report.note('no --fs given for a raw/CSV signal: fs = 1 (frequencies in cycles per sample)');
  if (plan.dtypeNote) report.note(plan.dtypeNote);
  const raw = input.raw16;
  const dir = resolve(o.out);
  let engine: JobEngine | undefined;
  const device = devices[0]!;
  // One stream per GPU: the spectrogram's chunks spread over them.
  const streams = devices.map((d) => new Stream({ device: d, label: `tscuda stft GPU ${d.ordinal}` }));
  const perDevice = devices.map((d) => ({ device: d.ordinal, name: d.name, chunks: 0, frames: 0, seconds: 0 }));
  try {
    // 16-bit samples go to the GPU as they are (2 bytes each) and are converted by the first kernel; others as floats.
    const data = raw
      ? raw.data
      : o.precision === 'f64'
        ? Float64Array.from(input.samples)
        : Float32Array.from(input.samples);
    const sixteen = raw ? { scale: raw.scale, precision: o.precision } : {};
    // The spectrogram, chunk by chunk of whole frames of the extended signal: each chunk is the
    // geometry's stft over exactly its frames (framesGeometry: no boundary or padding of its own),
    // so the chunks put together equal the one-shot result, and device memory stays bounded on long signals.
    const ext = extendSignal(data, g);
    const chunks = frameChunks(g, o.chunkFrames);
    const most = Math.min(o.chunkFrames, g.frames);
    const freqs = g.freqs;
    const frames = g.frames;
    const mag = new Float32Array(freqs * frames);
    let next = 0;
    let finished = 0;
    // Each GPU takes the next chunk once its last one is back: the split balances itself over GPUs of different speeds or links.
    const spectrogramOn = async (stream: Stream, mine: (typeof perDevice)[number]): Promise<void> => {
      const x = DeviceBuffer.alloc(raw ? raw.dtype : o.precision, frameSpan(g, 0, most).length, {
        stream,
        label: 'stft input chunk',
      }) as SignalInput;
      const zxx = DeviceBuffer.alloc(o.precision === 'f64' ? 'c128' : 'c64', freqs * most, {
        stream,
        label: 'stft Zxx chunk',
      }) as ComplexBuffer;
      const zHost = new (o.precision === 'f64' ? Float64Array : Float32Array)(2 * freqs * most);
      try {
        for (let c = next++; c < chunks.length; c = next++) {
          const { start, count, inputStart, inputLength } = chunks[c]!;
          const t0 = performance.now();
          const xin = (x as DeviceBuffer<DType>).view(0, inputLength) as SignalInput;
          (xin as DeviceBuffer<DType>).write(ext.subarray(inputStart, inputStart + inputLength) as never, { stream });
          const out = zxx.view(0, freqs * count) as ComplexBuffer;
          stftWithGeometry(xin, framesGeometry(g, count), { ...sixteen, scaling: o.scaling, stream, output: out });
          const z = zHost.subarray(0, 2 * freqs * count);
          (out as DeviceBuffer<'c64' | 'c128'>).read(z as never, { stream });
          await stream.done();
          for (let f = 0; f < freqs; f++) {
            const row = f * frames + start;
            for (let t = 0; t < count; t++) {
              const i = 2 * (f * count + t);
              mag[row + t] = Math.hypot(z[i]!, z[i + 1]!);
            }
          }
          mine.chunks++;
          mine.frames += count;
          mine.seconds += (performance.now() - t0) / 1000;
          finished++;
          bar.update((finished / chunks.length) * 2, `spectrogram ${finished}/${chunks.length}`);
        }
      } finally {
        zxx.dispose();
        x.dispose();
      }
    };
    // Every GPU's loop settles before the buffers and streams go (a failure stops the others at their next chunk).
    const outcomes = await Promise.allSettled(
      streams.map((stream, k) =>
        spectrogramOn(stream, perDevice[k]!).catch((e: unknown) => {
          next = chunks.length;
          throw e;
        }),
      ),
    );
    const failed = outcomes.find((o) => o.status === 'rejected');
    if (failed) throw failed.reason;
    const r = { f: spectralFrequencies(g), t: spectralTimes(g) };
    bar.update(2, 'picture');
    mkdirSync(dir, { recursive: true });
    const windowName = Array.isArray(g.windowSpec) ? g.windowSpec.join(':') : String(g.windowSpec);
    const png = spectrogramSvg(
      { values: mag, frequencies: r.f.length, frames: r.t.length, f: r.f, t: r.t },
      {
        title: `spectrogram of ${basename(o.file)}`,
        subtitle: `${n} samples at ${input.fs} Hz; ${windowName} window, nperseg ${g.nperseg}, noverlap ${g.noverlap}, nfft ${g.nfft}, detrend ${g.detrend === false ? 'none' : String(g.detrend)}, scaling ${o.scaling} (tscuda stft)`,
        dynamicRangeDb: o.dbRange,
      },
    );
    writeFileSync(join(dir, 'spectrogram.png'), svgToPng(png.svg));
    writeFileSync(join(dir, 'spectrogram.svg'), png.svg);
    const files = ['spectrogram.png', 'spectrogram.svg'];
    if (o.saveMagnitude) {
      writeFileSync(join(dir, 'stft-magnitude.f32'), new Uint8Array(mag.buffer, mag.byteOffset, mag.byteLength));
      files.push('stft-magnitude.f32');
    }

    bar.update(2.5, 'band powers');
    // The whole signal is one series: give the lane room for it (input, spectrum, band waves), 1 GiB at least.
    const element = o.precision === 'f64' ? 8 : 4; // per sample of the lane's float buffers (16-bit input needs less)
    const laneMemoryBytes = Math.max(
      2 ** 30,
      Math.ceil(1.5 * element * n * (4 + (plan.userBands ? 2 * bands.length : 0))),
    );
    // The file is already in memory: its band waves may take a multiple of it (the engine's default bound is 1 GiB).
    const maxResultBytes = Math.max(DEFAULT_MAX_RESULT_BYTES, element * n * bands.length + 2 ** 20);
    engine = new JobEngine({
      device,
      lanes: 1,
      precision: o.precision,
      maxQueued: 4,
      laneMemoryBytes,
      maxResultBytes,
      label: 'tscuda stft',
    });
    const result: JobResult = await engine.submit({
      data,
      ...(raw ? { dtype: raw.dtype, scale: raw.scale } : {}),
      batch: 1,
      fs: input.fs,
      flags: ['cycles'],
      detrend: false,
      window: 'boxcar',
      bands,
      bandWaves: plan.userBands,
      label: o.file,
    }).result;
    let total = 0;
    if (raw)
      for (let i = 0; i < n; i++) total += raw16Value(raw, i) ** 2; // one sample at a time: no widened copy
    else for (let i = 0; i < n; i++) total += input.samples[i]! * input.samples[i]!;
    total /= n;
    const powers = result.bandPowers ?? new Float64Array(bands.length);
    const rows = bands.map(([lo, hi], j) => ({
      band: bandLabel(lo, hi),
      lowHz: lo,
      highHz: hi,
      power: powers[j]!,
      relative: total > 0 ? powers[j]! / total : 0,
    }));
    const dominant = result.dominant?.[0];

    bar.update(3, 'writing');
    const csv =
      [
        'band,low_hz,high_hz,power,relative_power',
        ...rows.map((b) => `"${b.band}",${b.lowHz},${b.highHz},${b.power},${b.relative}`),
      ].join('\n') + '\n';
    writeFileSync(join(dir, 'bands.csv'), csv);
    writeFileSync(
      join(dir, 'bands.json'),
      JSON.stringify(
        {
          file: o.file,
          fs: input.fs,
          samples: n,
          channels: input.channelNote,
          totalPower: total,
          bands: rows,
          dominant: dominant ?? null,
        },
        null,
        2,
      ) + '\n',
    );
    files.push('bands.csv', 'bands.json');
    if (plan.userBands) {
      const waves = result.bandWaves;
      if (!waves || waves.length !== bands.length * n)
        throw new Error(
          `the engine returned ${waves ? waves.length : 'no'} band-wave samples, expected ${bands.length} x ${n}`,
        );
      const rate = Math.max(1, Math.round(input.fs));
      if (rate !== input.fs)
        report.note(`WAV files need a whole sampling rate: band WAVs are written at ${rate} Hz (fs ${input.fs})`);
      bands.forEach(([lo, hi], j) => {
        const name = bandWavName(lo, hi);
        writeFileSync(join(dir, name), encodeWavFloat32(waves.subarray(j * n, (j + 1) * n), rate));
        files.push(name);
      });
    }
    const summary = {
      file: o.file,
      format: input.format,
      encoding: input.encoding ?? null,
      channels: input.channelNote,
      fs: input.fs,
      fsSource: input.fsSource,
      samples: n,
      precision: o.precision,
      samplesToGpu: raw ? `${raw.dtype} (scale ${raw.scale})` : o.precision,
      stft: {
        nperseg: g.nperseg,
        noverlap: g.noverlap,
        nfft: g.nfft,
        window: g.windowSpec,
        detrend: g.detrend,
        boundary: g.boundary,
        padded: o.padded,
        scaling: o.scaling,
        freqs: r.f.length,
        frames: r.t.length,
        fMaxHz: r.f[r.f.length - 1] ?? 0,
        tFirstS: r.t[0] ?? 0,
        tLastS: r.t[r.t.length - 1] ?? 0,
        magnitudeLayout: 'freqs x frames, frequency-major, float32 little-endian',
      },
      image: { width: png.width, height: png.height, peakDb: png.peakDb, floorDb: png.floorDb, colormap: 'viridis' },
      bands: rows,
      dominant: dominant ?? null,
      devices: perDevice,
      files: [...files, 'summary.json'],
    };
    writeFileSync(join(dir, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
    bar.finish(`${files.length + 1} files`);

    say(
      `${o.file}: ${n} samples at ${input.fs} Hz (${input.format}${input.encoding ? ` ${input.encoding}` : ''}, ${input.channelNote})`,
    );
    say(
      `stft: nperseg ${g.nperseg}, noverlap ${g.noverlap}, nfft ${g.nfft}, window ${Array.isArray(g.windowSpec) ? g.windowSpec.join(':') : String(g.windowSpec)}, ${r.f.length} frequencies x ${r.t.length} frames`,
    );
    for (const b of rows)
      say(
        `  ${b.band.padEnd(24)} power ${b.power.toPrecision(4).padStart(11)}  ${(100 * b.relative).toFixed(2).padStart(6)}%`,
      );
    if (devices.length > 1)
      for (const d of perDevice)
        say(`  GPU ${d.device} (${d.name}): ${d.chunks} chunks, ${d.frames} frames, ${d.seconds.toFixed(3)} s`);
    if (dominant)
      say(
        `dominant cycle: ${dominant.frequency.toPrecision(6)} Hz (period ${dominant.period.toPrecision(4)} s), amplitude ${dominant.amplitude.toPrecision(4)}`,
      );
    say(`wrote ${dir}/: ${[...files, 'summary.json'].join(', ')}`);
    report.result({ out: dir, ...summary });
    return 0;
  } catch (e) {
    bar.abort();
    const line = gpuUnavailableLine('stft', e);
    if (line !== undefined) return report.fail(line, 1, 'GpuUnavailable');
    if (
      e instanceof Error &&
      (e.name === 'JobError' ||
        e.name === 'JobValidationError' ||
        e.name === 'EngineLostError' ||
        e instanceof RangeError)
    )
      return report.fail(e.message, 1, e.name);
    throw e;
  } finally {
    await engine?.close().catch(() => {});
    for (const stream of streams) stream.dispose();
  }
}
