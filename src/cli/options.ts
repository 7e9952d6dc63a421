/**
 * Option parsing shared by the commands: node:util parseArgs (strict, so an unknown or
 * misspelt option is an error, not silently ignored) wrapped so that every mistake becomes a
 * UsageError whose message names the option; commands print it and exit with status 2.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { checkConnection, redactRedisUrl } from '../queue/connection.js';
import { nameOption } from '../queue/options.js';
import { CommandReport, jsonAsked, oneLine } from './report.js';

/** A mistake on the command line: exit status 2, the message and the usage text. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * `--workers -1` as `--workers=-1`: parseArgs refuses a string option's value that starts with a
 * dash as "ambiguous", which hides the real mistake; joined, the option's own check names it
 * ("--workers must be ..., got -1"). Only numbers are joined, so `--out --json` stays an error;
 * without `options`, every long option followed by a negative number is joined.
 */
export function joinNegativeValues(args: readonly string[], options?: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const next = args[i + 1];
    const name = a.startsWith('--') ? a.slice(2) : undefined;
    if (
      name !== undefined &&
      !name.includes('=') &&
      (options === undefined || options[name]?.type === 'string') &&
      next !== undefined &&
      /^-\d|^-\.\d/.test(next)
    ) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/** The CLI's one wording of an option no command knows (node:util words it its own way). */
export function unknownOptionLine(option: string): string {
  return `unknown option "${option}"`;
}

/**
 * node:util parseArgs' message as one line: its advice on positionals that start with a dash is
 * dropped, its three-line "argument is ambiguous" (an option whose value is missing, followed
 * by another option: `--lanes --quiet`) says what is wrong in one, and an unknown option is worded
 * as everywhere else in the CLI.
 */
export function parseErrorLine(message: string): string {
  const ambiguous = /^Option '([^']+)' argument is ambiguous\./.exec(message);
  if (ambiguous !== null)
    return `Option '${ambiguous[1]}' argument missing (an option follows it; write ${ambiguous[1]}=VALUE for a value that starts with a dash)`;
  const unknown = /^Unknown option '([^']+)'/.exec(message);
  if (unknown !== null) return unknownOptionLine(unknown[1]!);
  return oneLine(message.replace(/\. To specify a positional argument starting with a '-'.*$/s, ''));
}

/** parseArgs with strict checking; its errors become UsageErrors of one line. */
export function parseCommandLine<O extends Options>(args: readonly string[], options: O, allowPositionals: boolean) {
  try {
    return parseArgs({ args: joinNegativeValues(args, options), options, allowPositionals, strict: true });
  } catch (e) {
    throw new UsageError(parseErrorLine((e as Error).message));
  }
}

/** Decimal only (`12`, `-0.5`, `1e3`): Number() alone would take `0x10`, `0b11` and `0o7` too, which no option means. */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** `text` as a decimal number (blanks around it allowed), or NaN when it is not one. */
export function decimalNumber(text: string): number {
  return DECIMAL.test(text.trim()) ? Number(text) : Number.NaN;
}

/** A positive integer option (undefined when not given: the caller's default applies). */
export function intOption(
  name: string,
  value: string | undefined,
  min = 1,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim())) throw new UsageError(`--${name} must be a whole number, got "${value}"`);
  const n = Number(value);
  if (n < min || n > max) throw new UsageError(`--${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** A finite number option, strictly positive unless `allowZero`. */
export function numberOption(name: string, value: string | undefined, allowZero = false): number | undefined {
  if (value === undefined) return undefined;
  const n = decimalNumber(value);
  if (!Number.isFinite(n) || n < 0 || (!allowZero && n === 0)) {
    throw new UsageError(`--${name} must be a ${allowZero ? 'non-negative' : 'positive'} number, got "${value}"`);
  }
  return n;
}

/**
 * A Redis URL option (redis:// or rediss://), as given, checked by the queue's own rule
 * (queue/connection.ts) at parse time: a URL that can never connect (`redis://:x`, port 99999,
 * a database path `/abc`) is bad usage naming the option, not a connection failure later.
 */
export function redisUrlOption<V extends string | undefined>(name: string, value: V): V {
  if (value === undefined) return value;
  if (!/^rediss?:\/\/./.test(value))
    throw new UsageError(
      `--${name} must be a redis:// or rediss:// URL, got ${JSON.stringify(redactRedisUrl(value).slice(0, 100))}`,
    );
  try {
    checkConnection(value, `--${name}`);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  return value;
}

/** An output folder option: an empty one would resolve to the working directory, so it is refused. */
export function folderOption(name: string, value: string | undefined, fallback: string): string {
  const folder = value ?? fallback;
  if (folder.trim() === '') throw new UsageError(`--${name} must name a folder`);
  return folder;
}

/**
 * A queue name or key prefix (--queue, --prefix), checked by the queue's own rule (queue/options.ts)
 * at parse time: the queue would refuse it only after connecting to Redis, without naming the option.
 */
export function queueNameOption<V extends string | undefined>(name: 'queue' | 'prefix', value: V): V {
  if (value === undefined) return value;
  try {
    nameOption(`--${name}`, value, value);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  return value;
}

/** One of `choices`. */
export function choiceOption<T extends string>(
  name: string,
  value: string | undefined,
  choices: readonly T[],
): T | undefined {
  if (value === undefined) return undefined;
  if (!(choices as readonly string[]).includes(value))
    throw new UsageError(`--${name} must be one of ${choices.join(', ')}, got "${value}"`);
  return value as T;
}

/**
 * Reports a usage error the one way every command does: one line on stderr naming the command and
 * pointing at its --help, or, when the arguments asked for `--json`, one JSON object on stdout
 * (`{"ok": false, "error": {"name": "UsageError", "message"}}`) so a script reading JSON always gets
 * JSON. `--json=1` asks for JSON too (and is itself the mistake reported). The message is made one
 * line either way. Returns the exit status for bad usage, 2.
 */
export function reportUsageError(command: string | undefined, message: string, args: readonly string[] = []): 2 {
  const json = jsonAsked(args);
  const who = command === undefined ? 'tscuda' : `tscuda ${command}`;
  // The pointer at --help is for a person; a script reading JSON gets the message alone.
  new CommandReport(command, json).fail(json ? message : `${oneLine(message)} (${who} --help)`, 2, 'UsageError');
  return 2;
}
