/** One `tscuda <name>` command: the CLI's dispatcher lists these (src/cli/commands/index.ts). */
export interface CliCommand {
  /** The word after `tscuda`. */
  readonly name: string;
  /** One line for `tscuda --help`. */
  readonly summary: string;
  /** The whole `tscuda <name> --help` text: usage line, options, an example. */
  readonly usage: string;
  /**
   * Runs with the arguments after the command name (parse them with node:util parseArgs) and
   * resolves with the exit code: 0 done, 1 failed (one clear line on stderr), 2 bad usage.
   */
  run(args: string[]): Promise<number>;
}
