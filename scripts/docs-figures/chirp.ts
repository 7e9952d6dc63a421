/**
 * docs/signal.md's picture: a linear chirp's spectrogram before and after the band-pass of the
 * sosfilt bench row (butter(8, [0.1, 0.25] of Nyquist, 'bandpass'), here at fs = 1 kHz: 50–125 Hz),
 * drawn by the project's own renderer (src/report/spectrogram-svg.ts, rasterized by resvg) from a
 * CPU STFT (cpu-stft.ts) of the chirp filtered by the float64 CPU reference of sosfilt
 * (bench/signal-ops/references.ts), so it is redrawn without a GPU; tscuda's `sosfilt` equals that
 * reference within 1e-5 (the bench row's check).
 */
import { sosfiltReference } from '../../bench/signal-ops/references.js';
import { uniformSource } from '../../bench/signal-ops/input.js';
import { SOSFILT_BAND, SOSFILT_ORDER } from '../../bench/signal-ops/rows/sosfilt.js';
import { svgToPng } from '../../src/report/rasterize.js';
import { spectrogramSvg, type SpectrogramFigure } from '../../src/report/spectrogram-svg.js';
import { butter } from '../../src/signal/index.js';
import { cpuStftMagnitude } from './cpu-stft.js';

export const CHIRP_FS = 1000;
export const CHIRP_SECONDS = 8;
/** The sweep, Hz: from near DC to near Nyquist. */
export const CHIRP_SWEEP: readonly [number, number] = [5, 480];
const NOISE = 0.01;
const NPERSEG = 256;
const NOVERLAP = 192;
const WIDTH = 1100;
const PANEL_HEIGHT = 440;

/** The chirp: sin(2π(f0 t + (f1 − f0) t² / 2T)) plus a little white noise (seeded), CHIRP_SECONDS at CHIRP_FS. */
export function chirpSignal(): Float64Array {
  const n = CHIRP_FS * CHIRP_SECONDS;
  const [f0, f1] = CHIRP_SWEEP;
  const uniform = uniformSource(2026);
  return Float64Array.from({ length: n }, (_, i) => {
    const t = i / CHIRP_FS;
    const noise = Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
    return Math.sin(2 * Math.PI * (f0 * t + ((f1 - f0) * t * t) / (2 * CHIRP_SECONDS))) + NOISE * noise;
  });
}

function panel(x: Float64Array, title: string, subtitle: string, band: readonly [number, number]): SpectrogramFigure {
  const { magnitude, f, t } = cpuStftMagnitude(x, {
    fs: CHIRP_FS,
    nperseg: NPERSEG,
    noverlap: NOVERLAP,
    detrend: false,
  });
  return spectrogramSvg(
    { values: magnitude, frequencies: f.length, frames: t.length, f, t },
    {
      title,
      subtitle,
      dynamicRangeDb: 100,
      width: WIDTH,
      height: PANEL_HEIGHT,
      markers: [
        { frequency: band[0], label: `pass band from ${band[0]} Hz` },
        { frequency: band[1], label: `to ${band[1]} Hz` },
      ],
    },
  );
}

/** The two panels, before above after, as one SVG and its PNG. */
export function bandPassedChirp(): { svg: string; png: Buffer; description: string } {
  const band: [number, number] = [(SOSFILT_BAND[0] * CHIRP_FS) / 2, (SOSFILT_BAND[1] * CHIRP_FS) / 2];
  const sos = butter(SOSFILT_ORDER, band, { btype: 'bandpass', fs: CHIRP_FS });
  const x = chirpSignal();
  const y = sosfiltReference(sos, x);
  const stft = `|STFT|: Hann, nperseg ${NPERSEG}, noverlap ${NOVERLAP}`;
  const before = panel(
    x,
    `a linear chirp, ${CHIRP_SWEEP[0]} → ${CHIRP_SWEEP[1]} Hz at ${CHIRP_FS} Hz, before`,
    `${CHIRP_SECONDS} s, amplitude 1, white noise of ${NOISE}; ${stft}`,
    band,
  );
  const after = panel(
    y,
    `after sosfilt(butter(${SOSFILT_ORDER}, [${band.join(', ')}], btype='bandpass', fs=${CHIRP_FS}), x)`,
    `${sos.length} second-order sections (the sosfilt bench row's filter), float64 on the CPU; ${stft}`,
    band,
  );
  const height = before.height + after.height;
  const svg = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}">`,
    before.svg.replace('<svg ', '<svg x="0" y="0" '),
    after.svg.replace('<svg ', `<svg x="0" y="${before.height}" `),
    '</svg>',
  ].join('\n');
  return {
    svg,
    png: svgToPng(svg),
    description: `${CHIRP_SECONDS * CHIRP_FS} samples, ${sos.length} sections, pass band ${band.join('–')} Hz`,
  };
}
