/**
 * Band powers as a standalone SVG bar chart: one group of bars per frequency band, one bar per
 * series (e.g. the demo's signals, or channels), a value axis with round ticks, the band edges
 * under each group. Pure: no CUDA, no DOM.
 */
import { cssColorAt, VIRIDIS } from './colormap.js';
import { escapeXml, niceStep } from './timeline-svg.js';
import { checkPixels, MAX_CHART_WIDTH } from './sizes.js';

/** One band: its edges in Hz and a label (default 'lo–hi Hz'). */
export interface ChartBand {
  low: number;
  high: number;
  label?: string | undefined;
  /** Drawn with a marker: a band where something was planted or expected. */
  highlight?: boolean | undefined;
}

/** One bar per band. */
export interface ChartSeries {
  name: string;
  /** One value per band, in `unit`. */
  values: readonly number[];
}

export interface BandChartOptions {
  title?: string | undefined;
  bands: readonly ChartBand[];
  series: readonly ChartSeries[];
  /** Shown on the value axis; with 'fraction' the values are shares of the total, drawn as percent. */
  unit?: string | undefined;
  /** Pixels (default 900, at least 420 drawn, at most MAX_CHART_WIDTH); the height is fixed (420). */
  width?: number | undefined;
}

/** Bad chart input: the message names the field. */
export class BandChartInputError extends Error {
  override readonly name = 'BandChartInputError';
}

const FONT = 'system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif';
const HEIGHT = 420;
const PAD = 16;
const INK = '#111827';
const MUTED = '#6b7280';
const GRID = '#e5e7eb';

const px = (v: number): string => (Math.round(v * 100) / 100).toString();

/** '12.5–40 Hz' with about three significant digits per edge. */
export function bandLabel(low: number, high: number): string {
  const f = (v: number): string => (v === 0 ? '0' : Number(v.toPrecision(3)).toString());
  return `${f(low)}–${f(high)} Hz`;
}

function formatValue(v: number, percent: boolean): string {
  if (percent) return `${Number((v * 100).toPrecision(3))}%`;
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential(2);
  return Number(v.toPrecision(3)).toString();
}

/** The chart as SVG text. */
export function toBandChartSvg(options: BandChartOptions): string {
  if (typeof options !== 'object' || options === null)
    throw new TypeError(
      `toBandChartSvg() takes an options object { bands, series, ... }, got ${options === null ? 'null' : typeof options}`,
    );
  const { bands, series } = options;
  if (!Array.isArray(bands as unknown))
    throw new TypeError(`toBandChartSvg(): bands must be an array, got ${bands === null ? 'null' : typeof bands}`);
  if (!Array.isArray(series as unknown))
    throw new TypeError(`toBandChartSvg(): series must be an array, got ${series === null ? 'null' : typeof series}`);
  if (bands.length === 0) throw new BandChartInputError('bands is empty');
  if (series.length === 0) throw new BandChartInputError('series is empty');
  for (const s of series) {
    if (s.values.length !== bands.length)
      throw new BandChartInputError(`series "${s.name}" has ${s.values.length} values for ${bands.length} bands`);
    s.values.forEach((v, i) => {
      if (!Number.isFinite(v) || v < 0)
        throw new BandChartInputError(`series "${s.name}" value ${i} is ${v}; values must be finite and >= 0`);
    });
  }
  bands.forEach((b, i) => {
    if (!(Number.isFinite(b.low) && Number.isFinite(b.high) && b.low < b.high))
      throw new BandChartInputError(`band ${i} [${b.low}, ${b.high}] is not an interval`);
  });

  // NaN or Infinity was written into the SVG as its width.
  const width = Math.max(
    420,
    Math.round(
      options.width === undefined
        ? 900
        : checkPixels(options.width, 'band chart width', MAX_CHART_WIDTH, false, BandChartInputError),
    ),
  );
  const percent = options.unit === 'fraction';
  const title = options.title ?? 'band power';
  const legendH = series.length > 1 ? 22 : 0;
  const plotTop = 48 + legendH;
  const plotBottom = HEIGHT - 64;
  const plotX = 76;
  const plotW = width - plotX - PAD;
  const plotH = plotBottom - plotTop;

  const max = Math.max(...series.flatMap((s) => s.values));
  const step = max > 0 ? niceStep(max, 5) : 1;
  // Steps up to the axis top (a handful: niceStep gives about five).
  const steps = max > 0 ? Math.ceil(max / step - 1e-9) : 1;
  // Near the largest doubles the rounded-up top overflows to Infinity, and the tick loop below
  // never ended: the axis then ends at the largest value itself.
  const top = Number.isFinite(steps * step) ? steps * step : max;
  const yAt = (v: number): number => plotBottom - (v / top) * plotH;

  const colors = series.map((_, i) =>
    series.length === 1 ? cssColorAt(VIRIDIS, 0.35) : cssColorAt(VIRIDIS, 0.05 + (0.85 * i) / (series.length - 1)),
  );
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${HEIGHT}" viewBox="0 0 ${width} ${HEIGHT}" font-family="${FONT}">`,
    `<rect width="${width}" height="${HEIGHT}" fill="#ffffff"/>`,
    `<text x="${PAD}" y="26" font-size="16" font-weight="600" fill="${INK}">${escapeXml(title)}</text>`,
  ];
  if (series.length > 1) {
    let x = PAD;
    for (let i = 0; i < series.length; i++) {
      const name = series[i]!.name;
      parts.push(
        `<rect x="${x}" y="${40}" width="12" height="11" rx="2" fill="${colors[i]}"/>`,
        `<text x="${x + 16}" y="${49.5}" font-size="11" fill="#374151">${escapeXml(name)}</text>`,
      );
      x += 16 + [...name].length * 11 * 0.64 + 14;
    }
  }
  // Value axis: grid lines and tick labels.
  // Bounded by the count of steps (top + step / 2 overflowed near the largest doubles); a tick
  // past an axis cut short at `max` is left out.
  for (let k = 0, v = 0; k <= steps && v / top <= 1 + 1e-9; k++, v += step) {
    const y = px(yAt(v));
    parts.push(
      `<line x1="${plotX}" y1="${y}" x2="${plotX + plotW}" y2="${y}" stroke="${GRID}" stroke-width="1"/>`,
      `<text x="${plotX - 6}" y="${px(yAt(v) + 4)}" font-size="11" fill="${MUTED}" text-anchor="end">${escapeXml(formatValue(v, percent))}</text>`,
    );
  }
  const unitLabel = percent ? 'share of total power' : (options.unit ?? 'power');
  parts.push(
    `<text x="${PAD}" y="${px(plotTop + plotH / 2)}" font-size="11" fill="${MUTED}" text-anchor="middle" transform="rotate(-90 ${PAD + 4} ${px(plotTop + plotH / 2)})">${escapeXml(unitLabel)}</text>`,
  );

  const groupW = plotW / bands.length;
  const barW = Math.max(2, (groupW * 0.72) / series.length);
  bands.forEach((band, b) => {
    const gx = plotX + b * groupW;
    if (band.highlight) {
      parts.push(
        `<rect x="${px(gx + 2)}" y="${plotTop}" width="${px(groupW - 4)}" height="${plotH}" fill="#fef3c7"><title>${escapeXml(`${band.label ?? bandLabel(band.low, band.high)}: highlighted`)}</title></rect>`,
      );
    }
    const x0 = gx + (groupW - barW * series.length) / 2;
    series.forEach((s, i) => {
      const v = s.values[b]!;
      const y = yAt(v);
      const text = `${s.name}, ${band.label ?? bandLabel(band.low, band.high)}: ${formatValue(v, percent)}`;
      parts.push(
        `<rect class="bar" x="${px(x0 + i * barW)}" y="${px(y)}" width="${px(Math.max(1, barW - 1))}" height="${px(Math.max(0, plotBottom - y))}" fill="${colors[i]}"><title>${escapeXml(text)}</title></rect>`,
      );
    });
    if (series.length === 1) {
      const v = series[0]!.values[b]!;
      parts.push(
        `<text x="${px(gx + groupW / 2)}" y="${px(yAt(v) - 4)}" font-size="10" fill="${INK}" text-anchor="middle">${escapeXml(formatValue(v, percent))}</text>`,
      );
    }
    const label = band.label ?? bandLabel(band.low, band.high);
    parts.push(
      `<text x="${px(gx + groupW / 2)}" y="${plotBottom + 16}" font-size="11" fill="#374151" text-anchor="middle">${escapeXml(label)}</text>`,
    );
  });
  parts.push(
    `<line x1="${plotX}" y1="${plotBottom}" x2="${plotX + plotW}" y2="${plotBottom}" stroke="${INK}" stroke-width="1"/>`,
    `<text x="${px(plotX + plotW / 2)}" y="${HEIGHT - 18}" font-size="12" fill="${MUTED}" text-anchor="middle">frequency band</text>`,
    '</svg>',
  );
  return parts.join('\n');
}
