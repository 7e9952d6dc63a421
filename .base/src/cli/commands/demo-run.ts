/**
 * The GPU side of `tscuda demo` (loaded by demo.ts only when it runs): measures the PCIe bound,
 * runs the job engine on the synthetic signal with one lane briefly and then with all lanes for
 * `--seconds`, prints the tables and writes the pictures.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { JobEngine } from '../../engine/index.js';
import type { EngineStats, JobResult, JobSpec } from '../../engine/types.js';
import { Device } from '../../runtime/device.js';
import { Event } from '../../runtime/event.js';
import { DeviceBuffer } from '../../runtime/memory/device-buffer.js';
import { HostBuffer } from '../../runtime/memory/host-buffer.js';
import { Stream } from '../../runtime/stream.js';
import { stft } from '../../signal/stft.js';
import { toBandChartSvg } from '../../report/band-chart-svg.js';
import { toChromeTrace } from '../../report/chrome-trace.js';
import { spectrogramPng } from '../../report/spectrogram-png.js';
import { toSvgTimeline } from '../../report/timeline-svg.js';
import { gpuUnavailableLine } from '../gpu-errors.js';
import { ProgressBar } from '../progress.js';
import {
  CHIRP_HZ,
  DEMO_FS,
  type DemoOptions,
  DEMO_PASS_BAND,
  fmt,
  formatTable,
  jobTimelineRecords,
  matchCycles,
  plantedCycles,
  synthesizeDemo,
  type JobTrace,
} from './demo-plan.js';

const PCIE_BYTES = 64 * 2 ** 20;
const JOBS_PER_LANE = 2;
const TRACE_KEEP = 4096;

/** Pinned H2D and D2H GB/s: the median of 4 copies of 64 MiB each way (after one untimed). */
function measurePcie(device: Device): { h2d: number; d2h: number } {
  const stream = new Stream({ device, label: 'demo pcie' });
  const host = HostBuffer.alloc('u8', PCIE_BYTES, { device, label: 'demo pcie host' });
  const dev = DeviceBuffer.alloc('u8', PCIE_BYTES, { stream, label: 'demo pcie device' });
  const t0 = new Event({ device, timing: true, label: 'demo pcie t0' });
  const t1 = new Event({ device, timing: true, label: 'demo pcie t1' });
  try {
    host.array.fill(7);
    const rate = (h2d: boolean): number => {
      const xs: number[] = [];
      for (let r = 0; r < 5; r++) {
        t0.record(stream);
        if (h2d) dev.write(host, { stream });
        else dev.read(host, { stream });
        t1.record(stream);
        t1.synchronize();
        if (r > 0) xs.push(PCIE_BYTES / 1e9 / (Event.elapsedMs(t0, t1) / 1e3));
      }
      xs.sort((a, b) => a - b);
      return (xs[1]! + xs[2]!) / 2;
    };
    return { h2d: rate(true), d2h: rate(false) };
  } finally {
    stream.synchronize();
    for (const r of [t1, t0, dev, host, stream]) r.dispose();
  }
}

interface LoopOutcome {
  jobs: number;
  samples: number;
  seconds: number;
}

/**
 * Closed loop: each input is resubmitted as soon as its previous job settled, until `seconds`
 * have passed; `onJob` sees each finished job.
 */
async function closedLoop(engine: JobEngine, specs: readonly JobSpec[], seconds: number, onJob?: (trace: JobTrace, result: JobResult) => void): Promise<LoopOutcome> {
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  let jobs = 0;
  let samples = 0;
  await Promise.all(
    specs.map(async (spec) => {
      while (performance.now() < until) {
        const submittedMs = performance.now();
        const job = engine.submit(spec);
        const r = await job.result;
        jobs++;
        samples += spec.data.length;
        onJob?.({ id: r.id, lane: r.lane, submittedMs, queuedMs: r.timings.queuedMs, runMs: r.timings.runMs, gpuMs: r.timings.gpuMs, samples: spec.data.length }, r);
      }
    }),
  );
  return { jobs, samples, seconds: (performance.now() - t0) / 1000 };
}

function laneTable(stats: EngineStats): string {
  const rows = [['lane', 'jobs', 'avg ms', 'p99 ms', 'Gsamples/s', 'GB moved', 'GPU busy']];
  for (const l of stats.lanes) {
    rows.push([
      `${l.lane} (GPU ${l.device})`,
      String(l.jobs),
      fmt(l.avgJobMs),
      fmt(l.p99JobMs),
      fmt(l.samplesPerSecond / 1e9),
      fmt(l.bytesMoved / 1e9),
      `${(100 * l.gpuBusyFraction).toFixed(0)}%`,
    ]);
  }
  rows.push([
    'all',
    String(stats.jobs),
    fmt(stats.avgJobMs),
    fmt(stats.p99JobMs),
    fmt(stats.samplesPerSecond / 1e9),
    fmt(stats.bytesMoved / 1e9),
    `${(100 * stats.gpuBusyFraction).toFixed(0)}%`,
  ]);
  return formatTable(rows);
}

/** Runs the demo; resolves with the exit status. */
export async function runDemo(o: DemoOptions): Promise<number> {
  const out = (s: string): void => void process.stdout.write(`${s}\n`);
  let device: Device;
  try {
    if (Device.count() === 0) {
      process.stderr.write('tscuda demo: the NVIDIA driver is installed but no CUDA device is visible; the demo needs a GPU\n');
      return 1;
    }
    device = Device.get(o.device);
  } catch (e) {
    const line = gpuUnavailableLine('demo', e);
    if (line === undefined) throw e;
    process.stderr.write(`${line}\n`);
    return 1;
  }
  const engines: JobEngine[] = [];
  let bar: ProgressBar | undefined;
  try {
    const { batch, length: n, lanes } = o;
    const planted = plantedCycles(n, DEMO_FS);
    const bands = planted.map((p) => p.band);
    const base = synthesizeDemo(batch, n);
    const previewBins = Math.min(256, Math.floor(n / 2) + 1);
    /** A job whose input and results all live in arrays the engine lent (pinned: no host copy either way). */
    const spec = (engine: JobEngine): JobSpec => {
      const data = engine.hostBuffer('f32', batch * n);
      data.set(base);
      const into = {
        filtered: engine.hostBuffer('f32', batch * n),
        spectrum: engine.hostBuffer('f32', batch * previewBins),
        bandPowers: engine.hostBuffer('f64', batch * bands.length),
      };
      return {
        data,
        batch,
        fs: DEMO_FS,
        flags: ['stft', 'cycles'],
        detrend: 'linear',
        window: 'hann',
        passBand: DEMO_PASS_BAND,
        previewBins,
        bands,
        bandWaves: false,
        into,
        label: 'demo',
      };
    };
    out(`tscuda demo on GPU ${device.ordinal}: ${device.name}`);
    out(
      `signal: ${batch} series x ${n} samples per job at ${DEMO_FS} Hz (${fmt(n / DEMO_FS)} s each): DC, trend, a ${CHIRP_HZ[0]}-${CHIRP_HZ[1]} Hz chirp, noise, and ${planted.length} planted cycles`,
    );

    const pcie = measurePcie(device);
    const boundGsamples = Math.min(pcie.h2d, pcie.d2h) / 4;
    out(`PCIe (pinned, measured now): H2D ${fmt(pcie.h2d)} GB/s, D2H ${fmt(pcie.d2h)} GB/s -> bound ${fmt(boundGsamples)} Gsamples/s (4 B per sample each way)`);

    // One lane, briefly: the reference for the speedup.
    const single = new JobEngine({ device, lanes: 1, precision: 'f32', maxQueued: 16, label: 'demo 1 lane' });
    engines.push(single);
    const singleSpecs = [spec(single), spec(single)];
    const warm = await single.submit(singleSpecs[0]!).result; // warm-up: plans, kernels, buffers
    // Kept past close(), which frees the lent arrays.
    const first = { dominant: warm.dominant ?? [], bandPowers: Float64Array.from(warm.bandPowers ?? []) };
    const singleSeconds = Math.min(1.5, Math.max(0.3, o.seconds / 5));
    const one = await closedLoop(single, singleSpecs, singleSeconds);
    await single.close();
    engines.pop();
    const oneRate = one.samples / one.seconds / 1e9;

    const engine = new JobEngine({ device, lanes, precision: 'f32', maxQueued: 4 * lanes * JOBS_PER_LANE, label: 'demo' });
    engines.push(engine);
    const specs = Array.from({ length: lanes * JOBS_PER_LANE }, () => spec(engine));
    await Promise.all(specs.slice(0, lanes).map((s) => engine.submit(s).result)); // warm every lane
    const traces: JobTrace[] = [];
    bar = new ProgressBar({ label: `running ${lanes} lanes`, total: o.seconds, silent: o.quiet });
    const t0 = performance.now();
    let done = 0;
    let doneSamples = 0;
    const tick = setInterval(() => {
      const s = (performance.now() - t0) / 1000;
      bar?.update(s, `${done} jobs, ${fmt(doneSamples / Math.max(s, 1e-3) / 1e9)} Gsamples/s`);
    }, 100);
    let main: LoopOutcome;
    try {
      main = await closedLoop(engine, specs, o.seconds, (trace) => {
        done++;
        doneSamples += trace.samples;
        traces.push(trace);
        if (traces.length > TRACE_KEEP) traces.splice(0, traces.length - TRACE_KEEP / 2);
      });
    } finally {
      clearInterval(tick);
    }
    const rate = main.samples / main.seconds / 1e9;
    bar.finish(`${main.jobs} jobs in ${fmt(main.seconds)} s`);
    const stats = engine.stats();

    out('');
    out(
      formatTable([
        ['throughput', 'value'],
        ['jobs/s', fmt(main.jobs / main.seconds)],
        ['Gsamples/s (input)', fmt(rate)],
        ['% of PCIe bound', `${((100 * rate) / boundGsamples).toFixed(1)}%`],
        [`speedup over 1 lane (${fmt(oneRate)} Gsamples/s)`, `${fmt(rate / oneRate)}x`],
        ['lanes', String(lanes)],
      ]),
    );
    out('');
    out(laneTable(stats));

    const matches = matchCycles(first.dominant, planted, n, DEMO_FS);
    out('');
    out('dominant cycle per series (engine, flag cycles) vs planted:');
    out(
      formatTable([
        ['planted period', 'frequency', 'amplitude', 'series', 'found', 'found amplitude', 'worst |df|'],
        ...matches.map((m) => [
          `${fmt(m.planted.period * 1000)} ms`,
          `${fmt(m.planted.frequency)} Hz`,
          fmt(m.planted.amplitude),
          String(m.series),
          `${m.found}/${m.series}`,
          fmt(m.medianAmplitude),
          `${fmt(m.worstFrequencyError)} Hz`,
        ]),
      ]),
    );
    const allFound = matches.every((m) => m.found === m.series);

    // Pictures: the spectrogram of series 0 (signal.stft), band powers, the lanes' timeline.
    const dir = resolve(o.out);
    mkdirSync(dir, { recursive: true });
    const stream = new Stream({ device, label: 'demo spectrogram' });
    try {
      const x = DeviceBuffer.from('f32', base.subarray(0, n), { stream, label: 'demo series 0' });
      const nperseg = Math.min(1024, n);
      const r = stft(x, { fs: DEMO_FS, nperseg, noverlap: (3 * nperseg) / 4, stream });
      await stream.done();
      const z = r.Zxx.read();
      const mag = new Float32Array(z.length / 2);
      for (let i = 0; i < mag.length; i++) mag[i] = Math.hypot(z[2 * i]!, z[2 * i + 1]!);
      const png = spectrogramPng({ values: mag, frequencies: r.f.length, frames: r.t.length }, { width: 1200, height: 480, dynamicRangeDb: 70 });
      writeFileSync(join(dir, 'spectrogram.png'), png.png);
      r.Zxx.dispose();
      x.dispose();
    } finally {
      stream.dispose();
    }
    const powers = first.bandPowers;
    const series = planted.map((p, k) => {
      const values = bands.map((_, j) => {
        let sum = 0;
        let count = 0;
        for (let s = k; s < batch; s += planted.length) {
          sum += powers[s * bands.length + j]!;
          count++;
        }
        return count > 0 ? sum / count : 0;
      });
      return { name: `series dominated by ${fmt(p.frequency)} Hz`, values };
    });
    writeFileSync(
      join(dir, 'band-powers.svg'),
      toBandChartSvg({
        title: 'band power by planted dominant cycle (engine, flag cycles)',
        unit: 'power (signal units²)',
        bands: planted.map((p) => ({ low: p.band[0], high: p.band[1], highlight: true })),
        series,
      }),
    );
    const records = jobTimelineRecords(traces);
    writeFileSync(join(dir, 'timeline.svg'), toSvgTimeline(records, { title: `tscuda demo: jobs on ${lanes} lanes (last 250 ms; each bar is a job from start to result)` }));
    writeFileSync(join(dir, 'trace.json'), JSON.stringify(toChromeTrace(records, { processName: 'tscuda demo' })));
    writeFileSync(
      join(dir, 'summary.json'),
      JSON.stringify(
        {
          device: device.name,
          batch,
          length: n,
          lanes,
          seconds: main.seconds,
          jobs: main.jobs,
          gsamplesPerSecond: rate,
          pcie: { ...pcie, boundGsamples },
          fractionOfBound: rate / boundGsamples,
          oneLaneGsamplesPerSecond: oneRate,
          speedup: rate / oneRate,
          stats,
          cycles: matches,
        },
        null,
        2,
      ),
    );
    out('');
    out(`wrote ${dir}/: spectrogram.png, band-powers.svg, timeline.svg, trace.json (ui.perfetto.dev), summary.json`);
    if (!allFound) {
      process.stderr.write('tscuda demo: the engine missed a planted cycle (see the table above)\n');
      return 1;
    }
    return 0;
  } catch (e) {
    bar?.abort();
    const line = gpuUnavailableLine('demo', e);
    if (line !== undefined) {
      process.stderr.write(`${line}\n`);
      return 1;
    }
    if (e instanceof Error && (e.name === 'JobError' || e.name === 'EngineLostError')) {
      process.stderr.write(`tscuda demo: ${e.message}\n`);
      return 1;
    }
    throw e;
  } finally {
    for (const e of engines) await e.close().catch(() => {});
  }
}
