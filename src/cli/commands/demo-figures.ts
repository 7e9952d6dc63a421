/**
 * The demo's pictures, from numbers to SVG and PNG, without CUDA: the spectrogram of series 0 as
 * a figure (axes in s and Hz, a dB colour bar, the job's parameters in the title, the planted
 * cycles marked) and the band powers by planted cycle. demo-run.ts feeds them the GPU's results;
 * scripts/docs-figures.ts feeds them a CPU STFT to draw the README's sample pictures.
 */
import { toBandChartSvg } from '../../report/band-chart-svg.js';
import { svgToPng } from '../../report/rasterize.js';
import { spectrogramSvg } from '../../report/spectrogram-svg.js';
import { CHIRP_HZ, DEMO_FS, dominantIndexOf, type PlantedCycle } from './demo-plan.js';

/** A picture in both forms: the SVG source and its PNG. */
export interface Picture {
  svg: string;
  png: Buffer;
}

/** What the spectrogram of one demo series shows. */
export interface DemoSpectrogramInput {
  /** |Zxx|, frequencies x frames (scipy's layout). */
  magnitude: ArrayLike<number>;
  f: ArrayLike<number>;
  t: ArrayLike<number>;
  /** Samples of the series and the STFT's segment geometry, for the title. */
  length: number;
  nperseg: number;
  noverlap: number;
  planted: readonly PlantedCycle[];
  /** Which series it is (its dominant planted cycle is named so). */
  series: number;
  /** Where it ran, for the title ('NVIDIA H100 80GB HBM3'). */
  device?: string | undefined;
}

const fmt = (v: number): string => Number(v.toPrecision(3)).toString();

/** The spectrogram figure of one demo series. */
export function demoSpectrogram(input: DemoSpectrogramInput): Picture {
  const dominant = dominantIndexOf(input.series, input.planted.length);
  const figure = spectrogramSvg(
    { values: input.magnitude, frequencies: input.f.length, frames: input.t.length, f: input.f, t: input.t },
    {
      title: `tscuda demo: spectrogram of series ${input.series}${input.device ? ` (${input.device})` : ''}`,
      subtitle: `${input.length} samples at ${DEMO_FS} Hz; Hann window, nperseg ${input.nperseg}, noverlap ${input.noverlap}, linear detrend (tscuda/signal stft); chirp ${CHIRP_HZ[0]}→${CHIRP_HZ[1]} Hz, noise, trend, DC`,
      dynamicRangeDb: 60,
      width: 1200,
      height: 600,
      markers: input.planted.map((p, k) => ({
        frequency: p.frequency,
        label: `planted ${fmt(p.period * 1000)} ms cycle (${fmt(p.frequency)} Hz)${k === dominant ? ', dominant here' : ''}`,
      })),
    },
  );
  return { svg: figure.svg, png: svgToPng(figure.svg) };
}

/** The band powers of the demo's series, averaged over the series each planted cycle dominates. */
export function demoBandPowers(powers: ArrayLike<number>, batch: number, planted: readonly PlantedCycle[]): Picture {
  const bands = planted.map((p) => p.band);
  const series = planted.map((p, k) => {
    const values = bands.map((_, j) => {
      let sum = 0;
      let count = 0;
      for (let s = k; s < batch; s += planted.length) {
        sum += powers[s * bands.length + j]!;
        count++;
      }
      return count > 0 ? sum / count : 0;
    });
    return { name: `series dominated by ${fmt(p.frequency)} Hz`, values };
  });
  const svg = toBandChartSvg({
    title: 'band power by planted dominant cycle (engine, flag cycles)',
    unit: 'power (signal units²)',
    bands: planted.map((p) => ({ low: p.band[0], high: p.band[1], highlight: true })),
    series,
  });
  return { svg, png: svgToPng(svg) };
}
