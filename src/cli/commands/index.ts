import type { CliCommand } from '../command.js';

/** Every command of the CLI, in the order `tscuda --help` lists them. Each command file adds itself here. */
export const COMMANDS: readonly CliCommand[] = [];
