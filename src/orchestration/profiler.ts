import { CUevent_flags, type CUevent } from '../ffi/generated/types.js';
import { check, cu, driverError, hot, outValue } from '../runtime/cuda.js';
import type { Context } from '../runtime/context.js';
import { Device } from '../runtime/device.js';
import { createRawEvent } from '../runtime/raw-event-pool.js';
import type { Stream } from '../runtime/stream.js';
import { toChromeTrace, type ChromeTrace } from '../report/chrome-trace.js';
import { toSvgTimeline } from '../report/timeline-svg.js';
import { analyzeTimeline, type OperationKind, type RunReport, type StreamReport, type TimelineRecord } from '../report/timeline.js';

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

/**
 * Opt-in GPU timeline: each operation is bracketed by timing events on its stream, and
 * collect() turns them into records in ms since the profiler's origin. When disabled,
 * begin() returns -1 at once and end() does nothing: no FFI call.
 */
export class Profiler {
  readonly context: Context;
  readonly label: string;
  enabled: boolean;
  readonly #brackets: Bracket[] = [];
  readonly #freeEvents: CUevent[] = [];
  #origin: CUevent | undefined;
  #streamOrder = new Map<string, number>();

  constructor(descriptor: { context?: Context; enabled?: boolean; label?: string } = {}) {
    this.context = descriptor.context ?? Device.get(0).context;
    this.enabled = descriptor.enabled ?? true;
    this.label = descriptor.label ?? 'profiler';
  }

  #event(): CUevent {
    return this.#freeEvents.pop() ?? createRawEvent(this.context, CUevent_flags.CU_EVENT_DEFAULT, `${this.label} timing event`);
  }

  #record(event: CUevent, stream: Stream): void {
    const status = hot().eventRecord(event, stream.use());
    if (status !== 0) throw driverError(status, 'cuEventRecord', `${this.label} on stream "${stream.label}"`);
  }

  begin(stream: Stream, kind: OperationKind, name: string, bytes?: number): ProfileToken {
    if (!this.enabled) return -1;
    if (!this.#origin) {
      this.#origin = this.#event();
      this.#record(this.#origin, stream);
    }
    if (!this.#streamOrder.has(stream.label)) this.#streamOrder.set(stream.label, this.#streamOrder.size);
    const start = this.#event();
    this.#record(start, stream);
    this.#brackets.push({ stream, kind, name, bytes, start, end: undefined, id: this.#brackets.length });
    return this.#brackets.length - 1;
  }

  end(token: ProfileToken): void {
    if (token < 0) return;
    const b = this.#brackets[token];
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

  get operationCount(): number {
    return this.#brackets.length;
  }

  /** Waits (without blocking the event loop) for every bracketed operation, then returns the timeline. */
  async collect(): Promise<TimelineRecord[]> {
    const pending = this.#brackets.filter((b) => b.end).map((b) => this.context.completion.track(b.stream.handle ?? 0, b.end!));
    await Promise.all(pending);
    const origin = this.#origin;
    if (!origin) return [];
    const ms: [number | null] = [0];
    const since = (e: CUevent): number => {
      check(cu().cuEventElapsedTime(ms, origin, e), 'cuEventElapsedTime', this.label);
      return outValue(ms, 'cuEventElapsedTime');
    };
    return this.#brackets
      .filter((b) => b.end)
      .map((b) => {
        const rec: TimelineRecord = { stream: b.stream.label, streamOrder: this.#streamOrder.get(b.stream.label) ?? 0, kind: b.kind, name: b.name, startMs: since(b.start), endMs: since(b.end!), id: b.id };
        if (b.bytes !== undefined) rec.bytes = b.bytes;
        return rec;
      });
  }

  async report(): Promise<RunReport> {
    return analyzeTimeline(await this.collect());
  }

  /** One stream's share of report(), by the stream or its label; undefined if nothing ran on it. */
  async streamReport(stream: Stream | string): Promise<StreamReport | undefined> {
    const label = typeof stream === 'string' ? stream : stream.label;
    return (await this.report()).streams.find((s) => s.stream === label);
  }

  async chromeTrace(): Promise<ChromeTrace> {
    return toChromeTrace(await this.collect(), { processName: this.label });
  }

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
    this.#brackets.length = 0;
    this.#streamOrder.clear();
  }

  /** Destroys every timing event (pending brackets included: collect() first to keep their times). */
  dispose(): void {
    for (const b of this.#brackets) {
      this.#freeEvents.push(b.start);
      if (b.end) this.#freeEvents.push(b.end);
    }
    if (this.#origin) this.#freeEvents.push(this.#origin);
    for (const e of this.#freeEvents) cu().cuEventDestroy(e);
    this.#freeEvents.length = 0;
    this.#brackets.length = 0;
    this.#origin = undefined;
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}
export type { TimelineRecord, RunReport, OperationKind };
