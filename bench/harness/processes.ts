/** Runs the child programs (nvcc, the native baseline, the Python peers), forwarding their stderr as progress. */
import { execa } from 'execa';

export interface ProcessResult {
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Set when the program could not run at all (not found, killed): what happened. */
  failure?: string;
  /** ENOENT and the like. */
  code?: string;
  wallS: number;
}

export interface RunOptions {
  timeoutMs: number;
  /** Each line the program writes to stderr, as it comes. */
  onStderrLine?: (line: string) => void;
  env?: Record<string, string>;
  cwd?: string;
}

export async function runProcess(file: string, args: readonly string[], options: RunOptions): Promise<ProcessResult> {
  const forward = options.onStderrLine;
  const t0 = performance.now();
  const r = await execa(file, args, {
    reject: false,
    timeout: options.timeoutMs,
    stdin: 'ignore',
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.env === undefined ? {} : { env: options.env }),
    stderr: [
      function* (line: unknown) {
        if (forward && typeof line === 'string') forward(line);
        yield line;
      },
    ],
    maxBuffer: 64 * 1024 * 1024,
  });
  const wallS = (performance.now() - t0) / 1000;
  const stdout = typeof r.stdout === 'string' ? r.stdout : '';
  const stderr = typeof r.stderr === 'string' ? r.stderr : '';
  const out: ProcessResult = { exitCode: r.exitCode, stdout, stderr, timedOut: r.timedOut, wallS };
  const code = (r as { code?: unknown }).code;
  if (typeof code === 'string') out.code = code;
  if (r.failed && r.exitCode === undefined) {
    out.failure = r.timedOut
      ? `timed out after ${Number((options.timeoutMs / 1000).toPrecision(3))} s`
      : r.signal
        ? `killed by ${r.signal}`
        : (r.shortMessage ?? 'could not run');
  }
  return out;
}
