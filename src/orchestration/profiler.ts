import { CUevent_flags, type CUevent } from '../ffi/generated/types.js';
import { bestEffort, cu } from '../ffi/checked.js';
import { hot } from '../runtime/cuda.js';
import type { Context } from '../runtime/context.js';
import { resolveContext, type Placement } from '../runtime/defaults.js';
import { describeValue, expectResource, isLive, Resource } from '../runtime/resource.js';
import { createRawEvent } from '../runtime/raw-event-pool.js';
import type { Stream } from '../runtime/stream.js';
import { toChromeTrace, type ChromeTrace } from '../report/chrome-trace.js';
import { toSvgTimeline } from '../report/timeline-svg.js';
import {
  analyzeTimeline,
  type OperationKind,
  type RunReport,
  type StreamReport,
  type TimelineRecord,
} from '../report/timeline.js';

interface Bracket {
  stream: Stream;
  kind: OperationKind;
  name: string;
  bytes: number | undefined;
  start: CUevent;
  end: CUevent | undefined;
  id: number;
}

/** What begin() hands back; pass it to end() after enqueueing the operation. */
export type ProfileToken = number;

/** How a Profiler is made. */
export interface ProfilerDescriptor extends Placement {
  /** Record from the start (default true); `enabled` can be switched later. */
  enabled?: boolean | undefined;
  /**
   * Most operations kept (default DEFAULT_PROFILER_WINDOW, 65536; Infinity keeps all, only when
   * asked for): beyond it the oldest half are dropped (their events reused), so a long-running
   * profiled loop stays bounded; collect() then sees the latest.
   */
  window?: number | undefined;
  label?: string | undefined;
}

/** Operations a Profiler keeps by default (each holds two timing events). */
export const DEFAULT_PROFILER_WINDOW = 1 << 16;

/**
 * Opt-in GPU timeline: each operation is bracketed by timing events on its stream, and
 * collect() turns them into records in ms since the profiler's origin. When disabled,
 * begin() returns -1 at once and end() does nothing: no FFI call. The pipeline's fronts take one
 * (ManagedContext's steps, the AsyncCoordinator, the StageManager, a StreamPool); the job engine
 * times each job with its slot's own timed events instead.
 */
export class Profiler extends Resource {
  readonly context: Context;
  enabled: boolean;
  /** Most operations kept (Infinity: all). */
  readonly window: number;
  #brackets: Bracket[] = [];
  /** The token of #brackets[0]: tokens stay valid when the oldest brackets are dropped. */
  #base = 0;
  readonly #freeEvents: CUevent[] = [];
  /** Every timing event made (the leak net destroys them if the profiler is collected undisposed). */
  readonly #created = new Set<CUevent>();
  #origin: CUevent | undefined;
  #streamOrder = new Map<string, number>();

  constructor(descriptor: ProfilerDescriptor = {}) {
    if (typeof descriptor !== 'object' || descriptor === null)
      throw new TypeError(`new Profiler() takes a descriptor object, got ${describeValue(descriptor)}`);
    super('Profiler', descriptor.label ?? 'profiler');
    // Checked before the context is resolved: a wrong window said "no CUDA driver" on a machine without one.
    const window = descriptor.window ?? DEFAULT_PROFILER_WINDOW;
    if (window !== Infinity && !(Number.isSafeInteger(window) && window >= 1))
      throw new RangeError(`${this.label}: window must be a positive integer (or Infinity), got ${String(window)}`);
    if (descriptor.enabled !== undefined && typeof descriptor.enabled !== 'boolean')
      throw new TypeError(`${this.label}: enabled must be a boolean, got ${describeValue(descriptor.enabled)}`);
    this.context = resolveContext(descriptor);
    this.enabled = descriptor.enabled ?? true;
    this.window = window;
  }

  /** The token the oldest kept operation has (tokens below it were dropped by the window). */
  get firstToken(): number {
    return this.#base;
  }

  #event(): CUevent {
    const free = this.#freeEvents.pop();
    if (free !== undefined) return free;
    const made = createRawEvent(this.context, CUevent_flags.CU_EVENT_DEFAULT, `${this.label} timing event`);
    if (this.#created.size === 0) {
      const created = this.#created;
      this.track(() => {
        for (const e of created) bestEffort(() => cu().cuEventDestroy(e), undefined);
      });
    }
    this.#created.add(made);
    return made;
  }

  #record(event: CUevent, stream: Stream): void {
    hot().eventRecord(event, stream.use(), recordDuring, this, stream);
  }

  /** Records a start event on `stream`; returns the token end() takes (-1 when disabled). */
  begin(stream: Stream, kind: OperationKind, name: string, bytes?: number): ProfileToken {
    if (!this.enabled) return -1;
    this.assertAlive();
    if (!isLive<Stream>(stream, 'Stream')) expectResource<Stream>(stream, 'Stream', `${this.label} begin(stream)`);
    if (stream.context !== this.context)
      throw new Error(
        `${this.label} belongs to ${this.context.label}; stream "${stream.label}" to ${stream.context.label}`,
      );
    if (!this.#origin) {
      this.#origin = this.#event();
      this.#record(this.#origin, stream);
    }
    if (!this.#streamOrder.has(stream.label)) this.#streamOrder.set(stream.label, this.#streamOrder.size);
    if (this.#brackets.length >= this.window) this.#dropOldest();
    const start = this.#event();
    this.#record(start, stream);
    const id = this.#base + this.#brackets.length;
    this.#brackets.push({ stream, kind, name, bytes, start, end: undefined, id });
    return id;
  }

  /** Drops the oldest half of the window (amortized O(1) per begin); their events are reused. */
  #dropOldest(): void {
    const drop = Math.max(1, this.#brackets.length >> 1);
    for (const b of this.#brackets.slice(0, drop)) {
      this.#freeEvents.push(b.start);
      if (b.end) this.#freeEvents.push(b.end);
    }
    this.#brackets = this.#brackets.slice(drop);
    this.#base += drop;
  }

  /**
   * Drops the kept operations whose token is below `token` (their events are reused), for an
   * owner that knows it will never read them (a StageManager past its stats window). Dropping
   * is amortized: nothing happens until at least 64 (or half the kept ones) can go.
   */
  forgetBefore(token: ProfileToken): void {
    this.assertAlive();
    const drop = Math.min(this.#brackets.length, token - this.#base);
    if (drop <= 0 || (drop < 64 && drop < this.#brackets.length >> 1)) return;
    for (let i = 0; i < drop; i++) {
      const b = this.#brackets[i]!;
      this.#freeEvents.push(b.start);
      if (b.end) this.#freeEvents.push(b.end);
    }
    this.#brackets = this.#brackets.slice(drop);
    this.#base += drop;
  }

  /** Timing events this profiler has created (reused ones counted once): bounded by twice its window, plus its origin. */
  get eventCount(): number {
    return this.#created.size;
  }

  /** Records the end event of the operation `token` names, on its stream. */
  end(token: ProfileToken): void {
    if (token < 0) return;
    const b = this.#brackets[token - this.#base];
    if (token < this.#base) return; // dropped by the window while being enqueued
    if (!b || b.end) throw new Error(`${this.label}: end() for an unknown or finished operation ${token}`);
    b.end = this.#event();
    this.#record(b.end, b.stream);
  }

  /** Brackets what `enqueue` submits to `stream`. */
  wrap<T>(stream: Stream, kind: OperationKind, name: string, enqueue: () => T, bytes?: number): T {
    const token = this.begin(stream, kind, name, bytes);
    try {
      return enqueue();
    } finally {
      this.end(token);
    }
  }

  /** Operations kept (within the window). */
  get operationCount(): number {
    return this.#brackets.length;
  }

  /** Waits (without blocking the event loop) for every bracketed operation, then returns the timeline. */
  async collect(): Promise<TimelineRecord[]> {
    this.assertAlive();
    const brackets = this.#brackets;
    const pending = brackets
      .filter((b) => b.end)
      .map((b) => this.context.completion.track(b.stream.handle ?? 0, b.end!));
    await Promise.all(pending);
    const origin = this.#origin;
    if (!origin) return [];
    const since = (e: CUevent): number => cu().cuEventElapsedTime(origin, e, this.label);
    return brackets
      .filter((b) => b.end)
      .map((b) => {
        const rec: TimelineRecord = {
          stream: b.stream.label,
          streamOrder: this.#streamOrder.get(b.stream.label) ?? 0,
          kind: b.kind,
          name: b.name,
          startMs: since(b.start),
          endMs: since(b.end!),
          id: b.id,
        };
        if (b.bytes !== undefined) rec.bytes = b.bytes;
        return rec;
      });
  }

  /** The whole-run report (per-stream busy time, overlap) of collect()'s records. */
  async report(): Promise<RunReport> {
    return analyzeTimeline(await this.collect());
  }

  /** One stream's share of report(), by the stream or its label; undefined if nothing ran on it. */
  async streamReport(stream: Stream | string): Promise<StreamReport | undefined> {
    const label = typeof stream === 'string' ? stream : stream.label;
    return (await this.report()).streams.find((s) => s.stream === label);
  }

  /** collect()'s records as a Chrome trace (chrome://tracing, Perfetto). */
  async chromeTrace(): Promise<ChromeTrace> {
    return toChromeTrace(await this.collect(), { processName: this.label });
  }

  /** collect()'s records as an SVG timeline. */
  async svg(title?: string): Promise<string> {
    return toSvgTimeline(await this.collect(), { title: title ?? this.label });
  }

  /** Forgets recorded operations (after their completion) and reuses their events. */
  async reset(): Promise<void> {
    await this.collect();
    for (const b of this.#brackets) {
      this.#freeEvents.push(b.start);
      if (b.end) this.#freeEvents.push(b.end);
    }
    if (this.#origin) this.#freeEvents.push(this.#origin);
    this.#origin = undefined;
    this.#base += this.#brackets.length;
    this.#brackets = [];
    this.#streamOrder.clear();
  }

  /** Destroys every timing event (pending brackets included: collect() first to keep their times). */
  protected releaseNative(): void {
    for (const b of this.#brackets) {
      this.#freeEvents.push(b.start);
      if (b.end) this.#freeEvents.push(b.end);
    }
    if (this.#origin) this.#freeEvents.push(this.#origin);
    // Every event is destroyed even when one fails: a failure changes nothing the profiler could act on.
    for (const e of this.#created) bestEffort(() => cu().cuEventDestroy(e), undefined);
    this.#created.clear();
    this.#freeEvents.length = 0;
    this.#brackets = [];
    this.#origin = undefined;
  }
}

/** What a failed record was doing, built only when it fails (src/ffi/checked-call.ts). */
const recordDuring = (profiler: Profiler, stream: Stream): string => `${profiler.label} on stream "${stream.label}"`;

export type { TimelineRecord, RunReport, OperationKind };
