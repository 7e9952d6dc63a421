/**
 * `tscuda demo` (and `npm start`): the job engine on a synthetic signal for a few seconds over
 * several lanes, a table of what it achieved, the cycles it found against those planted, and a
 * folder of pictures. The GPU part is loaded only when it runs (demo-run.ts), so `--help` and bad
 * options work anywhere; without a GPU it prints one line and exits 1.
 */
import type { CliCommand } from '../command.js';
import { DEVICE_FLAGS, deviceOptionsUsage, deviceSelection } from '../device-option.js';
import { folderOption, intOption, numberOption, parseCommandLine, reportUsageError, UsageError } from '../options.js';
import { OutputFolderError, outputFolderForGpuWork } from '../output-folder.js';
import { CommandReport } from '../report.js';
import type { DemoOptions } from './demo-plan.js';

export type { DemoOptions } from './demo-plan.js';

export const DEMO_USAGE = `usage: tscuda demo [options]
Runs the FFT job engine on a synthetic multi-tone chirp (noise, trend, DC and planted cycles of
known period) for a few seconds over several lanes on every GPU (--devices to choose), prints
throughput (jobs/s, Gsamples/s, share of the PCIe bound measured now on the GPUs used, all at
once), per-device and per-lane statistics, the speedup over one lane and the dominant cycles
found against those planted, and writes a folder with a spectrogram (PNG), band powers (SVG), the
lanes' timeline (SVG) and a Chrome trace (open in ui.perfetto.dev).
  --seconds S   length of the timed run (default 5)
  --lanes N     lanes (CUDA streams) per GPU (default 4)
  --out DIR     output folder (default tscuda-demo)
  --batch B     series per job (default 64)
  --length N    samples per series (default 65536)
${deviceOptionsUsage(16)}
  --quiet       no progress bar
  --json        the summary as one JSON object on stdout (the tables on stderr)
  --help        this text
example: tscuda demo --seconds 10 --lanes 8 --out /tmp/demo`;

/** Parses the demo's arguments; throws UsageError naming the bad option. */
export function parseDemoOptions(args: readonly string[]): DemoOptions {
  const { values, positionals } = parseCommandLine(
    args,
    {
      seconds: { type: 'string' },
      lanes: { type: 'string' },
      out: { type: 'string' },
      batch: { type: 'string' },
      length: { type: 'string' },
      ...DEVICE_FLAGS,
      quiet: { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    true,
  );
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const seconds = numberOption('seconds', values.seconds) ?? 5;
  if (seconds > 3600) throw new UsageError(`--seconds must be at most 3600, got ${seconds}`);
  return {
    seconds,
    lanes: intOption('lanes', values.lanes, 1, 64) ?? 4,
    out: folderOption('out', values.out, 'tscuda-demo'),
    batch: intOption('batch', values.batch, 1, 4096) ?? 64,
    length: intOption('length', values.length, 1024, 1 << 24) ?? 65536,
    devices: deviceSelection(values),
    quiet: values.quiet === true,
    json: values.json === true,
    help: values.help === true,
  };
}

/** The command the dispatcher lists. */
export const demoCommand: CliCommand = {
  name: 'demo',
  summary: 'the FFT job engine on a synthetic signal: throughput, cycles found, pictures (needs a GPU)',
  usage: DEMO_USAGE,
  async run(args: string[]): Promise<number> {
    let options: DemoOptions;
    try {
      options = parseDemoOptions(args);
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      return reportUsageError('demo', e.message, args);
    }
    if (options.help) {
      process.stdout.write(`${DEMO_USAGE}\n`);
      return 0;
    }
    const report = new CommandReport('demo', options.json);
    // The folder the pictures go to, and the GPU, before the timed run (output-folder.ts says the order).
    try {
      const failed = await outputFolderForGpuWork(report, options.out, 'the demo needs');
      if (failed !== undefined) return failed;
    } catch (e) {
      if (!(e instanceof OutputFolderError)) throw e;
      return report.fail(e.message, 1, e.name);
    }
    const { runDemo } = await import('./demo-run.js');
    return runDemo(options, report);
  },
};
