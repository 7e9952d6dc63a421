/**
 * The real `tscuda serve` as a child process for the lifecycle tests (no GPU needed: the server
 * then runs with live 200, ready 503): start it, wait for its lines, read its workers' pids.
 */
import { execa, type ResultPromise } from 'execa';
import { request, type Agent } from 'node:http';
import { createServer as netServer } from 'node:net';
import { join } from 'node:path';
import { PROCESS_INFO_ENV } from '../../../src/server/supervision/server-options.js';

export const ROOT = join(import.meta.dirname, '..', '..', '..');
export const BIN = join(ROOT, 'bin', 'tscuda.js');

/** A port free now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = netServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A running `tscuda serve`. */
export interface ServeProcess {
  child: ResultPromise<{ reject: false; forceKillAfterDelay: false }>;
  stderr(): string;
  /** Resolves once stderr matches `pattern` (rejects after `ms`). */
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpMatchArray>;
}

/** Starts `tscuda serve <args>` from the source checkout (bin/tscuda.js runs src/ through tsx). */
export function spawnServe(args: string[]): ServeProcess {
  // No forced SIGKILL 5 s after a kill(): the tests measure how the server ends by itself.
  // Process details in /v1/info (workerPids() reads the pids there; off by default).
  const child = execa('node', [BIN, 'serve', ...args], {
    cwd: ROOT,
    reject: false,
    forceKillAfterDelay: false,
    env: { [PROCESS_INFO_ENV]: '1' },
  });
  let err = '';
  const waiters = new Set<() => void>();
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
    for (const w of [...waiters]) w();
  });
  return {
    child,
    stderr: () => err,
    waitFor(pattern, ms = 45_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const m = pattern.exec(err);
          if (m !== null) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(m);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`stderr did not match ${String(pattern)} within ${ms} ms:\n${err}`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
  };
}

/** Starts `tscuda serve` on a free port and waits for its start line; resolves with the base URL. */
export async function startServe(args: string[]): Promise<ServeProcess & { base: string; port: number }> {
  const port = await freePort();
  const serve = spawnServe([...args, '--port', String(port)]);
  await serve.waitFor(/worker\(s\) on |\[serve\] listening on /);
  return { ...serve, port, base: `http://127.0.0.1:${port}` };
}

/** One request; resolves with its status, headers and body text, or with the network error's code. */
export function call(
  base: string,
  path: string,
  options: { method?: string; body?: string; agent?: Agent | false; timeoutMs?: number } = {},
): Promise<
  | { status: number; headers: Record<string, string | string[] | undefined>; text: string; reused: boolean }
  | { error: string; reused: boolean }
> {
  return new Promise((resolve) => {
    const url = new URL(base + path);
    const r = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: options.method ?? 'GET',
        agent: options.agent ?? false,
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, reused: r.reusedSocket }),
        );
        res.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message, reused: r.reusedSocket }));
      },
    );
    r.setTimeout(options.timeoutMs ?? 20_000, () =>
      r.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })),
    );
    r.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message, reused: r.reusedSocket }));
    if (options.body !== undefined) r.setHeader('content-type', 'application/json');
    r.end(options.body);
  });
}

/** The pids of the serving workers, read from /v1/info over fresh connections (the primary spreads connections round-robin); the service must run with TSCUDA_SERVE_PROCESS_INFO=1 (spawnServe sets it). */
export async function workerPids(base: string, workers: number): Promise<number[]> {
  const pids = new Set<number>();
  for (let i = 0; i < 40 && pids.size < workers; i++) {
    const r = await call(base, '/v1/info');
    if ('status' in r && r.status === 200) pids.add((JSON.parse(r.text) as { pid: number }).pid);
  }
  return [...pids];
}

/** True while a process with `pid` exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The lines of a text that are not empty. */
export const lines = (text: string): string[] => text.split('\n').filter((l) => l.trim() !== '');
