/**
 * A framed-stft job's framing (nperseg, noverlap) checked against the series, its flags and its
 * window (NOLA), and laid out as scipy.signal.stft lays it out (boundary 'zeros', padded). CUDA-free.
 */
import { fail } from './field-checks.js';
import { checkNOLA } from '../signal/inverse-geometry.js';
import type { ResolvedWindow, WindowSpec } from '../signal/window.js';
import { flagDef } from './parameters.js';
import type { JobFraming } from './normalized-job.js';
import type { JobSpec } from './types.js';

/** The framing of `spec` over series of `length` samples, or undefined without nperseg; throws JobValidationError naming the field. */
export function jobFraming(
  spec: Pick<JobSpec, 'nperseg' | 'noverlap'>,
  length: number,
  flags: ReadonlySet<string>,
  window: ResolvedWindow,
): JobFraming | undefined {
  if (spec.nperseg === undefined) {
    if (spec.noverlap !== undefined) fail('noverlap', 'needs nperseg (a framed stft)');
    return undefined;
  }
  const nperseg = spec.nperseg;
  if (nperseg > length) fail('nperseg', `${nperseg} is greater than the series length N = ${length}`);
  const noverlap = spec.noverlap === undefined ? Math.floor(nperseg / 2) : spec.noverlap;
  if (noverlap >= nperseg) fail('noverlap', `must be an integer in [0, nperseg = ${nperseg}), got ${noverlap}`);
  // The flag rows say which flags a framed job may run besides stft (none of the built-in ones today).
  const others = [...flags].filter((f) => f !== 'stft' && flagDef(f)?.framed !== true);
  if (!flags.has('stft') || others.length > 0)
    fail(
      'flags',
      `a framed job (nperseg) takes only the stft flag${others.length ? `, not ${others.join(', ')}` : ''}; submit those as a separate job`,
    );
  const windowSpec: WindowSpec = window.parameter === undefined ? window.name : [window.name, window.parameter];
  if (!checkNOLA(windowSpec, nperseg, noverlap))
    fail(
      'noverlap',
      `window ${JSON.stringify(windowSpec)} with nperseg = ${nperseg} and noverlap = ${noverlap} violates NOLA: the STFT cannot be inverted`,
    );
  const step = nperseg - noverlap;
  const extension = Math.floor(nperseg / 2);
  const extended = length + 2 * extension;
  const mod = (a: number, m: number): number => ((a % m) + m) % m;
  const paddedLength = extended + mod(mod(-(extended - nperseg), step), nperseg);
  const frames = Math.floor((paddedLength - noverlap) / step);
  return { nperseg, noverlap, step, extension, paddedLength, frames, freqs: Math.floor(nperseg / 2) + 1 };
}
