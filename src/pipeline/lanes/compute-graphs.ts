/**
 * A lane's compute graphs: work whose compute repeats the same shape replays it from a CUDA graph.
 * What a whole-series job of the job engine enqueues on its lane's stream between its input's
 * arrival and its copies back (detrend + window, the FFTs, masks, magnitudes, band powers, the
 * dominant cycle, 16-bit rounding) is a dozen driver calls, each behind argument checks, on every
 * job: at 4,000-5,000 jobs a second (16-bit samples) the one JavaScript thread, not the PCIe link,
 * set the pace (bench/probe/multi-gpu-limit.ts). The second time a slot of a lane meets the same
 * key, that work is captured into a CUDA graph (stream capture); from then on one cuGraphLaunch
 * replays it.
 *
 * A graph holds raw addresses: of the lane's buffers and of the signal layer's scratch, tables,
 * kernels and plans. The caller names them all in `generation` (a count that changes whenever any
 * of that memory may have gone away) and the work's every parameter in `key`; a new generation
 * retires every graph (destroyed once the stream has passed the work that may still replay them).
 * A capture that fails (an operation a capture cannot hold) runs the work as it is and is not
 * tried again for that key; a lane holds at most `maxGraphs`, and work beyond runs as it is.
 */
import { isStickyError } from '../../ffi/sticky.js';
import { Event } from '../../runtime/event.js';
import { Graph } from '../../runtime/graph.js';
import type { Stream } from '../../runtime/stream.js';

/** Captured work, ready to replay. */
export interface CapturedWork {
  launch(stream: Stream): void;
  dispose(): void;
}

/** Captures `enqueue` (run once, synchronously, while `stream` captures) into replayable work. */
export type CaptureWork = (stream: Stream, enqueue: () => void, label: string) => CapturedWork;

/** A point on the stream: done once the stream has passed everything enqueued before it. */
export interface StreamMarker {
  readonly done: boolean;
  dispose(): void;
}

/** How one piece of work's compute went: as it is, captured (and replayed once), or replayed. */
export type ComputeMode = 'eager' | 'captured' | 'replayed';

/** The runtime's stream capture (thread-local mode: no other thread's calls are restricted). */
export const captureWithRuntime: CaptureWork = (stream, enqueue, label) => {
  const graph = Graph.capture(stream, enqueue, { mode: 'threadLocal', label });
  try {
    const exec = graph.instantiate({ label });
    return {
      launch: (s) => exec.launch(s),
      dispose: () => {
        exec.dispose();
        graph.dispose();
      },
    };
  } catch (e) {
    graph.dispose();
    throw e;
  }
};

/** An event recorded on `stream` now. */
export function markStream(stream: Stream, label: string): StreamMarker {
  const event = new Event({ context: stream.context, label });
  try {
    event.record(stream);
  } catch (e) {
    event.dispose();
    throw e;
  }
  return {
    get done() {
      return event.query();
    },
    dispose: () => event.dispose(),
  };
}

/** Options of ComputeGraphs (a Lane passes none; tests pass fakes). */
export interface ComputeGraphsOptions {
  /** Graphs one lane keeps (default 16). */
  maxGraphs?: number | undefined;
  capture?: CaptureWork | undefined;
  mark?: ((stream: Stream, label: string) => StreamMarker) | undefined;
}

/** Keys remembered as seen once (or as failed to capture) before the sets are cleared. */
const MAX_REMEMBERED = 1024;

/** The compute graphs of one lane's stream, by key. */
export class ComputeGraphs {
  readonly #stream: Stream;
  readonly #label: string;
  readonly #max: number;
  readonly #capture: CaptureWork;
  readonly #mark: (stream: Stream, label: string) => StreamMarker;
  readonly #graphs = new Map<string, CapturedWork>();
  readonly #seen = new Set<string>();
  readonly #failed = new Set<string>();
  #retired: { works: CapturedWork[]; marker: StreamMarker }[] = [];
  #generation = -1;
  /** Runs by how their compute went (for stats and tests). */
  readonly counts: Record<ComputeMode, number> = { eager: 0, captured: 0, replayed: 0 };

  constructor(stream: Stream, label: string, options: ComputeGraphsOptions = {}) {
    this.#stream = stream;
    this.#label = label;
    this.#max = options.maxGraphs ?? 16;
    this.#capture = options.capture ?? captureWithRuntime;
    this.#mark = options.mark ?? markStream;
  }

  /** Graphs kept now (retired ones not counted). */
  get size(): number {
    return this.#graphs.size;
  }

  /**
   * Enqueues `compute` (synchronous, enqueue-only work on the lane's stream that allocates nothing)
   * for work whose parameters are `key` and whose memory is `generation`: replays its graph, or
   * captures one the second time `key` comes, or runs it as it is.
   */
  run(key: string, generation: number, compute: () => void): ComputeMode {
    if (this.#retired.length > 0) this.#reap();
    if (generation !== this.#generation) {
      this.#retireAll();
      this.#generation = generation;
    }
    const graph = this.#graphs.get(key);
    if (graph) {
      graph.launch(this.#stream);
      this.counts.replayed++;
      return 'replayed';
    }
    if (!this.#seen.has(key) || this.#failed.has(key) || this.#graphs.size >= this.#max) {
      remember(this.#seen, key);
      compute();
      this.counts.eager++;
      return 'eager';
    }
    let made: CapturedWork;
    try {
      made = this.#capture(this.#stream, compute, `${this.#label} compute graph ${this.#graphs.size}`);
    } catch (e) {
      // A broken context is everyone's error; anything else (an operation a capture cannot hold)
      // means this key runs as it is from now on. Run it now: nothing was enqueued while capturing.
      if (isStickyError(e) || this.#stream.context.stickyError) throw e;
      remember(this.#failed, key);
      compute();
      this.counts.eager++;
      return 'eager';
    }
    this.#graphs.set(key, made);
    made.launch(this.#stream);
    this.counts.captured++;
    return 'captured';
  }

  /** Retires every graph: destroyed once the stream has passed what was enqueued so far. */
  #retireAll(): void {
    this.#seen.clear();
    this.#failed.clear();
    if (this.#graphs.size === 0) return;
    const works = [...this.#graphs.values()];
    this.#graphs.clear();
    this.#retired.push({ works, marker: this.#mark(this.#stream, `${this.#label} retired graphs`) });
  }

  /** Destroys retired graphs whose last possible replay the stream has passed. */
  #reap(): void {
    this.#retired = this.#retired.filter(({ works, marker }) => {
      if (!marker.done) return true;
      for (const w of works) w.dispose();
      marker.dispose();
      return false;
    });
  }

  /** Destroys every graph; the lane's stream must have finished the work that replays them. */
  dispose(): void {
    let first: unknown;
    const all = [...this.#graphs.values(), ...this.#retired.flatMap((r) => r.works)];
    const markers = this.#retired.map((r) => r.marker);
    this.#graphs.clear();
    this.#retired = [];
    for (const x of [...all, ...markers]) {
      try {
        x.dispose();
      } catch (e) {
        first ??= e;
      }
    }
    if (first !== undefined) throw first;
  }
}

function remember(set: Set<string>, key: string): void {
  if (set.size >= MAX_REMEMBERED) set.clear();
  set.add(key);
}
