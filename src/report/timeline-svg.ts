/**
 * A standalone SVG picture of a run: one lane per stream, so that whether uploads, compute
 * and downloads overlap is visible at a glance, with no viewer beyond a browser.
 */
import { checkPixels, MAX_CHART_WIDTH } from './sizes.js';
import {
  analyzeTimeline,
  extent,
  groupByStream,
  transferComputeOverlap,
  type OperationKind,
  type TimelineRecord,
} from './timeline.js';

export interface SvgTimelineOptions {
  title?: string | undefined;
  /** Pixels (default 1100, at least 400 drawn, at most MAX_CHART_WIDTH); the height follows from the number of lanes. */
  width?: number | undefined;
}

/** Fixed, so that the same kind has the same color in every picture; all dark enough for white text. */
export const KIND_COLORS: Readonly<Record<OperationKind, string>> = {
  upload: '#2563eb',
  download: '#16a34a',
  kernel: '#ea580c',
  fft: '#7c3aed',
  copy: '#0d9488',
  memset: '#6b7280',
  host: '#92400e',
  alloc: '#db2777',
  other: '#475569',
};

const KIND_ORDER: readonly OperationKind[] = [
  'upload',
  'kernel',
  'fft',
  'memset',
  'download',
  'copy',
  'host',
  'alloc',
  'other',
];
const OVERLAP_COLOR = '#111827';
const FONT = 'system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif';
const PAD = 16;
const ROW_H = 20;
const BAR_H = 16;
const LANE_PAD = 4;
const STRIP_H = 8;

export function escapeXml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** Rough advance width of sans-serif text, erring wide; enough to lay out labels without a font engine. */
function textWidth(text: string, fontSize: number): number {
  return [...text].length * fontSize * 0.64;
}

/** Cut to fit `width` pixels, marking the cut; the full text stays in the element's <title>. */
function fit(text: string, width: number, fontSize: number): string {
  const chars = [...text];
  const max = Math.max(1, Math.floor(width / (fontSize * 0.64)));
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/**
 * A step of 1, 2 or 5 times a power of ten giving about `count` ticks over `span`. Where no such
 * step is a positive finite double (a span among the smallest subnormals, whose power of ten
 * underflows to 0, or an overflowing one), the span itself: a step of 0 looped every axis forever.
 */
export function niceStep(span: number, count: number): number {
  const raw = span / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  const m = raw / power;
  const step = power * (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10);
  return step > 0 && Number.isFinite(step) ? step : span;
}

function decimalsFor(step: number): number {
  return Math.max(0, Math.min(6, -Math.floor(Math.log10(step) + 1e-9)));
}

/** About three significant digits, never in exponent notation. */
export function formatMs(ms: number): string {
  if (ms === 0) return '0';
  const digits = Math.max(0, Math.min(6, 2 - Math.floor(Math.log10(Math.abs(ms)))));
  return ms.toFixed(digits);
}

function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(1)} ${units[u]}`;
}

/** Greedy interval partitioning: records of one stream that overlap get rows of their own instead of hiding each other. */
function assignRows(records: readonly TimelineRecord[]): { rows: number; rowOf: Map<TimelineRecord, number> } {
  const rowEnds: number[] = [];
  const rowOf = new Map<TimelineRecord, number>();
  for (const r of [...records].sort((a, b) => a.startMs - b.startMs)) {
    let row = rowEnds.findIndex((end) => end <= r.startMs);
    if (row < 0) row = rowEnds.push(0) - 1;
    rowEnds[row] = r.endMs;
    rowOf.set(r, row);
  }
  return { rows: Math.max(1, rowEnds.length), rowOf };
}

function tooltip(r: TimelineRecord): string {
  const ms = r.endMs - r.startMs;
  let text = `${r.name} (${r.kind}) on ${r.stream}: ${formatMs(ms)} ms, ${r.startMs.toFixed(3)} to ${r.endMs.toFixed(3)} ms`;
  if (r.bytes !== undefined) {
    text += `, ${formatBytes(r.bytes)}`;
    if (ms > 0) text += ` at ${(r.bytes / (ms * 1e6)).toFixed(1)} GB/s`;
  }
  return escapeXml(text);
}

function header(width: number, height: number): string[] {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${FONT}">`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
  ];
}

function emptySvg(title: string, width: number): string {
  const height = 110;
  return [
    ...header(width, height),
    `<text x="${PAD}" y="30" font-size="17" font-weight="600" fill="#111827">${escapeXml(title)}</text>`,
    `<text x="${width / 2}" y="75" font-size="14" fill="#6b7280" text-anchor="middle">no operations</text>`,
    '</svg>',
  ].join('\n');
}

/** Legend items laid out left to right, wrapping; returns the elements and the y below them. */
function legend(
  kinds: readonly OperationKind[],
  withOverlap: boolean,
  top: number,
  width: number,
): { parts: string[]; bottom: number } {
  const items: [label: string, color: string, height: number][] = kinds.map((k) => [k, KIND_COLORS[k], 11]);
  if (withOverlap) items.push(['transfer ∩ compute', OVERLAP_COLOR, STRIP_H]);
  const parts: string[] = [];
  let x = PAD;
  let y = top;
  for (const [label, color, h] of items) {
    const w = 16 + textWidth(label, 11) + 18;
    if (x + w > width - PAD && x > PAD) {
      x = PAD;
      y += 18;
    }
    parts.push(
      `<rect x="${x}" y="${y + (11 - h) / 2}" width="11" height="${h}" rx="2" fill="${color}"/>`,
      `<text x="${x + 16}" y="${y + 9.5}" font-size="11" fill="#374151">${escapeXml(label)}</text>`,
    );
    x += w;
  }
  return { parts, bottom: y + 11 };
}

/** The run as SVG text: one lane per stream, the transfer/compute overlap strip, a time axis. */
export function toSvgTimeline(records: readonly TimelineRecord[], options: SvgTimelineOptions = {}): string {
  if (typeof options !== 'object' || options === null)
    throw new TypeError(
      `toSvgTimeline() options must be an object { title?, width? }, got ${options === null ? 'null' : typeof options}`,
    );
  const title = options.title ?? 'tscuda timeline';
  // An infinite width looped building the axis; NaN was written into the SVG.
  const width = Math.max(
    400,
    Math.round(
      options.width === undefined ? 1100 : checkPixels(options.width, 'toSvgTimeline() width', MAX_CHART_WIDTH, false),
    ),
  );
  if (records.length === 0) return emptySvg(title, width);

  const report = analyzeTimeline(records);
  const lanes = groupByStream(records);
  const overlap = transferComputeOverlap(records);
  const t0 = extent(records).firstMs;
  // An instantaneous run still needs a finite scale.
  const domain = report.spanMs > 0 ? report.spanMs : 1;

  const labelW = Math.min(220, Math.max(70, ...[...lanes.keys()].map((s) => textWidth(s, 12) + 2 * PAD)));
  const plotX = labelW;
  const plotW = width - labelW - PAD - 10;
  const xAt = (ms: number): number => plotX + ((ms - t0) / domain) * plotW;
  const px = (v: number): string => (Math.round(v * 100) / 100).toString();

  const usedKinds = KIND_ORDER.filter((k) => records.some((r) => r.kind === k));
  const leg = legend(usedKinds, overlap.length > 0, 64, width);
  const lanesTop = leg.bottom + 14;

  const backgrounds: string[] = [];
  const body: string[] = [];
  const labels: string[] = [];
  let y = lanesTop;
  let laneIndex = 0;
  for (const [stream, own] of lanes) {
    const { rows, rowOf } = assignRows(own);
    const laneH = rows * ROW_H + 2 * LANE_PAD;
    const fill = laneIndex++ % 2 === 0 ? '#f3f4f6' : '#fafafa';
    backgrounds.push(`<rect x="${plotX}" y="${y}" width="${px(plotW)}" height="${laneH}" fill="${fill}"/>`);
    labels.push(
      `<text x="${labelW - 10}" y="${px(y + laneH / 2 + 4)}" font-size="12" fill="#111827" text-anchor="end"><title>${escapeXml(stream)}</title>${escapeXml(fit(stream, labelW - PAD - 10, 12))}</text>`,
    );
    for (const r of own) {
      const x = xAt(r.startMs);
      // Tiny operations still get a pixel, so that a burst of short kernels is not invisible.
      const w = Math.max(1, xAt(r.endMs) - x);
      const by = y + LANE_PAD + (rowOf.get(r) ?? 0) * ROW_H + (ROW_H - BAR_H) / 2;
      const edge = w >= 4 ? ' stroke="#ffffff" stroke-width="0.75"' : '';
      body.push(
        `<rect x="${px(x)}" y="${by}" width="${px(w)}" height="${BAR_H}" rx="${w >= 4 ? 2 : 0}" fill="${KIND_COLORS[r.kind]}"${edge}><title>${tooltip(r)}</title></rect>`,
      );
      if (textWidth(r.name, 10) + 8 < w) {
        body.push(
          `<text x="${px(x + w / 2)}" y="${by + BAR_H / 2 + 3.5}" font-size="10" fill="#ffffff" text-anchor="middle" pointer-events="none">${escapeXml(r.name)}</text>`,
        );
      }
    }
    y += laneH + 2;
  }

  if (overlap.length > 0) {
    y += 4;
    labels.push(
      `<text x="${labelW - 10}" y="${y + STRIP_H - 0.5}" font-size="10" font-style="italic" fill="#4b5563" text-anchor="end">overlap</text>`,
    );
    for (const [s, e] of overlap) {
      const x = xAt(s);
      body.push(
        `<rect x="${px(x)}" y="${y}" width="${px(Math.max(1, xAt(e) - x))}" height="${STRIP_H}" fill="${OVERLAP_COLOR}"/>`,
      );
    }
    y += STRIP_H;
  }

  const axisY = y + 8;
  const step = niceStep(domain, Math.max(2, Math.floor(plotW / 90)));
  const decimals = decimalsFor(step);
  const axis: string[] = [
    `<line x1="${plotX}" y1="${axisY}" x2="${px(plotX + plotW)}" y2="${axisY}" stroke="#9ca3af"/>`,
  ];
  const grid: string[] = [];
  for (let i = 0; i * step <= domain * (1 + 1e-9); i++) {
    const x = px(plotX + ((i * step) / domain) * plotW);
    grid.push(`<line x1="${x}" y1="${lanesTop}" x2="${x}" y2="${axisY}" stroke="#d1d5db" stroke-width="0.75"/>`);
    axis.push(
      `<line x1="${x}" y1="${axisY}" x2="${x}" y2="${axisY + 5}" stroke="#9ca3af"/>`,
      `<text x="${x}" y="${axisY + 18}" font-size="11" fill="#4b5563" text-anchor="middle">${(i * step).toFixed(decimals)}</text>`,
    );
  }
  // Clear of the 0 label, which is centred on the axis start.
  axis.push(
    `<text x="${labelW - 24}" y="${axisY + 18}" font-size="11" fill="#4b5563" text-anchor="end">time (ms)</text>`,
  );

  const summary =
    `span ${formatMs(report.spanMs)} ms · ${report.operations} operations on ${lanes.size} stream${lanes.size === 1 ? '' : 's'}` +
    ` · busy ${formatMs(report.busyMs)} ms` +
    // Without transfers (a timeline of whole jobs, say) an overlap share would read as a bad 0 %.
    (report.transfers > 0
      ? ` · transfer time overlapped by compute ${report.transferComputeOverlapPercent.toFixed(1)}%`
      : '');
  const height = axisY + 30;
  return [
    ...header(width, height),
    `<text x="${PAD}" y="30" font-size="17" font-weight="600" fill="#111827">${escapeXml(title)}</text>`,
    `<text x="${PAD}" y="50" font-size="12" fill="#4b5563">${escapeXml(summary)}</text>`,
    ...leg.parts,
    ...backgrounds,
    ...grid,
    ...body,
    ...labels,
    ...axis,
    '</svg>',
  ].join('\n');
}
