/** Runs the CLI in this process (no child, no GPU needed for usage errors) and collects what it wrote. */
import { vi } from 'vitest';
import { main } from '../../../src/cli/cli.js';

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/** `tscuda ...argv` through main(): its exit code, stdout and stderr. */
export async function runCli(...argv: string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const w = (sink: string[]) =>
    ((chunk: string | Uint8Array) => (sink.push(String(chunk)), true)) as typeof process.stdout.write;
  vi.spyOn(process.stdout, 'write').mockImplementation(w(out));
  vi.spyOn(process.stderr, 'write').mockImplementation(w(err));
  vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(`${a.join(' ')}\n`));
  vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(`${a.join(' ')}\n`));
  try {
    const code = await main(argv);
    return { code, out: out.join(''), err: err.join('') };
  } finally {
    vi.restoreAllMocks();
  }
}

/** The non-empty lines of a command's output. */
export const outputLines = (s: string): string[] => s.trim().split('\n').filter(Boolean);
