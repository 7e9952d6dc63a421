/**
 * The shared runner of the signal-ops rows (issue 41): each row becomes one tscuda benchmark of the
 * harness (bench/tscuda/runner.ts), so `--only` selects rows one by one. For a row it uploads the
 * shared input, lets the row set up, poisons the output (NaN), runs once and checks the output
 * against the row's float64 CPU reference (a wrong output is "not measured", never fast), hands the
 * job and the checked output to the peers (data.ts), then times the call with CUDA events on data
 * already on the device: `--reps` calls after WARMUP untimed ones, the median reported, and what the
 * HBM bound implies (bound.ts) against the bandwidth measured in the same run (hbm.ts).
 */
import { DeviceBuffer, Event, Stream } from '../../src/runtime/index.js';
import { signalWorkspace } from '../../src/signal/index.js';
import { summarize } from '../harness/stats.js';
import { firstTime, repeated } from '../tscuda/timing.js';
import {
  disposeAll,
  NotMeasured,
  type BenchContext,
  type MeasuredMetric,
  type TscudaBenchmark,
  type UnmeasuredMetric,
} from '../tscuda/types.js';
import { hbmBound, hbmNote } from './bound.js';
import { INPUT_FILE, writeDataFile, writeManifest, type RowManifest } from './data.js';
import { measuredHbmGBps } from './hbm.js';
import { SIGNAL_OPS_BATCH, SIGNAL_OPS_LENGTH, signalOpsInput } from './input.js';
import { rowMetricNames, type PreparedRow, type SignalOpRow } from './row.js';

/** Untimed calls before the timed ones: plans, scratch, tables and clocks settle. */
export const WARMUP = 3;
/** A float32 quiet NaN: what the output holds before the checked call, so an output never written fails the check. */
const NAN_BITS = 0x7fc00000;

let sharedInput: Float32Array | undefined;

/** The shared input on the host, generated once per process (about half a second for 16M samples). */
function hostInput(): Float32Array {
  sharedInput ??= signalOpsInput(SIGNAL_OPS_BATCH, SIGNAL_OPS_LENGTH);
  return sharedInput;
}

/** The output read back as float32 values (complex64: re, im interleaved). */
function readBack(output: PreparedRow['output']): Float32Array {
  return output.read();
}

type RowResults = Partial<Record<string, MeasuredMetric | UnmeasuredMetric>>;

async function runRow(ctx: BenchContext, row: SignalOpRow): Promise<RowResults> {
  const host = hostInput();
  const batch = SIGNAL_OPS_BATCH;
  const length = SIGNAL_OPS_LENGTH;
  writeDataFile(INPUT_FILE, host, true);
  const stream = new Stream({ label: `bench signal ${row.id}` });
  const x = DeviceBuffer.alloc('f32', batch * length, { stream, label: `bench signal ${row.id} x` });
  const t0 = new Event({ timing: true, label: `bench signal ${row.id} t0` });
  const t1 = new Event({ timing: true, label: `bench signal ${row.id} t1` });
  let prepared: PreparedRow | undefined;
  const manifest: RowManifest = {
    id: row.id,
    metric: row.metrics.time.name,
    job: row.job,
    batch,
    length,
    input: INPUT_FILE,
    output: null,
    outputDtype: 'f32',
    outputShape: [batch, length],
    tolerance: row.peerTolerance,
    params: {},
  };
  try {
    x.write(host, { stream });
    const p = row.prepare({
      batch,
      length,
      x,
      host,
      stream,
      writeData: (name, bytes) => writeDataFile(`${row.id}-${name}`, bytes),
    });
    prepared = p;
    Object.assign(manifest, { outputDtype: p.output.dtype, outputShape: p.outputShape, params: p.peerJob });

    p.output.memset(NAN_BITS, { stream, width: 32 });
    p.run();
    stream.synchronize();
    const got = readBack(p.output);
    const check = p.check(got);
    if (!(check.error <= check.tolerance))
      throw new NotMeasured(
        `output differs from the float64 reference: relative L2 ${check.error.toExponential(2)} > ${check.tolerance} (${check.what})`,
      );
    manifest.output = writeDataFile(`${row.id}-out.bin`, got);
    ctx.log(`[tscuda] ${row.id}: checked, relative L2 ${check.error.toExponential(2)} (${check.what})`);

    const samples: number[] = [];
    const pass = repeated(ctx.timing, WARMUP, () => {
      t0.record(stream);
      p.run();
      t1.record(stream);
      t1.synchronize();
      const ms = Event.elapsedMs(t0, t1);
      samples.push(ms);
      return ms;
    });
    const timed = samples.slice(WARMUP);
    const notes = firstTime(`signal ${row.id}`)
      ? [
          `${row.job}; device-resident data, CUDA events around one call on its stream, median of ${timed.length} after ${WARMUP} warm-up calls, output preallocated`,
          `checked before timing: relative L2 ${check.error.toExponential(2)} (${check.what})`,
          `bound: ${row.bound.why}`,
        ]
      : [];
    // The row's time stands without the HBM figure: a failed copy measurement costs only the fraction.
    let hbm: number;
    try {
      hbm = measuredHbmGBps(ctx.log);
    } catch (e) {
      const why = `the HBM bandwidth was not measured: ${e instanceof Error ? e.message : String(e)}`;
      const out: RowResults = { [row.metrics.time.name]: { pass, notes: [...notes, why] } };
      if (row.metrics.fraction) out[row.metrics.fraction.name] = { notMeasured: why };
      return out;
    }
    const bound = hbmBound(p.traffic, pass.median, hbm);
    const out: RowResults = { [row.metrics.time.name]: { pass, notes: [...notes, hbmNote(bound, hbm)] } };
    if (row.metrics.fraction)
      out[row.metrics.fraction.name] = {
        pass: summarize(timed.map((ms) => hbmBound(p.traffic, ms, hbm).fraction)),
      };
    return out;
  } finally {
    writeManifest(manifest);
    // After a sticky error every call fails: let the row's own error through instead.
    if (!ctx.context.stickyError) stream.synchronize();
    // The workspace keeps scratch per stream (FFT rows, the scan's states): freed before the stream goes.
    signalWorkspace.releaseStream(stream);
    disposeAll(stream, x, t0, t1, prepared);
  }
}

/** One tscuda benchmark per row, producing the row's metrics. */
export function rowBenchmark(row: SignalOpRow): TscudaBenchmark {
  return { names: rowMetricNames(row), run: (ctx) => runRow(ctx, row) };
}
