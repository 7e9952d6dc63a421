/**
 * `tscuda filter <file>`: band-pass, low-pass or high-pass a WAV, raw or CSV signal on the GPU
 * (an IIR filter designed as scipy.signal designs it, run as sosfilt or sosfiltfilt) and write
 * the filtered signal as a WAV of the same sampling rate and channels. Options and input are
 * checked first, without CUDA (filter-plan.ts; usage errors exit 2, unreadable input 1), then
 * the output's folder and the GPU, and only then is the output made (filter-run.ts).
 */
import { dirname } from 'node:path';
import type { CliCommand } from '../command.js';
import { gpuMissingReason } from '../gpu-errors.js';
import { reportUsageError, UsageError } from '../options.js';
import { checkOutputFolder, OutputFolderError, prepareOutputFolder } from '../output-folder.js';
import { CommandReport, jsonAsked } from '../report.js';
import { SignalInputError } from '../signal-format.js';
import { FILTER_USAGE, parseFilterOptions, planFilter, type FilterPlan } from './filter-plan.js';

export * from './filter-plan.js';

/** The command the dispatcher lists. */
export const filterCommand: CliCommand = {
  name: 'filter',
  summary: 'band-pass, low-pass or high-pass a WAV/raw/CSV signal on the GPU into a WAV',
  usage: FILTER_USAGE,
  async run(args: string[]): Promise<number> {
    let plan: FilterPlan;
    const report = new CommandReport('filter', jsonAsked(args));
    try {
      const options = parseFilterOptions(args);
      if (options === 'help') {
        process.stdout.write(`${FILTER_USAGE}\n`);
        return 0;
      }
      plan = planFilter(options);
      for (const warning of plan.channels[0]!.warnings ?? []) report.note(warning);
      // The output's folder (named on any machine), then the GPU, then the folder made: nothing is left behind without a GPU.
      const folder = dirname(options.out);
      checkOutputFolder('out', folder);
      const missing = await gpuMissingReason('filter', []);
      if (missing !== undefined) return report.fail(`${missing}; filter needs a GPU`, 1, 'GpuUnavailable');
      prepareOutputFolder('out', folder);
    } catch (e) {
      if (e instanceof UsageError) return reportUsageError('filter', e.message, args);
      if (e instanceof SignalInputError || e instanceof OutputFolderError) return report.fail(e.message, 1, e.name);
      throw e;
    }
    const { runFilter } = await import('./filter-run.js');
    return runFilter(plan, report);
  },
};
