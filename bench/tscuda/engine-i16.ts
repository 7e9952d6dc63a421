/**
 * The STFT job with 16-bit samples (issue 26):
 *   stft_job_i16_gsamples_per_s    the job of stft_job_gsamples_per_s (stft + cycles, pinned arrays)
 *                                  with i16 samples in (scale I16_SCALE) and the filtered wave back
 *                                  in f16 (outputDtype): 2 bytes per sample each way
 *   stft_job_i16_bound_fraction    that rate over its bound measured in this run:
 *                                  min(pinned H2D, pinned D2H) GB/s / 2 B per sample
 *
 * The peers (bench/peers/stft_job16.py, through stft_job_peer.py) run the same job: same B, N,
 * scale and data. Before any timing, the first job's results are compared with float64 CPU
 * references of the quantized samples: a wrong engine is "not measured", never fast.
 */
import { fromF16 } from '../../src/runtime/index.js';
import type { JobResult, JobSpec } from '../../src/engine/index.js';
import { JobEngine } from '../../src/engine/index.js';
import { summarize } from '../harness/stats.js';
import { referenceCycles, referenceFiltered, relativeL2 } from './engine-reference.js';
import {
  closedLoop,
  IN_FLIGHT_PER_LANE,
  LANE_DEPTH,
  LANES,
  measurePcie,
  part,
  graphsNote,
  statsNote,
  WINDOW_MS,
  type Results,
} from './engine.js';
import { BANDS, FS, jobData, lend, PASS_BAND, PREVIEW_BINS, STFT_B, STFT_N, stftSpec } from './engine-jobs.js';
import { NotMeasured, type TscudaBenchmark } from './types.js';

/**
 * The i16 scale of the job (keep equal to bench/peers/stft_job16.py): the series (DC 3, a trend to
 * ~134, tones, noise) fit in 16 bits at 2^-7 per step, as an ADC's counts would.
 */
export const I16_SCALE = 2 ** -7;
/** f16 keeps 11 significant bits: the filtered wave within 1e-3 (relative L2) of float64. */
const F16_FILTERED_TOLERANCE = 1e-3;
const BAND_POWER_TOLERANCE = 1e-3;
const MAX_WINDOWS = 8;

/** Samples as i16 counts of I16_SCALE (rounded, clamped): what an ADC would deliver. */
export function quantizeI16(x: Float32Array, into?: Int16Array): Int16Array {
  const out = into ?? new Int16Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = Math.max(-32768, Math.min(32767, Math.round(x[i]! / I16_SCALE)));
  return out;
}

/** The first and last rows against float64 references of the dequantized samples; throws NotMeasured when off. */
function checkI16(result: JobResult, counts: Int16Array): string {
  const filtered = result.filtered;
  if (!(filtered instanceof Uint16Array) || !result.bandPowers)
    throw new NotMeasured('the i16 job returned no f16 filtered wave or no band powers');
  const n = STFT_N;
  let worstFiltered = 0;
  let worstBands = 0;
  for (const row of [0, STFT_B - 1]) {
    const x = Float64Array.from(counts.subarray(row * n, (row + 1) * n), (q) => q * I16_SCALE);
    worstFiltered = Math.max(
      worstFiltered,
      relativeL2(fromF16(filtered.subarray(row * n, (row + 1) * n)), referenceFiltered(x, FS, PASS_BAND)),
    );
    const ref = referenceCycles(x, FS, BANDS);
    worstBands = Math.max(
      worstBands,
      relativeL2(result.bandPowers.subarray(row * BANDS.length, (row + 1) * BANDS.length), ref.bandPowers),
    );
  }
  if (!(worstFiltered <= F16_FILTERED_TOLERANCE))
    throw new NotMeasured(
      `wrong result: the f16 filtered wave differs from the float64 reference by ${worstFiltered.toExponential(2)} (relative L2; tolerance ${F16_FILTERED_TOLERANCE})`,
    );
  if (!(worstBands <= BAND_POWER_TOLERANCE))
    throw new NotMeasured(
      `wrong result: band powers differ from the float64 reference by ${worstBands.toExponential(2)} (relative L2; tolerance ${BAND_POWER_TOLERANCE})`,
    );
  return `first job vs float64 CPU reference of the quantized samples (rows 0 and ${STFT_B - 1}): f16 filtered wave relative L2 ${worstFiltered.toExponential(2)}, band powers ${worstBands.toExponential(2)}`;
}

/** The pinned 16-bit job: i16 input and every result array lent by the engine (the filtered wave as f16 bits). */
export function pinnedI16Spec(engine: JobEngine, counts: Int16Array): JobSpec {
  const data = engine.hostBuffer('i16', STFT_B * STFT_N);
  data.set(counts);
  const into = {
    filtered: engine.hostBuffer('f16', STFT_B * STFT_N),
    spectrum: lend(engine, STFT_B * PREVIEW_BINS),
    bandPowers: lend(engine, STFT_B * BANDS.length, 'f64'),
  };
  return { ...stftSpec(new Float32Array(0)), data, batch: STFT_B, scale: I16_SCALE, outputDtype: 'f16', into };
}

export const ENGINE_I16_BENCHMARK: TscudaBenchmark = {
  names: ['stft_job_i16_gsamples_per_s', 'stft_job_i16_bound_fraction'],
  run: async (ctx) => {
    const out: Results = {};
    const windows = Math.max(3, Math.min(ctx.timing.reps, MAX_WINDOWS));
    await part(out, ['stft_job_i16_gsamples_per_s', 'stft_job_i16_bound_fraction'], async () => {
      const pcie = measurePcie(ctx);
      // 2 bytes per sample each way: the bound is twice the f32 job's.
      const bound16 = pcie.boundGsamples * 2;
      const counts = quantizeI16(jobData(STFT_B, STFT_N, 11));
      const engine = new JobEngine({
        device: ctx.device,
        lanes: LANES,
        laneDepth: LANE_DEPTH,
        precision: 'f32',
        maxQueued: 4 * LANES * IN_FLIGHT_PER_LANE,
        label: 'bench stft i16',
      });
      try {
        const specs = Array.from({ length: LANES * IN_FLIGHT_PER_LANE }, () => pinnedI16Spec(engine, counts));
        const check = checkI16(await engine.submit(specs[0]!).result, counts);
        const rates = await closedLoop(engine, specs, windows);
        const both16 = pcie.bothGsamples * 2;
        const bound =
          `16-bit bound ${bound16.toFixed(2)} Gsamples/s = min(pinned H2D ${pcie.h2d.toFixed(1)}, D2H ${pcie.d2h.toFixed(1)}) GB/s / 2 B per sample (this run); ` +
          `with both directions at once (the job's traffic) ${pcie.both.toFixed(1)} GB/s each way: ${both16.toFixed(2)} Gsamples/s, of which the job reached ${(summarize(rates).median / both16).toFixed(2)}`;
        const shape = `${LANES} lanes of depth ${LANE_DEPTH}, ${LANES * IN_FLIGHT_PER_LANE} jobs in flight of ${STFT_B} x ${STFT_N} i16 samples (scale 2^-7), flags stft + cycles (${BANDS.length} bands, bandWaves false), filtered wave back as f16 (outputDtype), ${windows} windows of ${WINDOW_MS} ms (src/engine)`;
        out.stft_job_i16_gsamples_per_s = {
          pass: summarize(rates),
          notes: [
            `input and results in engine-lent pinned arrays; ${shape}`,
            check,
            bound,
            statsNote(engine),
            graphsNote(engine),
          ],
        };
        out.stft_job_i16_bound_fraction = { pass: summarize(rates.map((r) => r / bound16)), notes: [bound] };
      } finally {
        await engine.close();
      }
    });
    return out;
  },
};
