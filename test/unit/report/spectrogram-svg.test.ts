/**
 * The spectrogram figure read as a person reads it: axes with round ticks and titles, a colour bar
 * with dB ticks, the title and parameters, marked frequencies; and its PNG, decoded, with the
 * map's bright row exactly where the frequency axis says the tone is.
 */
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { demoBandPowers, demoSpectrogram } from '../../../src/cli/commands/demo-figures.js';
import { DEMO_FS, plantedCycles } from '../../../src/cli/commands/demo-plan.js';
import { svgToPng } from '../../../src/report/rasterize.js';
import { SpectrogramInputError } from '../../../src/report/spectrogram-png.js';
import { spectrogramSvg, ticks } from '../../../src/report/spectrogram-svg.js';

// A 25 Hz tone: rows 0..50 Hz every 5 Hz, frames 0..2 s every 0.1 s, fresh noise each run.
const f = Array.from({ length: 11 }, (_, i) => 5 * i);
const t = Array.from({ length: 21 }, (_, i) => 0.1 * i);
const values = new Float32Array(f.length * t.length);
for (let r = 0; r < f.length; r++)
  for (let c = 0; c < t.length; c++) values[r * t.length + c] = f[r] === 25 ? 1 : 1e-4 * (1 + Math.random());
const input = { values, frequencies: f.length, frames: t.length, f, t };
const options = {
  title: 'test tone',
  subtitle: 'fs 100 Hz, nperseg 20',
  dynamicRangeDb: 60,
  markers: [{ frequency: 25, label: 'the tone' }],
};

const texts = (svg: string, cls: string): string[] =>
  [...svg.matchAll(new RegExp(`<text class="${cls}"[^>]*>([^<]*)</text>`, 'g'))].map((m) => m[1]!);
const pixel = (png: PNG, x: number, y: number): number[] =>
  Array.from(
    png.data.subarray(
      4 * (Math.round(y) * png.width + Math.round(x)),
      4 * (Math.round(y) * png.width + Math.round(x)) + 3,
    ),
  );

describe('spectrogramSvg', () => {
  const fig = spectrogramSvg(input, options);

  it('has the title, the parameters, both axis titles and the colour bar title', () => {
    expect(texts(fig.svg, 'title')).toEqual(['test tone']);
    expect(texts(fig.svg, 'subtitle')).toEqual(['fs 100 Hz, nperseg 20']);
    expect(texts(fig.svg, 'axis-title')).toEqual(['time (s)', 'frequency (Hz)', '|Zxx| (dB)']);
    expect(fig.svg).toMatch(/<g class="colorbar">[\s\S]*<image [^>]*href="data:image\/png;base64,/);
    expect(fig.svg).toMatch(/<image class="map" [^>]*href="data:image\/png;base64,/);
  });

  it('ticks: round values in seconds, Hz and dB, each on its axis', () => {
    const x = fig.svg.slice(fig.svg.indexOf('<g class="x-axis">'), fig.svg.indexOf('<g class="y-axis">'));
    const y = fig.svg.slice(fig.svg.indexOf('<g class="y-axis">'), fig.svg.indexOf('<g class="markers">'));
    const bar = fig.svg.slice(fig.svg.indexOf('<g class="colorbar">'));
    expect(texts(x, 'tick')).toEqual(['0.0', '0.5', '1.0', '1.5', '2.0']);
    expect(texts(y, 'tick')).toEqual(['0', '10', '20', '30', '40', '50']);
    // Peak 0 dB (|Z| = 1), floor -60 dB.
    expect(fig.peakDb).toBeCloseTo(0, 9);
    expect(fig.floorDb).toBeCloseTo(-60, 9);
    expect(texts(bar, 'tick')).toEqual(['-60', '-50', '-40', '-30', '-20', '-10', '0']);
  });

  it('marks the given frequencies with their labels', () => {
    expect(texts(fig.svg, 'marker')).toEqual(['the tone']);
    expect(
      texts(spectrogramSvg(input, { markers: [{ frequency: 900, label: 'off the axis' }] }).svg, 'marker'),
    ).toEqual([]);
  });

  it('rasterizes to a PNG of the figure size whose bright row sits at the 25 Hz tick', () => {
    const png = PNG.sync.read(svgToPng(fig.svg));
    expect([png.width, png.height]).toEqual([1100, 560]);
    // Layout: plot from y=64 to 504 spans -2.5..52.5 Hz (cell edges), x from 78 to 988.
    const yAt = (hz: number): number => 64 + 440 - ((hz + 2.5) / 55) * 440;
    const tickY = Number(/<text class="tick" x="70" y="([\d.]+)"[^>]*>20<\/text>/.exec(fig.svg)?.[1]) - 4;
    expect(tickY).toBeCloseTo(yAt(20), 1);
    const bright = pixel(png, 300, yAt(25));
    const dark = pixel(png, 300, yAt(10));
    expect(bright[0]! + bright[1]!).toBeGreaterThan(400); // viridis' yellow end (#fde725)
    expect(dark[1]!).toBeLessThan(40); // viridis' violet end (#440154)
    // The colour bar: yellow on top, violet at the bottom.
    const barX = 78 + 910 + 18 + 8;
    expect(pixel(png, barX, 66)[1]!).toBeGreaterThan(200);
    expect(pixel(png, barX, 502)[1]!).toBeLessThan(40);
  });

  it('rejects axes that do not match the values, naming the field', () => {
    expect(() => spectrogramSvg({ ...input, f: f.slice(1) }, options)).toThrow(SpectrogramInputError);
    expect(() => spectrogramSvg({ ...input, f: f.slice(1) }, options)).toThrow(/^f has 10 values for 11 frequencies/);
    expect(() => spectrogramSvg({ ...input, t: [...t].reverse() }, options)).toThrow(/t must be ascending/);
  });

  it('ticks() gives round steps', () => {
    expect(ticks(-0.05, 2.05, 10)).toEqual([0, 0.5, 1, 1.5, 2]);
    expect(ticks(-0.05, 2.05, 4)).toEqual([0, 1, 2]);
    expect(ticks(0.1, 0.75, 6)).toEqual([0.2, 0.4, 0.6]); // exactly 0.6, not 0.6000000000000001
    expect(ticks(0, 52.5, 7)).toEqual([0, 10, 20, 30, 40, 50]);
  });
});

describe("the demo's pictures", () => {
  it('the spectrogram names the planted cycles and the dominant one; the band chart has its axes; both PNGs decode', () => {
    const n = 4096;
    const planted = plantedCycles(n, DEMO_FS);
    const freqs = 129;
    const frames = 33;
    const magnitude = Float32Array.from({ length: freqs * frames }, () => Math.random());
    const fAxis = Array.from({ length: freqs }, (_, k) => (k * DEMO_FS) / 256);
    const tAxis = Array.from({ length: frames }, (_, i) => (i * 128) / DEMO_FS);
    const picture = demoSpectrogram({
      magnitude,
      f: fAxis,
      t: tAxis,
      length: n,
      nperseg: 256,
      noverlap: 128,
      planted,
      series: 1,
    });
    const labels = texts(picture.svg, 'marker');
    expect(labels).toHaveLength(planted.length);
    expect(labels.filter((l) => l.endsWith('dominant here'))).toEqual([labels[1]]);
    expect(texts(picture.svg, 'subtitle')[0]).toMatch(
      /^4096 samples at 1000 Hz; Hann window, nperseg 256, noverlap 128/,
    );
    expect(PNG.sync.read(picture.png).width).toBe(1200);

    const powers = Float64Array.from({ length: 8 * planted.length }, () => Math.random());
    const bands = demoBandPowers(powers, 8, planted);
    expect(bands.svg).toMatch(/>frequency band</);
    expect(bands.svg).toMatch(/power \(signal units²\)/);
    const png = PNG.sync.read(bands.png);
    expect([png.width, png.height]).toEqual([900, 420]);
  });
});
