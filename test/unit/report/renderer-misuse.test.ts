/**
 * The renderers' answers to extreme or wrong input: no endless axis loop (values near the largest
 * or smallest doubles, an infinite width), no NaN written into an SVG, no gigabyte allocated for
 * a mistaken size, and a TypeError naming a missing argument instead of reading null.
 */
import { describe, expect, it } from 'vitest';
import { BandChartInputError, toBandChartSvg } from '../../../src/report/band-chart-svg.js';
import { MAX_CHART_WIDTH, MAX_IMAGE_SIDE } from '../../../src/report/sizes.js';
import { spectrogramImage, SpectrogramInputError } from '../../../src/report/spectrogram-png.js';
import { spectrogramSvg, ticks } from '../../../src/report/spectrogram-svg.js';
import { niceStep, toSvgTimeline } from '../../../src/report/timeline-svg.js';
import type { TimelineRecord } from '../../../src/report/timeline.js';

const TIMEOUT = { timeout: 5_000 };
const chart = (values: number[], width?: number): string =>
  toBandChartSvg({
    bands: [{ low: 1, high: 2 }],
    series: [{ name: 'a', values }],
    ...(width === undefined ? {} : { width }),
  });
const rec = (startMs: number, endMs: number): TimelineRecord => ({
  name: 'op',
  kind: 'kernel',
  stream: 's0',
  startMs,
  endMs,
});
const finiteSvg = (svg: string): void => {
  expect(svg).not.toMatch(/NaN|Infinity/);
};

describe('band chart', () => {
  it.each([1.6e308, Number.MAX_VALUE, 5e-324, 1e-320])(
    'draws a value of %p with a bounded, finite axis',
    TIMEOUT,
    (v) => {
      const svg = chart([v]);
      finiteSvg(svg);
      // A grid line per tick: niceStep gives about five.
      const gridLines = svg.match(/stroke="#e5e7eb"/g) ?? [];
      expect(gridLines.length).toBeGreaterThanOrEqual(2);
      expect(gridLines.length).toBeLessThanOrEqual(12);
    },
  );

  it.each([Number.NaN, Infinity, -1, 0, MAX_CHART_WIDTH + 1])('refuses a width of %p, naming it', TIMEOUT, (width) => {
    expect(() => chart([1], width)).toThrow(BandChartInputError);
    expect(() => chart([1], width)).toThrow(
      `band chart width must be a number above 0 to ${MAX_CHART_WIDTH} pixels, got ${width}`,
    );
  });

  it('still draws a small width at its 420-pixel minimum', TIMEOUT, () => {
    expect(chart([1], 100)).toContain('width="420"');
  });

  it('refuses options, bands or series that are not there', TIMEOUT, () => {
    expect(() => toBandChartSvg(null as never)).toThrow(
      new TypeError('toBandChartSvg() takes an options object { bands, series, ... }, got null'),
    );
    expect(() => toBandChartSvg({ bands: null, series: [] } as never)).toThrow(
      new TypeError('toBandChartSvg(): bands must be an array, got null'),
    );
  });
});

describe('timeline SVG', () => {
  it.each([Infinity, Number.NaN, 0, -5, 1e7])('refuses a width of %p (Infinity looped forever)', TIMEOUT, (width) => {
    expect(() => toSvgTimeline([rec(0, 1)], { width })).toThrow(RangeError);
    expect(() => toSvgTimeline([rec(0, 1)], { width })).toThrow(
      `toSvgTimeline() width must be a number above 0 to ${MAX_CHART_WIDTH} pixels, got ${width}`,
    );
  });

  it('draws a span among the smallest subnormals (niceStep gave 0 and the axis looped)', TIMEOUT, () => {
    finiteSvg(toSvgTimeline([rec(0, 5e-324)]));
    finiteSvg(toSvgTimeline([rec(0, 1e-321)]));
  });

  it('niceStep is positive and finite wherever the span is', TIMEOUT, () => {
    for (const span of [5e-324, 1e-322, 1e-310, 1, 1e308, Number.MAX_VALUE]) {
      const step = niceStep(span, 12);
      expect(step, String(span)).toBeGreaterThan(0);
      expect(Number.isFinite(step), String(span)).toBe(true);
    }
    expect(niceStep(1, 5)).toBe(0.2);
  });

  it('refuses options that are not an object', TIMEOUT, () => {
    expect(() => toSvgTimeline([rec(0, 1)], null as never)).toThrow(
      new TypeError('toSvgTimeline() options must be an object { title?, width? }, got null'),
    );
  });
});

describe('spectrogram sizes are checked before the pixels are allocated', () => {
  const input = { values: [1], frequencies: 1, frames: 1 };

  it.each([
    ['width', { width: 60000, height: 60000 }, 60000],
    ['width', { width: Infinity, height: 10 }, Infinity],
    ['height', { height: 2.5 }, 2.5],
    ['minSize', { minSize: 1e5 }, 1e5],
    ['maxSize', { maxSize: -5 }, -5],
    ['maxSize', { maxSize: Number.NaN }, Number.NaN],
  ])('%s of %j', TIMEOUT, (what, options, got) => {
    expect(() => spectrogramImage(input, options)).toThrow(SpectrogramInputError);
    expect(() => spectrogramImage(input, options)).toThrow(
      `spectrogramImage() ${what} must be an integer from 1 to ${MAX_IMAGE_SIDE} pixels, got ${got}`,
    );
  });

  it('a minSize above maxSize, and an infinite dynamic range', TIMEOUT, () => {
    expect(() => spectrogramImage(input, { minSize: 300, maxSize: 200 })).toThrow(
      'spectrogramImage() minSize (300) must not exceed maxSize (200)',
    );
    expect(() => spectrogramImage(input, { dynamicRangeDb: Infinity })).toThrow(
      'dynamicRangeDb must be a finite number > 0, got Infinity',
    );
  });

  it('the largest side is accepted', TIMEOUT, () => {
    expect(spectrogramImage(input, { width: MAX_IMAGE_SIDE, height: 1 }).width).toBe(MAX_IMAGE_SIDE);
  });

  it('values, f or t missing: a TypeError naming them', TIMEOUT, () => {
    expect(() => spectrogramImage({ values: null as never, frequencies: 1, frames: 1 })).toThrow(
      new TypeError('spectrogramImage() values must be an array or a typed array of numbers, got null'),
    );
    expect(() => spectrogramImage(null as never)).toThrow(TypeError);
    expect(() => spectrogramSvg({ ...input, f: null as never, t: [0] })).toThrow(
      new TypeError('spectrogramSvg() f must be an array or a typed array of numbers, got null'),
    );
  });

  it('the figure: a side beyond the bound', TIMEOUT, () => {
    const figure = { ...input, f: [1], t: [0] };
    expect(() => spectrogramSvg(figure, { width: 40000, height: 40000 })).toThrow(
      new SpectrogramInputError(
        `spectrogramSvg() width must be a number above 0 to ${MAX_IMAGE_SIDE} pixels, got 40000`,
      ),
    );
    expect(() => spectrogramSvg(figure, { width: 1100, height: Infinity })).toThrow(SpectrogramInputError);
  });
});

describe('ticks() is bounded', () => {
  it('refuses a count beyond MAX_TICKS (10^9 built 10^9 ticks)', TIMEOUT, () => {
    expect(() => ticks(0, 1, 1e9)).toThrow(
      new RangeError('ticks() count must be a number from 0 to 1000, got 1000000000'),
    );
    expect(() => ticks(0, 1, Infinity)).toThrow(RangeError);
    expect(ticks(0, 1, 0)).toEqual([0, 1]);
  });

  it('a range a few ulps wide far from 0 ends (k++ stopped counting and looped forever)', TIMEOUT, () => {
    let ulp = 1;
    while (1e300 + ulp === 1e300) ulp *= 2;
    expect(ticks(1e300, 1e300 + ulp, 10)).toEqual([1e300]);
  });
});
