/**
 * graph_replay_per_kernel_us: 100 empty kernels captured from a stream into a tscuda Graph,
 * instantiated; host time of 200 launches + one synchronisation, per kernel
 * (bench.cu's m_graph_replay_per_kernel).
 */
import { Graph, type GraphExec, Stream } from '../../src/runtime/index.js';
import { summarize } from '../harness/stats.js';
import { disposeAll, type BenchContext, type MeasuredMetric } from './types.js';

export const GRAPH_KERNELS = 100;
export const GRAPH_LAUNCHES = 200;

export async function graphReplay(ctx: BenchContext): Promise<MeasuredMetric> {
  const s = new Stream({ label: 'bench graph' });
  const k = ctx.kernels.empty;
  const cfg = { grid: 1, block: 1, stream: s };
  let graph: Graph | undefined;
  let exec: GraphExec | undefined;
  try {
    k.launch(cfg); // the kernel is loaded before capture starts
    await s.done();
    graph = Graph.capture(s, () => {
      for (let i = 0; i < GRAPH_KERNELS; i++) k.launch(cfg);
    });
    exec = graph.instantiate();
    const launch = exec.launch.bind(exec);
    const one = (): number => {
      const t0 = performance.now();
      for (let i = 0; i < GRAPH_LAUNCHES; i++) launch(s);
      s.synchronize();
      return ((performance.now() - t0) * 1000) / (GRAPH_LAUNCHES * GRAPH_KERNELS);
    };
    one();
    const xs: number[] = [];
    for (let r = 0; r < ctx.timing.reps; r++) xs.push(one());
    return {
      pass: summarize(xs),
      notes: [
        `${GRAPH_KERNELS} empty kernels captured with Graph.capture (src/runtime/graph.ts), ${GRAPH_LAUNCHES} launches per sample`,
      ],
    };
  } finally {
    disposeAll(s, graph, exec);
  }
}
