/**
 * SVG figures to PNG with resvg (`@resvg/resvg-js`: the Rust SVG renderer, prebuilt for each
 * platform, no system graphics library), so every picture tscuda writes has one source, the SVG
 * drawn in this folder, and a PNG that any viewer opens. Text is set in DejaVu Sans, shipped with
 * the package (`fonts/`, its licence beside it): GPU servers often have no fonts installed, and a
 * PNG rasterized with none has no lettering at all (seen on the lent H200 hosts: axes without a
 * single label). The system's fonts are loaded too, for anything DejaVu Sans lacks.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Resvg } from '@resvg/resvg-js';

/** The shipped font (exported for tests): `fonts/` at the package root, two folders up from src/report/ and from dist/report/. */
export const SHIPPED_FONT = fileURLToPath(new URL('../../fonts/DejaVuSans.ttf', import.meta.url));
const FONT_FILES = existsSync(SHIPPED_FONT) ? [SHIPPED_FONT] : [];

/** How to rasterize. */
export interface RasterOptions {
  /** Output width in pixels (the height follows the SVG's aspect); default the SVG's own width. */
  width?: number | undefined;
  /** Background behind transparent parts (default white). */
  background?: string | undefined;
}

/** PNG bytes of an SVG document. */
export function svgToPng(svg: string, options: RasterOptions = {}): Buffer {
  const resvg = new Resvg(svg, {
    background: options.background ?? '#ffffff',
    fitTo: options.width === undefined ? { mode: 'original' } : { mode: 'width', value: Math.round(options.width) },
    font: {
      fontFiles: FONT_FILES,
      loadSystemFonts: true,
      defaultFontFamily: 'DejaVu Sans',
      sansSerifFamily: 'DejaVu Sans',
    },
  });
  return resvg.render().asPng();
}
