/**
 * The GPU side of `tscuda demo` (loaded by demo.ts only when it runs): measures the PCIe bound,
 * runs the job engine on the synthetic signal with one lane briefly and then with all lanes for
 * `--seconds`, prints the tables and writes the pictures.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { JobEngine } from '../../engine/index.js';
import type { EngineStats, JobResult, JobSpec } from '../../engine/types.js';
import { resolvePlacement } from '../../runtime/defaults.js';
import { Device } from '../../runtime/device.js';
import { DeviceBuffer } from '../../runtime/memory/device-buffer.js';
import { PlacementError } from '../../runtime/placement-rules.js';
import { Stream } from '../../runtime/stream.js';
import { stft } from '../../signal/stft.js';
import { toChromeTrace } from '../../report/chrome-trace.js';
import { toSvgTimeline } from '../../report/timeline-svg.js';
import { gpuUnavailableLine } from '../gpu-errors.js';
import { ProgressBar } from '../progress.js';
import { CommandReport } from '../report.js';
import { demoBandPowers, demoSpectrogram } from './demo-figures.js';
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
import { measureLinks, type LinkBounds } from './link-bound.js';

const JOBS_PER_LANE = 2;
const TRACE_KEEP = 4096;

interface LoopOutcome {
  jobs: number;
  samples: number;
  seconds: number;
}

/**
 * Closed loop: each input is resubmitted as soon as its previous job settled, until `seconds`
 * have passed; `onJob` sees each finished job.
 */
async function closedLoop(
  engine: JobEngine,
  specs: readonly JobSpec[],
  seconds: number,
  onJob?: (trace: JobTrace, result: JobResult) => void,
): Promise<LoopOutcome> {
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
        onJob?.(
          {
            id: r.id,
            lane: r.lane,
            submittedMs,
            queuedMs: r.timings.queuedMs,
            runMs: r.timings.runMs,
            gpuMs: r.timings.gpuMs,
            samples: spec.data.length,
          },
          r,
        );
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

/**
 * One row per GPU: its lanes' jobs and rate, its share of the PCIe bound, GPU busy. The job copies
 * in and out at once, so a GPU's bound is its both-directions rate; with several GPUs at work it
 * is the smaller of that (measured alone) and an equal share of what all of them carry at once,
 * since GPUs behind one switch or socket share the host's side of the link.
 */
function deviceTable(stats: EngineStats, links: LinkBounds, names: ReadonlyMap<number, string>): string {
  const rows = [['GPU', 'lanes', 'jobs', 'Gsamples/s', '% of its PCIe bound', 'GPU busy']];
  const share = links.together.both / Math.max(1, links.perDevice.length);
  for (const d of stats.devices) {
    const link = links.perDevice.find((l) => l.device === d.device);
    const bound = link ? Math.min(link.both, share) / 4 : 0;
    rows.push([
      `${d.device} (${names.get(d.device) ?? '?'})`,
      String(d.lanes),
      String(d.jobs),
      fmt(d.samplesPerSecond / 1e9),
      bound > 0 ? `${((100 * d.samplesPerSecond) / 1e9 / bound).toFixed(1)}%` : '-',
      `${(100 * d.gpuBusyFraction).toFixed(0)}%`,
    ]);
  }
  return formatTable(rows);
}

/** Runs the demo; resolves with the exit status. */
export async function runDemo(
  o: DemoOptions,
  report: CommandReport = new CommandReport('demo', o.json),
): Promise<number> {
  const out = (s: string): void => report.say(s);
  let devices: Device[];
  try {
    // The one placement rule: every GPU by default; a device the machine lacks is refused with its count.
    // (demo.ts asked whether the GPU and cuFFT are there before making the output folder.)
    devices = resolvePlacement({ devices: o.devices }, '--devices');
  } catch (e) {
    if (e instanceof PlacementError) return report.fail(e.message, 2, e.name);
    const line = gpuUnavailableLine('demo', e);
    if (line === undefined) throw e;
    return report.fail(line, 1, 'GpuUnavailable');
  }
  const device = devices[0]!;
  const ordinals = devices.map((d) => d.ordinal);
  const names = new Map(devices.map((d) => [d.ordinal, d.name]));
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
    out(
      devices.length === 1
        ? `tscuda demo on GPU ${device.ordinal}: ${device.name}`
        : `tscuda demo on ${devices.length} GPUs: ${devices.map((d) => `${d.ordinal} ${names.get(d.ordinal)}`).join(', ')}`,
    );
    out(
      `signal: ${batch} series x ${n} samples per job at ${DEMO_FS} Hz (${fmt(n / DEMO_FS)} s each): DC, trend, a ${CHIRP_HZ[0]}-${CHIRP_HZ[1]} Hz chirp, noise, and ${planted.length} planted cycles`,
    );

    const links = measureLinks(devices);
    const pcie = links.together;
    // The job moves 4 B per sample in and 4 B out at the same time: its bound is the rate each way
    // with both directions busy (on every GPU at once), below either direction alone.
    const boundGsamples = pcie.both / 4;
    if (devices.length > 1)
      for (const l of links.perDevice)
        out(
          `PCIe GPU ${l.device} alone (pinned, measured now): H2D ${fmt(l.h2d)} GB/s, D2H ${fmt(l.d2h)} GB/s, both at once ${fmt(l.both)} GB/s each way`,
        );
    out(
      `PCIe (pinned, measured now${devices.length > 1 ? `, all ${devices.length} GPUs at once` : ''}): H2D ${fmt(pcie.h2d)} GB/s, D2H ${fmt(pcie.d2h)} GB/s, both at once ${fmt(pcie.both)} GB/s each way -> bound ${fmt(boundGsamples)} Gsamples/s (4 B per sample each way)`,
    );

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

    // `lanes` lanes on each GPU; each job goes to the least-loaded lane of any of them.
    const allLanes = lanes * devices.length;
    const engine = new JobEngine({
      devices: ordinals,
      lanes,
      precision: 'f32',
      maxQueued: 4 * allLanes * JOBS_PER_LANE,
      label: 'demo',
    });
    engines.push(engine);
    const specs = Array.from({ length: allLanes * JOBS_PER_LANE }, () => spec(engine));
    await Promise.all(specs.slice(0, allLanes).map((s) => engine.submit(s).result)); // warm every lane
    const traces: JobTrace[] = [];
    bar = new ProgressBar({ label: `running ${allLanes} lanes`, total: o.seconds, silent: o.quiet });
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
        ['lanes', devices.length > 1 ? `${lanes} per GPU x ${devices.length} GPUs` : String(lanes)],
      ]),
    );
    out('');
    out(deviceTable(stats, links, names));
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
      // Each segment detrended (scipy's detrend='linear'): the DC and the trend would otherwise set the colour scale's top.
      const r = stft(x, { fs: DEMO_FS, nperseg, noverlap: (3 * nperseg) / 4, detrend: 'linear', stream });
      await stream.done();
      const z = r.Zxx.read();
      const mag = new Float32Array(z.length / 2);
      for (let i = 0; i < mag.length; i++) mag[i] = Math.hypot(z[2 * i]!, z[2 * i + 1]!);
      const picture = demoSpectrogram({
        magnitude: mag,
        f: r.f,
        t: r.t,
        length: n,
        nperseg,
        noverlap: (3 * nperseg) / 4,
        planted,
        series: 0,
        device: device.name,
      });
      writeFileSync(join(dir, 'spectrogram.png'), picture.png);
      writeFileSync(join(dir, 'spectrogram.svg'), picture.svg);
      r.Zxx.dispose();
      x.dispose();
    } finally {
      stream.dispose();
    }
    const bandPicture = demoBandPowers(first.bandPowers, batch, planted);
    writeFileSync(join(dir, 'band-powers.svg'), bandPicture.svg);
    writeFileSync(join(dir, 'band-powers.png'), bandPicture.png);
    const records = jobTimelineRecords(traces);
    writeFileSync(
      join(dir, 'timeline.svg'),
      toSvgTimeline(records, {
        title: `tscuda demo: jobs on ${allLanes} lanes (last 250 ms; each bar is a job from start to result)`,
      }),
    );
    writeFileSync(join(dir, 'trace.json'), JSON.stringify(toChromeTrace(records, { processName: 'tscuda demo' })));
    const summary = {
      device: device.name,
      devices: devices.map((d) => ({ ordinal: d.ordinal, name: names.get(d.ordinal) })),
      batch,
      length: n,
      lanes,
      seconds: main.seconds,
      jobs: main.jobs,
      gsamplesPerSecond: rate,
      pcie: { ...pcie, boundGsamples, perDevice: links.perDevice },
      fractionOfBound: rate / boundGsamples,
      oneLaneGsamplesPerSecond: oneRate,
      speedup: rate / oneRate,
      stats,
      cycles: matches,
    };
    writeFileSync(join(dir, 'summary.json'), JSON.stringify(summary, null, 2));
    out('');
    out(
      `wrote ${dir}/: spectrogram.png (and .svg), band-powers.png (and .svg), timeline.svg, trace.json (ui.perfetto.dev), summary.json`,
    );
    if (!allFound) return report.fail('the engine missed a planted cycle (see the table above)', 1, 'CycleMissed');
    report.result({ out: dir, ...summary });
    return 0;
  } catch (e) {
    bar?.abort();
    const line = gpuUnavailableLine('demo', e);
    if (line !== undefined) return report.fail(line, 1, 'GpuUnavailable');
    if (e instanceof Error && (e.name === 'JobError' || e.name === 'EngineLostError'))
      return report.fail(e.message, 1, e.name);
    throw e;
  } finally {
    for (const e of engines) await e.close().catch(() => {});
  }
}
