import { existsSync, readFileSync } from 'node:fs';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { SHIPPED_FONT, svgToPng } from '../../../src/report/rasterize.js';

describe('figures carry their own font', () => {
  it('DejaVu Sans ships with the package (a GPU server may have no fonts: its PNGs would have no lettering)', () => {
    expect(existsSync(SHIPPED_FONT)).toBe(true);
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      files: string[];
    };
    expect(pkg.files).toContain('fonts');
  });

  it('text is drawn: a label rasterizes to dark pixels', () => {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="200" height="60"><text x="10" y="40" font-family="DejaVu Sans" font-size="28">Hz</text></svg>`;
    const png = PNG.sync.read(svgToPng(svg));
    let dark = 0;
    for (let i = 0; i < png.data.length; i += 4) if (png.data[i]! < 128) dark++;
    expect(dark).toBeGreaterThan(50);
  });
});
