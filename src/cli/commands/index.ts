import { benchCommand } from '../bench.js';
import type { CliCommand } from '../command.js';
import { infoCommand } from '../info.js';
import { demoCommand } from './demo.js';
import { filterCommand } from './filter.js';
import { serveCommand } from './serve.js';
import { stftCommand } from './stft.js';
import { workerCommand } from './worker.js';

/** Every command of the CLI, in the order `tscuda --help` lists them. Each command file adds itself here. */
export const COMMANDS: readonly CliCommand[] = [
  infoCommand,
  demoCommand,
  stftCommand,
  filterCommand,
  benchCommand,
  serveCommand,
  workerCommand,
];
