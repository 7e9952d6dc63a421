import { describe, expect, it } from 'vitest';
import { BandChartInputError, bandLabel, toBandChartSvg } from '../../../src/report/band-chart-svg.js';

/** Balanced tags, quoted attributes, no raw '<' or stray '&' in text (Node has no DOMParser). */
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

const bars = (svg: string): string[] => [...svg.matchAll(/<rect class="bar"[^>]*>/g)].map((m) => m[0]);
const attr = (el: string, name: string): number => Number(new RegExp(`\\s${name}="([^"]*)"`).exec(el)?.[1]);

describe('band power chart', () => {
  const bands = [
    { low: 0, high: 4 },
    { low: 4, high: 8, highlight: true },
    { low: 8, high: 13, label: 'alpha <8–13>' },
  ];

  it('is well-formed SVG with one bar per band and series, heights in proportion', () => {
    const svg = toBandChartSvg({
      title: 'EEG & co <test>',
      bands,
      series: [
        { name: 'Fz', values: [1, 2, 4] },
        { name: 'Cz', values: [0.5, 0, 3] },
      ],
    });
    assertWellFormedXml(svg);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('EEG &amp; co &lt;test&gt;');
    expect(svg).toContain('alpha &lt;8–13&gt;');
    const b = bars(svg);
    expect(b).toHaveLength(6);
    const heights = b.map((e) => attr(e, 'height'));
    // Fz: 1, 2, 4 then Cz: 0.5, 0, 3, in band order (band 0: Fz, Cz; band 1: Fz, Cz; ...).
    expect(heights[0]! / heights[4]!).toBeCloseTo(1 / 4, 2);
    expect(heights[2]! / heights[4]!).toBeCloseTo(2 / 4, 2);
    expect(heights[3]).toBe(0);
    // A legend names both series; the highlighted band gets a background.
    expect(svg).toContain('>Fz<');
    expect(svg).toContain('>Cz<');
    expect(svg).toContain('fill="#fef3c7"');
  });

  it('labels bands with their edges and bars with their values, as percent for shares', () => {
    expect(bandLabel(0.5, 12.25)).toBe('0.5–12.3 Hz');
    expect(bandLabel(0, 4)).toBe('0–4 Hz');
    const svg = toBandChartSvg({
      bands: bands.slice(0, 2),
      series: [{ name: 'share', values: [0.25, 0.75] }],
      unit: 'fraction',
    });
    assertWellFormedXml(svg);
    expect(svg).toContain('>25%<');
    expect(svg).toContain('>75%<');
    expect(svg).toContain('share of total power');
    expect(svg).toContain('>0–4 Hz<');
  });

  it('draws all-zero values without NaN', () => {
    const svg = toBandChartSvg({ bands: bands.slice(0, 1), series: [{ name: 'z', values: [0] }] });
    assertWellFormedXml(svg);
    expect(svg).not.toContain('NaN');
  });

  it('refuses bad input, naming it', () => {
    expect(() => toBandChartSvg({ bands: [], series: [{ name: 'a', values: [] }] })).toThrow(BandChartInputError);
    expect(() => toBandChartSvg({ bands, series: [] })).toThrow(/series is empty/);
    expect(() => toBandChartSvg({ bands, series: [{ name: 'a', values: [1] }] })).toThrow(
      /series "a" has 1 values for 3 bands/,
    );
    expect(() => toBandChartSvg({ bands: bands.slice(0, 1), series: [{ name: 'a', values: [Number.NaN] }] })).toThrow(
      /value 0 is NaN/,
    );
    expect(() => toBandChartSvg({ bands: [{ low: 5, high: 5 }], series: [{ name: 'a', values: [1] }] })).toThrow(
      /band 0 \[5, 5\] is not an interval/,
    );
  });
});
