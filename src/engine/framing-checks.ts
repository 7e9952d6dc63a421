/**
 * A framed-stft job's framing: the signal layer's geometry (geometry.ts: scipy.signal.stft's
 * boundary 'zeros', padded, nfft = nperseg) made once here, at submit, with its refusals named as
 * the job's fields; then the job's own rules: noverlap needs nperseg, stft is the only flag, and the
 * window inverts at this overlap (NOLA). Lanes run the geometry as it is. CUDA-free.
 */
import { fail } from './field-checks.js';
import { FramingError, spectralGeometry, STFT_DEFAULTS } from '../signal/geometry.js';
import { checkInvertible, NolaError } from '../signal/inverse-geometry.js';
import type { ResolvedWindow, WindowSpec } from '../signal/window.js';
import { flagDef } from './parameters.js';
import type { JobFraming, NormalizedJob } from './normalized-job.js';
import type { JobSpec } from './types.js';

/** The framing of `spec` (its fs and detrend filled in) over series of `length` samples, or undefined without nperseg; throws JobValidationError naming the field. */
export function jobFraming(
  spec: Pick<JobSpec, 'nperseg' | 'noverlap'> & Pick<NormalizedJob, 'fs' | 'detrend'>,
  length: number,
  flags: ReadonlySet<string>,
  window: ResolvedWindow,
): JobFraming | undefined {
  if (spec.nperseg === undefined) {
    if (spec.noverlap !== undefined) fail('noverlap', 'needs nperseg (a framed stft)');
    return undefined;
  }
  const windowSpec: WindowSpec = window.parameter === undefined ? window.name : [window.name, window.parameter];
  let framing: JobFraming;
  try {
    framing = spectralGeometry(
      length,
      {
        fs: spec.fs,
        window: windowSpec,
        nperseg: spec.nperseg,
        noverlap: spec.noverlap,
        detrend: spec.detrend,
        boundary: 'zeros',
        padded: true,
      },
      STFT_DEFAULTS,
    );
  } catch (e) {
    if (e instanceof FramingError) fail(e.field, e.detail);
    throw e;
  }
  // The flag rows say which flags a framed job may run besides stft (none of the built-in ones today).
  const others = [...flags].filter((f) => f !== 'stft' && flagDef(f)?.framed !== true);
  if (!flags.has('stft') || others.length > 0)
    fail(
      'flags',
      `a framed job (nperseg) takes only the stft flag${others.length ? `, not ${others.join(', ')}` : ''}; submit those as a separate job`,
    );
  try {
    checkInvertible(windowSpec, framing.window, framing.nperseg, framing.noverlap);
  } catch (e) {
    if (e instanceof NolaError) fail('noverlap', e.message);
    throw e;
  }
  return framing;
}
