/**
 * graph_replay_per_kernel_us: 100 empty kernels captured from a stream into a tscuda Graph,
 * instantiated and uploaded; host time of 200 launches + one synchronisation, per kernel
 * (bench.cu's m_graph_replay_per_kernel). Graph comes from issue 4's work: until it is in the
 * checkout (or its API is not the one expected) the metric is reported not measured.
 */
import { Stream } from '../../src/runtime/stream.js';
import { summarize } from '../harness/stats.js';
import { disposeUnknown, findExport, method } from './optional.js';
import { disposeAll, NotMeasured, type BenchContext, type MeasuredMetric } from './types.js';

export const GRAPH_KERNELS = 100;
export const GRAPH_LAUNCHES = 200;

const EXPECTED = 'expected Graph.capture(stream, fn) (or stream.beginCapture()/endCapture()) giving a graph with instantiate() and an executable with launch(stream)';

export const GRAPH_FILES = ['src/runtime/graph.ts', 'src/runtime/orchestration/graph.ts', 'src/runtime/orchestration/index.ts', 'src/runtime/index.ts'];

function isThenable(x: unknown): x is PromiseLike<unknown> {
  return typeof x === 'object' && x !== null && typeof (x as { then?: unknown }).then === 'function';
}

export async function graphReplay(ctx: BenchContext): Promise<MeasuredMetric> {
  const { value: Graph, file } = await findExport(ctx.root, 'Graph', GRAPH_FILES);
  const s = new Stream({ label: 'bench graph' });
  const k = ctx.kernels.empty;
  const cfg = { grid: 1, block: 1, stream: s };
  let captured: unknown;
  let exec: unknown;
  try {
    k.launch(cfg); // the kernel is loaded before capture starts
    s.synchronize();
    const body = (): void => {
      for (let i = 0; i < GRAPH_KERNELS; i++) k.launch(cfg);
    };
    const capture = method(Graph, 'capture');
    const begin = method(s, 'beginCapture');
    const end = method(s, 'endCapture');
    try {
      if (capture) captured = await capture(s, body);
      else if (begin && end) {
        begin();
        body();
        captured = await end();
      } else throw new NotMeasured(`Graph from ${file}: no capture API; ${EXPECTED}`);
      const instantiate = method(captured, 'instantiate');
      exec = instantiate ? await instantiate() : captured;
    } catch (e) {
      if (e instanceof NotMeasured) throw e;
      throw new NotMeasured(`Graph from ${file}: capture/instantiate failed (${(e as Error).message}); ${EXPECTED}`);
    }
    const launch = method(exec, 'launch');
    if (!launch) throw new NotMeasured(`Graph from ${file}: the instantiated graph has no launch(); ${EXPECTED}`);
    const upload = method(exec, 'upload');
    if (upload) await upload(s);
    let asyncLaunch = false;
    const one = (): number => {
      const t0 = performance.now();
      for (let i = 0; i < GRAPH_LAUNCHES; i++) {
        const r = launch(s);
        if (isThenable(r)) asyncLaunch = true;
      }
      s.synchronize();
      return ((performance.now() - t0) * 1000) / (GRAPH_LAUNCHES * GRAPH_KERNELS);
    };
    one();
    const xs: number[] = [];
    for (let r = 0; r < ctx.timing.reps; r++) xs.push(one());
    const notes = [`${GRAPH_KERNELS} empty kernels captured with Graph (${file}), ${GRAPH_LAUNCHES} launches per sample`];
    if (asyncLaunch) notes.push('launch() returned a promise; it was not awaited (the stream was synchronised)');
    return { pass: summarize(xs), notes };
  } finally {
    disposeUnknown(exec);
    if (captured !== exec) disposeUnknown(captured);
    disposeAll(s);
  }
}
