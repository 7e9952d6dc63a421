import { describe, expect, it } from 'vitest';
import { toChromeTrace, type CompleteEvent, type MetadataEvent } from '../../../src/report/chrome-trace.js';
import { escapeXml, niceStep, toSvgTimeline } from '../../../src/report/timeline-svg.js';
import {
  analyzeTimeline,
  intersectIntervals,
  transferComputeOverlap,
  unionIntervals,
  type TimelineRecord,
} from '../../../src/report/timeline.js';

/**
 * Node has no DOMParser, so well-formedness is checked by hand: balanced tags, quoted
 * attributes, no raw '<' or stray '&' in text.
 */
function assertWellFormedXml(xml: string): void {
  const stack: string[] = [];
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g;
  let last = 0;
  for (const m of xml.matchAll(tag)) {
    const text = xml.slice(last, m.index);
    expect(text, `text before ${m[0]}`).not.toMatch(/<|&(?!(amp|lt|gt|quot|apos|#\d+);)/);
    last = m.index + m[0].length;
    const [, closing, name = '', , selfClosing] = m;
    if (closing) expect(stack.pop(), `closing ${name}`).toBe(name);
    else if (!selfClosing) stack.push(name);
  }
  expect(xml.slice(last).trim()).toBe('');
  expect(stack).toEqual([]);
}

function attr(element: string, name: string): number {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(element);
  return Number(m?.[1]);
}

const rec = (
  stream: string,
  kind: TimelineRecord['kind'],
  startMs: number,
  endMs: number,
  bytes?: number,
): TimelineRecord => ({
  stream,
  kind,
  name: `${kind}@${startMs}`,
  startMs,
  endMs,
  ...(bytes === undefined ? {} : { bytes }),
});

// T = [0,4] ∪ [6,9] (7 ms); C = [2,6] ∪ [8,8.5] (4.5 ms); T ∩ C = [2,4] ∪ [8,8.5] (2.5 ms).
const known: TimelineRecord[] = [
  rec('s1', 'upload', 0, 4, 100),
  rec('s1', 'kernel', 4, 6),
  rec('s2', 'kernel', 2, 5),
  rec('s2', 'download', 6, 8, 50),
  rec('s3', 'copy', 7, 9, 10),
  rec('s3', 'memset', 8, 8.5),
  rec('s3', 'host', 0, 1),
];

/** Three streams, each chunk upload -> kernel -> fft -> download, engines shared as on a GPU. */
function tripleBuffered(chunks: number): TimelineRecord[] {
  const out: TimelineRecord[] = [];
  const engine = { h2d: 0, sm: 0, d2h: 0 };
  const free = [0, 0, 0];
  for (let c = 0; c < chunks; c++) {
    const s = c % 3;
    const step = (kind: TimelineRecord['kind'], eng: keyof typeof engine, ms: number): void => {
      const start = Math.max(free[s] ?? 0, engine[eng]);
      free[s] = engine[eng] = start + ms;
      out.push({
        stream: `stream ${s}`,
        streamOrder: s,
        kind,
        name: `${kind} ${c}`,
        startMs: start,
        endMs: start + ms,
        bytes: 1 << 20,
        id: c,
      });
    };
    step('upload', 'h2d', 1);
    step('kernel', 'sm', 0.6);
    step('fft', 'sm', 0.4);
    step('download', 'd2h', 0.9);
  }
  return out;
}

describe('interval arithmetic', () => {
  it('merges overlapping and touching intervals and drops empty ones', () => {
    expect(
      unionIntervals([
        [5, 6],
        [0, 2],
        [1, 3],
        [3, 4],
        [7, 7],
      ]),
    ).toEqual([
      [0, 4],
      [5, 6],
    ]);
  });
  it('intersects two unions', () => {
    expect(
      intersectIntervals(
        [
          [0, 4],
          [6, 9],
        ],
        [
          [2, 6],
          [8, 8.5],
        ],
      ),
    ).toEqual([
      [2, 4],
      [8, 8.5],
    ]);
    expect(intersectIntervals([[0, 1]], [[1, 2]])).toEqual([]);
  });
});

describe('analyzeTimeline', () => {
  it('computes exact figures for hand-built overlaps', () => {
    const r = analyzeTimeline(known);
    expect(r.spanMs).toBe(9);
    expect(r.operations).toBe(7);
    expect(r.kernels).toBe(2);
    expect(r.transfers).toBe(3);
    expect(r.busyMs).toBe(9);
    expect(r.transferComputeOverlapMs).toBe(2.5);
    expect(r.transferComputeOverlapPercent).toBeCloseTo((100 * 2.5) / 7, 12);
    expect(transferComputeOverlap(known)).toEqual([
      [2, 4],
      [8, 8.5],
    ]);
    expect(r.streams.map((s) => s.stream)).toEqual(['s1', 's2', 's3']);
    const [s1, s2, s3] = r.streams;
    expect(s1).toEqual({
      stream: 's1',
      operations: 2,
      kernels: 1,
      transfers: 1,
      bytesTransferred: 100,
      busyMs: 6,
      firstMs: 0,
      lastMs: 6,
      utilization: 6 / 9,
    });
    expect(s2).toMatchObject({ busyMs: 5, bytesTransferred: 50, firstMs: 2, lastMs: 8 });
    expect(s3).toMatchObject({ busyMs: 3, kernels: 0, transfers: 1, bytesTransferred: 10, utilization: 3 / 9 });
  });

  it('does not count overlapping records of one stream twice', () => {
    const r = analyzeTimeline([rec('a', 'kernel', 0, 2), rec('a', 'kernel', 1, 3), rec('a', 'kernel', 10, 11)]);
    expect(r.busyMs).toBe(4);
    expect(r.streams[0]?.busyMs).toBe(4);
    expect(r.spanMs).toBe(11);
  });

  it('orders streams by streamOrder, then by first appearance', () => {
    const r = analyzeTimeline([
      rec('late', 'kernel', 0, 1),
      { ...rec('second', 'kernel', 0, 1), streamOrder: 2 },
      rec('later', 'kernel', 0, 1),
      { ...rec('first', 'kernel', 0, 1), streamOrder: 1 },
    ]);
    expect(r.streams.map((s) => s.stream)).toEqual(['first', 'second', 'late', 'later']);
  });

  it('reports zeros for no records and for no transfers', () => {
    expect(analyzeTimeline([])).toEqual({
      spanMs: 0,
      operations: 0,
      kernels: 0,
      transfers: 0,
      busyMs: 0,
      transferComputeOverlapMs: 0,
      transferComputeOverlapPercent: 0,
      streams: [],
    });
    const r = analyzeTimeline([rec('a', 'kernel', 1, 1)]);
    expect(r.transferComputeOverlapPercent).toBe(0);
    expect(r.streams[0]?.utilization).toBe(0);
  });

  it('gives 100% when every transfer is hidden behind compute', () => {
    const r = analyzeTimeline([rec('a', 'kernel', 0, 10), rec('b', 'upload', 1, 3), rec('c', 'download', 5, 9)]);
    expect(r.transferComputeOverlapPercent).toBe(100);
  });

  it('refuses records that end before they start or are not finite', () => {
    expect(() => analyzeTimeline([rec('a', 'kernel', 2, 1)])).toThrow(/ends before it starts/);
    expect(() => analyzeTimeline([rec('a', 'kernel', 0, Number.NaN)])).toThrow(RangeError);
  });

  it('sees the overlap of a triple-buffered run', () => {
    const r = analyzeTimeline(tripleBuffered(9));
    expect(r.streams).toHaveLength(3);
    expect(r.transferComputeOverlapPercent).toBeGreaterThan(50);
  });
});

describe('toChromeTrace', () => {
  it('has one X event per record with times in microseconds', () => {
    const trace = JSON.parse(JSON.stringify(toChromeTrace(known, { processName: 'run 1' }))) as ReturnType<
      typeof toChromeTrace
    >;
    expect(trace.displayTimeUnit).toBe('ms');
    const xs = trace.traceEvents.filter((e): e is CompleteEvent => e.ph === 'X');
    expect(xs).toHaveLength(known.length);
    const upload = xs.find((e) => e.name === 'upload@0');
    expect(upload).toMatchObject({ ts: 0, dur: 4000, cat: 'upload', args: { kind: 'upload', bytes: 100 } });
    const memset = xs.find((e) => e.name === 'memset@8');
    expect(memset).toMatchObject({ ts: 8000, dur: 500 });
  });

  it('names one thread per stream and puts each record on its stream', () => {
    const trace = toChromeTrace(known);
    const names = trace.traceEvents.filter((e): e is MetadataEvent => e.ph === 'M' && e.name === 'thread_name');
    expect(names.map((e) => e.args.name)).toEqual(['s1', 's2', 's3']);
    const tidOf = new Map(names.map((e) => [e.args.name, e.tid]));
    for (const e of trace.traceEvents) {
      if (e.ph === 'X') expect(e.tid).toBe(tidOf.get(e.args.stream));
    }
    expect(trace.traceEvents[0]).toMatchObject({ ph: 'M', name: 'process_name', args: { name: 'tscuda' } });
  });

  it('keeps microseconds free of float noise', () => {
    const [e] = toChromeTrace([rec('a', 'kernel', 0.1, 0.3)]).traceEvents.filter((x) => x.ph === 'X');
    expect(e).toMatchObject({ ts: 100, dur: 200 });
  });
});

describe('toSvgTimeline', () => {
  const records = tripleBuffered(9);
  const svg = toSvgTimeline(records, { title: 'triple <buffered> & co', width: 900 });

  it('is well-formed XML', () => {
    assertWellFormedXml(svg);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
  });

  it('draws one rect per record, all inside the viewBox and at least 1px wide', () => {
    const [, , w = 0, h = 0] = (/viewBox="([^"]*)"/.exec(svg)?.[1] ?? '').split(' ').map(Number);
    const ops = [...svg.matchAll(/<rect [^>]*><title>/g)].map((m) => m[0]);
    expect(ops).toHaveLength(records.length);
    for (const r of [...svg.matchAll(/<rect [^>]*>/g)].map((m) => m[0])) {
      expect(attr(r, 'x')).toBeGreaterThanOrEqual(0);
      expect(attr(r, 'y')).toBeGreaterThanOrEqual(0);
      expect(attr(r, 'x') + attr(r, 'width')).toBeLessThanOrEqual(w + 1e-6);
      expect(attr(r, 'y') + attr(r, 'height')).toBeLessThanOrEqual(h + 1e-6);
      expect(attr(r, 'width')).toBeGreaterThanOrEqual(1);
    }
  });

  it('labels each stream and lists every kind used in the legend', () => {
    for (const s of ['stream 0', 'stream 1', 'stream 2']) expect(svg).toContain(`>${s}</text>`);
    for (const k of ['upload', 'kernel', 'fft', 'download']) expect(svg).toContain(`>${k}</text>`);
    expect(svg).not.toContain('>memset</text>');
    expect(svg).toContain('transfer ∩ compute');
  });

  it('escapes text and shows the summary', () => {
    expect(svg).toContain('triple &lt;buffered&gt; &amp; co');
    const pct = analyzeTimeline(records).transferComputeOverlapPercent.toFixed(1);
    expect(svg).toContain(`overlapped by compute ${pct}%`);
    const odd = toSvgTimeline([{ ...rec(`a<b>&"c'`, 'kernel', 0, 1), name: '<x&y>' }]);
    assertWellFormedXml(odd);
    expect(odd).toContain('a&lt;b&gt;&amp;&quot;c&apos;');
  });

  it('leaves the overlap share out of the summary when nothing was a transfer', () => {
    const jobs = toSvgTimeline([rec('lane 0', 'other', 0, 2), rec('lane 1', 'other', 1, 3)]);
    assertWellFormedXml(jobs);
    expect(jobs).toContain('2 operations on 2 streams');
    expect(jobs).not.toContain('overlapped by compute');
  });

  it('gives tiny operations a minimum width of one pixel', () => {
    const tiny = toSvgTimeline([rec('a', 'kernel', 0, 1000), rec('a', 'kernel', 500, 500.0001)]);
    const widths = [...tiny.matchAll(/<rect [^>]*><title>/g)].map((m) => attr(m[0], 'width'));
    expect(Math.min(...widths)).toBe(1);
  });

  it('stacks overlapping records of one stream instead of hiding them', () => {
    const s = toSvgTimeline([rec('a', 'kernel', 0, 2), rec('a', 'kernel', 1, 3)]);
    const ys = [...s.matchAll(/<rect [^>]*><title>/g)].map((m) => attr(m[0], 'y'));
    expect(new Set(ys).size).toBe(2);
  });

  it('says "no operations" for an empty run', () => {
    const empty = toSvgTimeline([]);
    assertWellFormedXml(empty);
    expect(empty).toContain('no operations');
  });

  it('survives an instantaneous run', () => {
    const s = toSvgTimeline([rec('a', 'kernel', 5, 5)]);
    assertWellFormedXml(s);
    expect(s).not.toContain('NaN');
  });

  it('picks 1-2-5 tick steps', () => {
    expect(niceStep(13.4, 10)).toBe(2);
    expect(niceStep(0.9, 8)).toBe(0.2);
    expect(niceStep(100, 10)).toBe(10);
    expect(escapeXml(`<&>"'`)).toBe('&lt;&amp;&gt;&quot;&apos;');
  });
});
