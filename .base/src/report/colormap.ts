/**
 * Colormaps for images of spectra: matplotlib's viridis (perceptually uniform, readable in
 * grey and by colour-blind readers), as 256 8-bit RGB entries.
 *
 * The table is the CC0 data of the mpl-colormaps project (Stéfan van der Walt and Nathaniel
 * Smith), the same 256 entries matplotlib ships as `viridis`, rounded to bytes.
 */

/** A colormap: 256 RGB entries, index 0 for the lowest value and 255 for the highest. */
export interface Colormap {
  readonly name: string;
  /** 256 x 3 bytes: r, g, b of entry i at 3i, 3i+1, 3i+2. */
  readonly table: Uint8Array;
}

const VIRIDIS_HEX =
  '44015444025645045745055946075a46085c460a5d460b5e470d60470e61471063471164471365481467481668481769' +
  '48186a481a6c481b6d481c6e481d6f481f70482071482173482374482475482576482677482878482979472a7a472c7a' +
  '472d7b472e7c472f7d46307e46327e46337f463480453581453781453882443983443a83443b84433d84433e85423f85' +
  '4240864241864142874144874045884046883f47883f48893e49893e4a893e4c8a3d4d8a3d4e8a3c4f8a3c508b3b518b' +
  '3b528b3a538b3a548c39558c39568c38588c38598c375a8c375b8d365c8d365d8d355e8d355f8d34608d34618d33628d' +
  '33638d32648e32658e31668e31678e31688e30698e306a8e2f6b8e2f6c8e2e6d8e2e6e8e2e6f8e2d708e2d718e2c718e' +
  '2c728e2c738e2b748e2b758e2a768e2a778e2a788e29798e297a8e297b8e287c8e287d8e277e8e277f8e27808e26818e' +
  '26828e26828e25838e25848e25858e24868e24878e23888e23898e238a8d228b8d228c8d228d8d218e8d218f8d21908d' +
  '21918c20928c20928c20938c1f948c1f958b1f968b1f978b1f988b1f998a1f9a8a1e9b8a1e9c891e9d891f9e891f9f88' +
  '1fa0881fa1881fa1871fa28720a38620a48621a58521a68522a78522a88423a98324aa8325ab8225ac8226ad8127ad81' +
  '28ae8029af7f2ab07f2cb17e2db27d2eb37c2fb47c31b57b32b67a34b67935b77937b87838b9773aba763bbb753dbc74' +
  '3fbc7340bd7242be7144bf7046c06f48c16e4ac16d4cc26c4ec36b50c46a52c56954c56856c66758c7655ac8645cc863' +
  '5ec96260ca6063cb5f65cb5e67cc5c69cd5b6ccd5a6ece5870cf5773d05675d05477d1537ad1517cd2507fd34e81d34d' +
  '84d44b86d54989d5488bd6468ed64590d74393d74195d84098d83e9bd93c9dd93ba0da39a2da37a5db36a8db34aadc32' +
  'addc30b0dd2fb2dd2db5de2bb8de29bade28bddf26c0df25c2df23c5e021c8e020cae11fcde11dd0e11cd2e21bd5e21a' +
  'd8e219dae319dde318dfe318e2e418e5e419e7e419eae51aece51befe51cf1e51df4e61ef6e620f8e621fbe723fde725';

function fromHex(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** matplotlib's viridis: #440154 (dark violet) at 0 through #fde725 (yellow) at 1. */
export const VIRIDIS: Colormap = { name: 'viridis', table: fromHex(VIRIDIS_HEX) };

/** Greys from black to white, for tests and for printing. */
export const GREYS: Colormap = {
  name: 'greys',
  table: Uint8Array.from({ length: 768 }, (_, i) => Math.floor(i / 3)),
};

/**
 * The entry for `t` in [0, 1] (clamped; NaN maps to 0): the nearest of the 256 entries, as
 * matplotlib's ListedColormap with N = 256 picks them.
 */
export function colormapIndex(t: number): number {
  if (!(t > 0)) return 0;
  if (t >= 1) return 255;
  return Math.min(255, Math.floor(t * 256));
}

/** The colour of `t` in [0, 1] as [r, g, b] bytes. */
export function colorAt(map: Colormap, t: number): [r: number, g: number, b: number] {
  const i = 3 * colormapIndex(t);
  return [map.table[i]!, map.table[i + 1]!, map.table[i + 2]!];
}

/** The colour of `t` in [0, 1] as '#rrggbb', for SVG. */
export function cssColorAt(map: Colormap, t: number): string {
  return `#${colorAt(map, t)
    .map((v) => v.toString(16).padStart(2, '0'))
    .join('')}`;
}
