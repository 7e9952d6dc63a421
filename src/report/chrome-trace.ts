/**
 * Chrome trace-event JSON (the format chrome://tracing and ui.perfetto.dev open), so a run
 * can be inspected with zoom and search instead of only as a static picture.
 */
import { groupByStream, type OperationKind, type TimelineRecord } from './timeline.js';

export interface ChromeTraceOptions {
  processName?: string | undefined;
}

export interface MetadataEvent {
  ph: 'M';
  name: 'process_name' | 'thread_name' | 'thread_sort_index';
  pid: number;
  tid: number;
  args: { name?: string | undefined; sort_index?: number | undefined };
}

export interface CompleteEvent {
  ph: 'X';
  name: string;
  /** The category lets the viewers filter by operation kind. */
  cat: OperationKind;
  pid: number;
  tid: number;
  /** Microseconds, on the records' clock. */
  ts: number;
  dur: number;
  args: {
    kind: OperationKind;
    stream: string;
    bytes?: number | undefined;
    id?: number | undefined;
    gbPerSecond?: number | undefined;
  };
}

export type TraceEvent = MetadataEvent | CompleteEvent;

export interface ChromeTrace {
  traceEvents: TraceEvent[];
  displayTimeUnit: 'ms';
}

const PID = 1;

/** Rounded to nanoseconds so that float noise from ms -> µs does not leak into the file. */
function micros(ms: number): number {
  return Math.round(ms * 1e6) / 1e3;
}

function argsOf(r: TimelineRecord): CompleteEvent['args'] {
  const args: CompleteEvent['args'] = { kind: r.kind, stream: r.stream };
  if (r.bytes !== undefined) {
    args.bytes = r.bytes;
    const ms = r.endMs - r.startMs;
    if (ms > 0) args.gbPerSecond = Math.round((r.bytes / (ms * 1e6)) * 1000) / 1000;
  }
  if (r.id !== undefined) args.id = r.id;
  return args;
}

export function toChromeTrace(records: readonly TimelineRecord[], options: ChromeTraceOptions = {}): ChromeTrace {
  const traceEvents: TraceEvent[] = [
    { ph: 'M', name: 'process_name', pid: PID, tid: 0, args: { name: options.processName ?? 'tscuda' } },
  ];
  let tid = 0;
  for (const [stream, own] of groupByStream(records)) {
    tid++;
    traceEvents.push(
      { ph: 'M', name: 'thread_name', pid: PID, tid, args: { name: stream } },
      // Without a sort index the viewers order lanes by tid anyway, but say it explicitly.
      { ph: 'M', name: 'thread_sort_index', pid: PID, tid, args: { sort_index: tid } },
    );
    for (const r of own) {
      traceEvents.push({
        ph: 'X',
        name: r.name,
        cat: r.kind,
        pid: PID,
        tid,
        ts: micros(r.startMs),
        dur: micros(r.endMs - r.startMs),
        args: argsOf(r),
      });
    }
  }
  return { traceEvents, displayTimeUnit: 'ms' };
}
