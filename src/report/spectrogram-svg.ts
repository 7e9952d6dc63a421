/**
 * A spectrogram as a figure a person can read, the way matplotlib's `pcolormesh` plus `colorbar`
 * draws one: the |Zxx| map in dB, a time axis in seconds and a frequency axis in Hz with round
 * ticks and titles, a colour scale with its dB ticks, a title (and a line of parameters) on top,
 * and optional marked frequencies (planted cycles, bands) as labelled ticks at the map's edges. Drawn as SVG
 * text (the map itself is an embedded PNG with one cell per pixel block, as matplotlib embeds its
 * images); `svgToPng` (rasterize.ts) turns the figure into a PNG. Pure: no CUDA, no DOM.
 */
import { VIRIDIS, type Colormap } from './colormap.js';
import {
  checkValues,
  encodePng,
  spectrogramImage,
  SpectrogramInputError,
  type SpectrogramInput,
} from './spectrogram-png.js';
import { checkPixels, MAX_IMAGE_SIDE } from './sizes.js';
import { escapeXml, niceStep } from './timeline-svg.js';

/** A frequency to mark on the figure: white ticks at both edges of the map and its label. */
export interface FrequencyMarker {
  /** Hz. Markers outside the frequency axis are left out. */
  frequency: number;
  label: string;
}

/** The values and their axes: scipy.signal.stft's `f` and `t` beside `Zxx`'s magnitudes. */
export interface SpectrogramFigureInput extends SpectrogramInput {
  /** The frequency of each row in Hz, ascending and evenly spaced (scipy's `f`). */
  f: ArrayLike<number>;
  /** The time of each frame in seconds, ascending and evenly spaced (scipy's `t`). */
  t: ArrayLike<number>;
}

/** How the figure looks. */
export interface SpectrogramFigureOptions {
  /** The first line on top (default 'spectrogram'). */
  title?: string | undefined;
  /** A second, smaller line: the parameters the figure was made with (fs, nperseg, window, ...). */
  subtitle?: string | undefined;
  /** Decibels below the peak that the colour scale spans (default 80). */
  dynamicRangeDb?: number | undefined;
  /** The whole figure in pixels (default 1100 x 560; at least 320 x 200, at most MAX_IMAGE_SIDE a side). */
  width?: number | undefined;
  height?: number | undefined;
  colormap?: Colormap | undefined;
  /** The colour bar's title (default '|Zxx| (dB)', or '|Zxx|² (dB)' for power). */
  colorbarLabel?: string | undefined;
  markers?: readonly FrequencyMarker[] | undefined;
}

/** The figure and what it shows. */
export interface SpectrogramFigure {
  svg: string;
  width: number;
  height: number;
  /** The dB values at the colour scale's top and bottom. */
  peakDb: number;
  floorDb: number;
}

const FONT = 'DejaVu Sans, Helvetica, Arial, sans-serif';
const INK = '#111827';
const MUTED = '#4b5563';
const px = (v: number): string => (Math.round(v * 100) / 100).toString();

/** Most ticks ticks() is asked for: an axis of MAX_IMAGE_SIDE pixels has far fewer. */
export const MAX_TICKS = 1000;

/** Round tick values within [lo, hi], about `count` (at most MAX_TICKS) of them. */
export function ticks(lo: number, hi: number, count: number): number[] {
  // A count of 10^9 built 10^9 ticks.
  if (!(count >= 0 && count <= MAX_TICKS))
    throw new RangeError(`ticks() count must be a number from 0 to ${MAX_TICKS}, got ${count}`);
  if (!(hi > lo)) return [lo];
  const step = niceStep(hi - lo, count);
  // An infinite range has no round ticks (the loop below made none before niceStep's guard).
  if (!Number.isFinite(step)) return [];
  // A range a few ulps wide far from 0 (1e300 to its next double) puts lo / step beyond the safe
  // integers, where k++ stops counting and the loop below never ended: no round tick fits there.
  if (!Number.isSafeInteger(Math.ceil(lo / step - 1e-9)) || !Number.isSafeInteger(Math.floor(hi / step) + 1))
    return [lo];
  const out: number[] = [];
  // By index, not by repeated addition: 0.1 + 0.2 drifts, k * step rounded to the step's decimals does not.
  const decimals = Math.max(0, Math.min(12, -Math.floor(Math.log10(step)) + 1));
  for (let k = Math.ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k++)
    out.push(Number((k * step).toFixed(decimals)) || 0);
  return out;
}

/** A tick label with no more digits than the step needs ('0.25', '120', '1.5k' never: plain numbers). */
export function tickLabel(v: number, step: number): string {
  const decimals = Math.max(0, Math.min(6, -Math.floor(Math.log10(step) + 1e-9)));
  return v.toFixed(decimals);
}

/** The spacing of an evenly spaced axis (1 for a single value, so a one-frame map still has a width). */
function spacing(values: ArrayLike<number>, what: string): number {
  for (let i = 0; i < values.length; i++)
    if (!Number.isFinite(values[i]!))
      throw new SpectrogramInputError(`${what}[${i}] is ${values[i]}; axes must be finite`);
  if (values.length < 2) return 1;
  const d = (values[values.length - 1]! - values[0]!) / (values.length - 1);
  if (!(d > 0)) throw new SpectrogramInputError(`${what} must be ascending`);
  return d;
}

/** The spectrogram figure as SVG text. */
export function spectrogramSvg(
  input: SpectrogramFigureInput,
  options: SpectrogramFigureOptions = {},
): SpectrogramFigure {
  if (typeof input !== 'object' || input === null)
    throw new TypeError(
      `spectrogramSvg() input must be an object { values, frequencies, frames, f, t }, got ${input === null ? 'null' : typeof input}`,
    );
  if (typeof options !== 'object' || options === null)
    throw new TypeError(
      `spectrogramSvg() options must be an object, got ${options === null ? 'null' : typeof options}`,
    );
  checkValues(input.f, 'spectrogramSvg() f');
  checkValues(input.t, 'spectrogramSvg() t');
  if (input.f.length !== input.frequencies)
    throw new SpectrogramInputError(`f has ${input.f.length} values for ${input.frequencies} frequencies`);
  if (input.t.length !== input.frames)
    throw new SpectrogramInputError(`t has ${input.t.length} values for ${input.frames} frames`);
  const df = spacing(input.f, 'f');
  const dt = spacing(input.t, 't');
  // Bounded before the map's pixels are allocated (40000 x 40000 asked for 6 GB).
  const width = Math.round(
    options.width === undefined
      ? 1100
      : checkPixels(options.width, 'spectrogramSvg() width', MAX_IMAGE_SIDE, false, SpectrogramInputError),
  );
  const height = Math.round(
    options.height === undefined
      ? 560
      : checkPixels(options.height, 'spectrogramSvg() height', MAX_IMAGE_SIDE, false, SpectrogramInputError),
  );
  if (!(width >= 320 && height >= 200))
    throw new SpectrogramInputError(`the figure must be at least 320 x 200 pixels, got ${width} x ${height}`);

  // Layout: title block on top, tick labels and axis titles left and below, the colour bar right.
  const top = options.subtitle ? 64 : 44;
  const left = 78;
  const bottom = 56;
  const right = 112;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const image = spectrogramImage(input, {
    width: plotW,
    height: plotH,
    dynamicRangeDb: options.dynamicRangeDb,
    colormap: options.colormap,
  });
  const map = `data:image/png;base64,${encodePng(image).toString('base64')}`;

  // Cell edges, as pcolormesh with shading='nearest' puts them: halfway between the centres.
  const t0 = input.t[0]! - dt / 2;
  const t1 = input.t[input.frames - 1]! + dt / 2;
  const f0 = Math.max(0, input.f[0]! - df / 2);
  const f1 = input.f[input.frequencies - 1]! + df / 2;
  const fLow = input.f[0]! - df / 2;
  const xAt = (t: number): number => left + ((t - t0) / (t1 - t0)) * plotW;
  const yAt = (f: number): number => top + plotH - ((f - fLow) / (f1 - fLow)) * plotH;

  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${FONT}">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text class="title" x="${px(left + plotW / 2)}" y="24" font-size="16" font-weight="600" fill="${INK}" text-anchor="middle">${escapeXml(options.title ?? 'spectrogram')}</text>`,
  ];
  if (options.subtitle) {
    parts.push(
      `<text class="subtitle" x="${px(left + plotW / 2)}" y="44" font-size="12" fill="${MUTED}" text-anchor="middle">${escapeXml(options.subtitle)}</text>`,
    );
  }
  parts.push(
    `<image class="map" x="${left}" y="${top}" width="${plotW}" height="${plotH}" preserveAspectRatio="none" image-rendering="optimizeSpeed" href="${map}"/>`,
    `<rect class="frame" x="${left}" y="${top}" width="${plotW}" height="${plotH}" fill="none" stroke="${INK}" stroke-width="1"/>`,
  );

  // Time axis.
  const timeTicks = ticks(t0, t1, Math.max(3, Math.floor(plotW / 90)));
  const timeStep = timeTicks.length > 1 ? timeTicks[1]! - timeTicks[0]! : 1;
  parts.push('<g class="x-axis">');
  for (const v of timeTicks) {
    const x = px(xAt(v));
    parts.push(
      `<line x1="${x}" y1="${top + plotH}" x2="${x}" y2="${top + plotH + 5}" stroke="${INK}"/>`,
      `<text class="tick" x="${x}" y="${top + plotH + 19}" font-size="11" fill="${INK}" text-anchor="middle">${tickLabel(v, timeStep)}</text>`,
    );
  }
  parts.push(
    `<text class="axis-title" x="${px(left + plotW / 2)}" y="${height - 12}" font-size="13" fill="${INK}" text-anchor="middle">time (s)</text>`,
    '</g>',
  );

  // Frequency axis.
  const freqTicks = ticks(f0, f1, Math.max(3, Math.floor(plotH / 60)));
  const freqStep = freqTicks.length > 1 ? freqTicks[1]! - freqTicks[0]! : 1;
  parts.push('<g class="y-axis">');
  for (const v of freqTicks) {
    const y = px(yAt(v));
    parts.push(
      `<line x1="${left - 5}" y1="${y}" x2="${left}" y2="${y}" stroke="${INK}"/>`,
      `<text class="tick" x="${left - 8}" y="${px(yAt(v) + 4)}" font-size="11" fill="${INK}" text-anchor="end">${tickLabel(v, freqStep)}</text>`,
    );
  }
  const midY = px(top + plotH / 2);
  parts.push(
    `<text class="axis-title" x="18" y="${midY}" font-size="13" fill="${INK}" text-anchor="middle" transform="rotate(-90 18 ${midY})">frequency (Hz)</text>`,
    '</g>',
  );

  // Marked frequencies: white ticks at the map's edges, the label on a dark box near its right end;
  // labels of close frequencies step left instead of covering each other.
  const markers = (options.markers ?? []).filter(
    (m) => Number.isFinite(m.frequency) && m.frequency >= fLow && m.frequency <= f1,
  );
  if (markers.length > 0) {
    parts.push('<g class="markers">');
    const placed: { x: number; y: number; w: number }[] = [];
    for (const m of markers) {
      const y = yAt(m.frequency);
      const w = [...m.label].length * 6.3 + 10;
      // Above the line, unless the line is near the top: then below it.
      const boxY = y - 18 < top ? y + 3 : y - 18;
      let boxX = left + plotW - w - 4;
      for (let moved = true; moved;) {
        moved = false;
        for (const other of placed) {
          if (Math.abs(other.y - boxY) < 16 && boxX < other.x + other.w + 6 && boxX + w > other.x - 6) {
            boxX = other.x - w - 10;
            moved = true;
          }
        }
      }
      boxX = Math.max(left + 4, boxX);
      placed.push({ x: boxX, y: boxY, w });
      parts.push(
        // Ticks at both edges rather than a line across: the marked feature itself stays visible.
        `<line x1="${left}" y1="${px(y)}" x2="${left + 14}" y2="${px(y)}" stroke="#ffffff" stroke-width="2"/>`,
        `<line x1="${left + plotW - 14}" y1="${px(y)}" x2="${left + plotW}" y2="${px(y)}" stroke="#ffffff" stroke-width="2"/>`,
        `<rect x="${px(boxX)}" y="${px(boxY)}" width="${px(w)}" height="15" rx="3" fill="#000000" opacity="0.6"/>`,
        `<text class="marker" x="${px(boxX + w - 5)}" y="${px(boxY + 11)}" font-size="11" fill="#ffffff" text-anchor="end">${escapeXml(m.label)}</text>`,
      );
    }
    parts.push('</g>');
  }

  // Colour bar: the colormap as a 1-pixel-wide image stretched over the plot's height, dB ticks.
  const colormap = options.colormap ?? VIRIDIS;
  const bar = new Uint8Array(256 * 4);
  for (let i = 0; i < 256; i++) {
    const src = 3 * (255 - i);
    bar.set([colormap.table[src]!, colormap.table[src + 1]!, colormap.table[src + 2]!, 255], 4 * i);
  }
  const barPng = `data:image/png;base64,${encodePng({ width: 1, height: 256, rgba: bar }).toString('base64')}`;
  const barX = left + plotW + 18;
  const barW = 16;
  const dbAt = (db: number): number => top + plotH - ((db - image.floorDb) / (image.peakDb - image.floorDb)) * plotH;
  parts.push(
    '<g class="colorbar">',
    `<image x="${barX}" y="${top}" width="${barW}" height="${plotH}" preserveAspectRatio="none" href="${barPng}"/>`,
    `<rect x="${barX}" y="${top}" width="${barW}" height="${plotH}" fill="none" stroke="${INK}" stroke-width="1"/>`,
  );
  const dbTicks = ticks(image.floorDb, image.peakDb, Math.max(3, Math.floor(plotH / 50)));
  const dbStep = dbTicks.length > 1 ? dbTicks[1]! - dbTicks[0]! : 1;
  for (const v of dbTicks) {
    const y = px(dbAt(v));
    parts.push(
      `<line x1="${barX + barW}" y1="${y}" x2="${barX + barW + 5}" y2="${y}" stroke="${INK}"/>`,
      `<text class="tick" x="${barX + barW + 8}" y="${px(dbAt(v) + 4)}" font-size="11" fill="${INK}">${tickLabel(v, dbStep)}</text>`,
    );
  }
  const barLabel = options.colorbarLabel ?? (input.kind === 'power' ? '|Zxx|² (dB)' : '|Zxx| (dB)');
  const barMid = px(top + plotH / 2);
  const barTitleX = width - 14;
  parts.push(
    `<text class="axis-title" x="${barTitleX}" y="${barMid}" font-size="13" fill="${INK}" text-anchor="middle" transform="rotate(-90 ${barTitleX} ${barMid})">${escapeXml(barLabel)}</text>`,
    '</g>',
    '</svg>',
  );
  return { svg: parts.join('\n'), width, height, peakDb: image.peakDb, floorDb: image.floorDb };
}
