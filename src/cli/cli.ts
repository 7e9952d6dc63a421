/**
 * The `tscuda` command line as a function: `main(argv)` resolves with the exit code. Exit codes: 0 done,
 * 1 failed (one line on stderr; the stack trace only with TSCUDA_DEBUG=1), 2 bad usage.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliCommand } from './command.js';
import { COMMANDS } from './commands/index.js';
import { parseErrorLine, reportUsageError, unknownOptionLine } from './options.js';
import { CommandReport, jsonAsked } from './report.js';

/** The package's version, from its package.json (two levels above src/cli or dist/cli). */
export function packageVersion(): string {
  const file = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'package.json');
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { version?: string | undefined }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** `tscuda --help`: the usage line and one line per command. */
export function usage(commands: readonly CliCommand[] = COMMANDS): string {
  const width = Math.max(8, ...commands.map((c) => c.name.length));
  return [
    'usage: tscuda <command> [options]',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'options:',
    '  -h, --help     this text; `tscuda <command> --help` for a command',
    '  -v, --version  the tscuda version',
    '',
    'example: tscuda info --json',
  ].join('\n');
}

const isHelp = (a: string | undefined): boolean => a === '-h' || a === '--help';

/** The usage error for a word that is no command (or an option where a command belongs). */
function unknownCommand(name: string, commands: readonly CliCommand[]): string {
  return `${name.startsWith('-') ? unknownOptionLine(name) : `unknown command "${name}"`}; the commands are ${commands.map((c) => c.name).join(', ')}`;
}

/** Runs the CLI with `argv` (without node and the script) and resolves with the exit code. */
export async function main(argv: readonly string[], commands: readonly CliCommand[] = COMMANDS): Promise<number> {
  // `tscuda --json <command> ...` is `tscuda <command> ... --json`: JSON is asked for the whole run.
  const leadingJson = argv[0] === '--json';
  const [name, ...args] = leadingJson ? [...argv.slice(1), '--json'] : argv;
  if (name === undefined || (leadingJson && name === '--json')) {
    // No command is a usage error (exit 2): a script that forgot its arguments must not pass.
    return reportUsageError(undefined, `a command is needed: ${commands.map((c) => c.name).join(', ')}`, argv);
  }
  if (isHelp(name) || name === 'help') {
    // `help -h` is general help; `tscuda --help stft` is `tscuda help stft`.
    const words = args.filter((a) => !isHelp(a));
    // A word more is a mistake (a script that meant something else), not help and exit 0.
    if (words.length > 1)
      return reportUsageError(
        undefined,
        `${name} takes at most one command name, got ${words.length} words: ${words.join(' ')}`,
        args,
      );
    const topicName = words[0];
    const topic = topicName === undefined ? undefined : commands.find((c) => c.name === topicName);
    // `tscuda help nosuch` is the same mistake as `tscuda nosuch`: general help and exit 0 would hide it.
    if (topicName !== undefined && !topic)
      return reportUsageError(undefined, unknownCommand(topicName, commands), args);
    console.log(topic ? topic.usage : usage(commands));
    return 0;
  }
  if (name === '--version' || name === '-v') {
    if (args.length > 0)
      return reportUsageError(
        undefined,
        `${name} takes no arguments, got ${args.map((a) => JSON.stringify(a)).join(' ')}`,
        args,
      );
    console.log(packageVersion());
    return 0;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) return reportUsageError(undefined, unknownCommand(name, commands), args);
  if (args.some(isHelp)) {
    console.log(command.usage);
    return 0;
  }
  try {
    return await command.run(args);
  } catch (e) {
    // node:util parseArgs rejects unknown or malformed options with these codes, and the commands'
    // own checks throw UsageError: bad usage, not failure.
    const code = (e as { code?: unknown }).code;
    if (
      (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) ||
      (e instanceof Error && e.name === 'UsageError')
    ) {
      return reportUsageError(name, parseErrorLine((e as Error).message), args);
    }
    new CommandReport(name, jsonAsked(args)).fail(
      e instanceof Error ? e.message : String(e),
      1,
      e instanceof Error ? e.name : 'Error',
    );
    if (process.env.TSCUDA_DEBUG && e instanceof Error && e.stack) console.error(e.stack);
    return 1;
  }
}
