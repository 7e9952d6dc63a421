/**
 * Option parsing shared by the commands: node:util parseArgs (strict, so an unknown or
 * misspelt option is an error, not silently ignored) wrapped so that every mistake becomes a
 * UsageError whose message names the option; commands print it and exit with status 2.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A mistake on the command line: exit status 2, the message and the usage text. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** parseArgs with strict checking; its errors become UsageErrors. */
export function parseCommandLine<O extends Options>(args: readonly string[], options: O, allowPositionals: boolean) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals, strict: true });
  } catch (e) {
    const message = (e as Error).message.replace(/\. To specify a positional argument starting with a '-'.*$/s, '');
    throw new UsageError(message);
  }
}

/** A positive integer option (undefined when not given: the caller's default applies). */
export function intOption(name: string, value: string | undefined, min = 1, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim())) throw new UsageError(`--${name} must be a whole number, got "${value}"`);
  const n = Number(value);
  if (n < min || n > max) throw new UsageError(`--${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** A finite number option, strictly positive unless `allowZero`. */
export function numberOption(name: string, value: string | undefined, allowZero = false): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || (!allowZero && n === 0)) {
    throw new UsageError(`--${name} must be a ${allowZero ? 'non-negative' : 'positive'} number, got "${value}"`);
  }
  return n;
}

/** One of `choices`. */
export function choiceOption<T extends string>(name: string, value: string | undefined, choices: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(choices as readonly string[]).includes(value)) throw new UsageError(`--${name} must be one of ${choices.join(', ')}, got "${value}"`);
  return value as T;
}
