/**
 * SVG figures to PNG with resvg (`@resvg/resvg-js`: the Rust SVG renderer, prebuilt for each
 * platform, no system graphics library), so every picture tscuda writes has one source, the SVG
 * drawn in this folder, and a PNG that any viewer opens. Text uses the system's fonts (DejaVu Sans
 * first, the figures' own first choice); without any font installed the PNG has no lettering, and
 * the SVG beside it still does.
 */
import { Resvg } from '@resvg/resvg-js';

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
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans', sansSerifFamily: 'DejaVu Sans' },
  });
  return resvg.render().asPng();
}
