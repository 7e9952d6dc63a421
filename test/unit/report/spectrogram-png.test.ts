import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { colorAt, colormapIndex, cssColorAt, GREYS, VIRIDIS } from '../../../src/report/colormap.js';
import {
  encodePng,
  spectrogramImage,
  SpectrogramInputError,
  spectrogramPng,
} from '../../../src/report/spectrogram-png.js';

function pixel(png: PNG, x: number, y: number): [number, number, number, number] {
  const i = 4 * (y * png.width + x);
  return [png.data[i]!, png.data[i + 1]!, png.data[i + 2]!, png.data[i + 3]!];
}

describe('viridis', () => {
  it("has matplotlib's 256 entries and endpoints", () => {
    expect(VIRIDIS.table.length).toBe(768);
    expect(cssColorAt(VIRIDIS, 0)).toBe('#440154');
    expect(cssColorAt(VIRIDIS, 1)).toBe('#fde725');
    // matplotlib's viridis(0.5) is (0.127568, 0.566949, 0.550556): entry 128.
    expect(colorAt(VIRIDIS, 0.5)).toEqual([33, 145, 140]);
  });

  it('maps [0, 1] onto the entries as a 256-entry ListedColormap does, clamping the rest', () => {
    expect(colormapIndex(0)).toBe(0);
    expect(colormapIndex(-3)).toBe(0);
    expect(colormapIndex(Number.NaN)).toBe(0);
    expect(colormapIndex(1)).toBe(255);
    expect(colormapIndex(7)).toBe(255);
    expect(colormapIndex(0.999)).toBe(255);
    expect(colormapIndex(0.5)).toBe(128);
    expect(colormapIndex(1 / 256 - 1e-9)).toBe(0);
  });

  it('gets brighter from end to end (a perceptual map is monotone in lightness)', () => {
    const luma = (i: number): number =>
      0.2126 * VIRIDIS.table[3 * i]! + 0.7152 * VIRIDIS.table[3 * i + 1]! + 0.0722 * VIRIDIS.table[3 * i + 2]!;
    // Monotone in perceived lightness (CAM02-UCS); with byte rounding and a simple luma, in steps of 8 entries.
    for (let i = 8; i < 256; i += 8) expect(luma(i), `entry ${i}`).toBeGreaterThan(luma(i - 8));
  });
});

describe('spectrogram PNG', () => {
  // 3 frequencies x 4 frames, frequency-major: the top bin is loudest in frame 3.
  const values = Float64Array.from([1e-4, 1e-4, 1e-4, 1e-4, 1e-2, 1e-2, 1e-2, 1e-2, 1e-3, 1e-3, 1e-3, 1]);

  it("decodes with the asked size, the peak at the map's top and the floor at its bottom", () => {
    const r = spectrogramPng({ values, frequencies: 3, frames: 4 }, { width: 4, height: 3, dynamicRangeDb: 60 });
    const png = PNG.sync.read(r.png);
    expect([png.width, png.height]).toEqual([4, 3]);
    expect([r.width, r.height]).toEqual([4, 3]);
    expect(r.peakDb).toBeCloseTo(0, 12);
    expect(r.floorDb).toBeCloseTo(-60, 12);
    // Highest frequency on the top row: frame 3 there is the peak (viridis' last entry).
    expect(pixel(png, 3, 0)).toEqual([0xfd, 0xe7, 0x25, 255]);
    // The lowest row is -80 dB, below the floor: viridis' first entry.
    for (let x = 0; x < 4; x++) expect(pixel(png, x, 2)).toEqual([0x44, 0x01, 0x54, 255]);
    // -40 dB is 20 dB above the floor of a 60 dB range: a third up the map.
    expect(pixel(png, 0, 1).slice(0, 3)).toEqual(colorAt(VIRIDIS, 20 / 60));
  });

  it('reads power in 10 log10 and frame-major layouts', () => {
    const frameMajor = new Float64Array(12);
    for (let f = 0; f < 3; f++) for (let t = 0; t < 4; t++) frameMajor[t * 3 + f] = values[f * 4 + t]!;
    const a = spectrogramImage({ values, frequencies: 3, frames: 4 }, { width: 4, height: 3 });
    const b = spectrogramImage(
      { values: frameMajor, frequencies: 3, frames: 4, layout: 'frame-major' },
      { width: 4, height: 3 },
    );
    expect(Buffer.from(b.rgba).equals(Buffer.from(a.rgba))).toBe(true);
    const power = spectrogramImage(
      { values: values.map((v) => v * v), frequencies: 3, frames: 4, kind: 'power' },
      { width: 4, height: 3 },
    );
    expect(power.peakDb).toBeCloseTo(0, 12);
    expect(Buffer.from(power.rgba).equals(Buffer.from(a.rgba))).toBe(true);
  });

  it('keeps a narrow line when shrinking (maximum, not average) and repeats pixels when growing', () => {
    const n = 1000;
    const wide = new Float32Array(n).fill(1e-6);
    wide[617] = 1; // one loud frame of 1000
    const img = spectrogramImage(
      { values: wide, frequencies: 1, frames: n },
      { width: 10, height: 2, colormap: GREYS },
    );
    const row = Array.from({ length: 10 }, (_, x) => img.rgba[4 * x]!);
    expect(row[6]).toBe(255);
    expect(row.filter((v) => v === 255)).toHaveLength(1);
    // Both rows show the single frequency bin.
    expect(img.rgba.slice(0, 40)).toEqual(img.rgba.slice(40, 80));
  });

  it('sizes itself within [minSize, maxSize] by default', () => {
    const img = spectrogramImage({ values: new Float32Array(129 * 5000).fill(1), frequencies: 129, frames: 5000 });
    expect([img.width, img.height]).toEqual([1600, 256]);
  });

  it('refuses inconsistent input, naming the field', () => {
    expect(() => spectrogramImage({ values: new Float32Array(5), frequencies: 2, frames: 3 })).toThrow(
      SpectrogramInputError,
    );
    expect(() => spectrogramImage({ values: new Float32Array(5), frequencies: 2, frames: 3 })).toThrow(
      /values has 5 entries, expected frequencies x frames = 2 x 3 = 6/,
    );
    expect(() => spectrogramImage({ values: new Float32Array(0), frequencies: 0, frames: 3 })).toThrow(
      /frequencies must be a positive integer/,
    );
    expect(() =>
      spectrogramImage({ values: new Float32Array(6), frequencies: 2, frames: 3 }, { dynamicRangeDb: 0 }),
    ).toThrow(/dynamicRangeDb/);
  });

  it('encodes any RGBA picture as a PNG that decodes to the same bytes', () => {
    const rgba = Uint8Array.from({ length: 4 * 6 }, (_, i) => (i * 37) % 256);
    const png = PNG.sync.read(encodePng({ width: 3, height: 2, rgba }));
    expect(Array.from(png.data)).toEqual(Array.from(rgba));
  });

  it('draws silence (all zeros) without NaN, at the bottom of the map', () => {
    const img = spectrogramImage({ values: new Float32Array(6), frequencies: 2, frames: 3 }, { width: 3, height: 2 });
    expect(Number.isFinite(img.peakDb)).toBe(true);
    expect(Array.from(img.rgba.slice(0, 3))).toEqual([0x44, 0x01, 0x54]);
  });
});
