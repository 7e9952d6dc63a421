/**
 * `tscuda stft <file>`: the short-time Fourier transform of a WAV, raw .f32/.f64 or CSV signal
 * on the GPU, with scipy.signal.stft's option names and defaults. Writes the spectrogram (PNG),
 * the power in each `--band` (CSV and JSON) and each band's band-passed wave (32-bit float WAV).
 * Options and input are checked first, without CUDA (stft-plan.ts; usage errors exit 2,
 * unreadable input 1); the GPU part (stft-run.ts) is loaded only when they are good.
 */
import type { CliCommand } from '../command.js';
import { reportUsageError, UsageError } from '../options.js';
import { OutputFolderError, outputFolderForGpuWork } from '../output-folder.js';
import { CommandReport, jsonAsked } from '../report.js';
import { SignalInputError } from '../signal-format.js';
import { parseStftOptions, planStft, STFT_USAGE, type StftPlan } from './stft-plan.js';

export * from './stft-plan.js';

/** The command the dispatcher lists. */
export const stftCommand: CliCommand = {
  name: 'stft',
  summary: 'spectrogram, band powers and band-passed WAVs of a WAV/raw/CSV signal on the GPU',
  usage: STFT_USAGE,
  async run(args: string[]): Promise<number> {
    let plan: StftPlan;
    const report = new CommandReport('stft', jsonAsked(args));
    try {
      const options = parseStftOptions(args);
      if (options === 'help') {
        process.stdout.write(`${STFT_USAGE}\n`);
        return 0;
      }
      plan = planStft(options);
      // The input was read, but not all as its header said: say so, and go on.
      for (const warning of plan.input.warnings ?? []) report.note(warning);
      // The folder the results go to, and the GPU, before the GPU part (output-folder.ts says the order).
      const failed = await outputFolderForGpuWork(report, options.out, 'stft needs');
      if (failed !== undefined) return failed;
    } catch (e) {
      if (e instanceof UsageError) return reportUsageError('stft', e.message, args);
      if (e instanceof SignalInputError || e instanceof OutputFolderError) return report.fail(e.message, 1, e.name);
      throw e;
    }
    const { runStft } = await import('./stft-run.js');
    return runStft(plan, report);
  },
};
