/** Starts and stops the servers the serve bench loads: tscuda serve, the Python peer, the fault service. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** A started server process. */
export interface Service {
  name: string;
  base: string;
  child: ChildProcess;
  /** stderr lines with their arrival time (performance.now()). */
  lines: { at: number; text: string }[];
  /** SIGTERM, then the exit code (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<number | null>;
}

function track(name: string, base: string, child: ChildProcess, verbose: boolean): Service {
  const lines: { at: number; text: string }[] = [];
  let partial = '';
  child.stderr?.on('data', (d: Buffer) => {
    partial += d.toString();
    const parts = partial.split('\n');
    partial = parts.pop() ?? '';
    for (const text of parts) {
      lines.push({ at: performance.now(), text });
      if (verbose) process.stderr.write(`  [${name}] ${text}\n`);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    name,
    base,
    child,
    lines,
    async stop(graceMs = 20_000) {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Polls /v2/health/ready until 200; the last body when it never is within `timeoutMs`. */
export async function waitReady(
  base: string,
  timeoutMs: number,
  child?: ChildProcess,
): Promise<{ ready: boolean; reason: string }> {
  const t0 = performance.now();
  let reason = 'no answer';
  while (performance.now() - t0 < timeoutMs) {
    if (child !== undefined && child.exitCode !== null)
      return { ready: false, reason: `the process exited with code ${child.exitCode}` };
    try {
      const r = await fetch(`${base}/v2/health/ready`);
      const text = await r.text();
      if (r.status === 200) return { ready: true, reason: '' };
      reason = text;
      // No driver or no engine does not get better by waiting.
      if (/"reason":"no (CUDA driver|GPU engine)/.test(text)) return { ready: false, reason };
    } catch (e) {
      reason = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { ready: false, reason };
}

/** TSCUDA_BENCH_NODE_ARGS: extra node flags for a server (e.g. --cpu-prof; its workers inherit them). */
function benchNodeArgs(): string[] {
  return (process.env.TSCUDA_BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
}

/** `tscuda serve` as a user runs it (node + tsx on the CLI). */
export function startTscuda(root: string, port: number, args: string[], verbose: boolean): Service {
  // Checking the bench itself without a GPU: TSCUDA_SERVE_BENCH_WORKER names a worker entry
  // (e.g. test/unit/server/fixtures/fake-worker.ts) run under the fault service's supervisor.
  // The supervisor is the one tscuda serve runs; --workers is honoured (default 1).
  if (process.env.TSCUDA_SERVE_BENCH_WORKER !== undefined) {
    const option = (name: string): string | undefined =>
      args.includes(name) ? args[args.indexOf(name) + 1] : undefined;
    // The options the bench's rows pass, as the workers' configuration.
    const config: Record<string, number> = {};
    for (const [flag, key] of [
      ['--max-batch-delay-ms', 'maxBatchDelayMs'],
      ['--max-lag', 'maxEventLoopDelayMs'],
      ['--max-turn', 'maxTurnMs'],
    ] as const) {
      const v = option(flag);
      if (v !== undefined) config[key] = Number(v);
    }
    return startFaultService(root, port, Number(option('--workers') ?? 1), verbose, 0, config);
  }
  const child = spawn(
    process.execPath,
    [...benchNodeArgs(), '--import', 'tsx', join(root, 'src/cli/main.ts'), 'serve', '--port', String(port), ...args],
    {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  return track('tscuda', `http://127.0.0.1:${port}`, child, verbose);
}

/** The aiohttp peer; resolves with its first stdout line (ready, or why not). */
export async function startPython(
  root: string,
  port: number,
  verbose: boolean,
): Promise<{ service: Service; hello: { ready: boolean; reason?: string; backend?: string; version?: string } }> {
  const python = process.env.TSCUDA_BENCH_PYTHON || 'python3';
  const child = spawn(python, [join(root, 'bench/serve/python_peer.py'), '--port', String(port)], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
  });
  const service = track('python', `http://127.0.0.1:${port}`, child, verbose);
  const hello = await new Promise<{ ready: boolean; reason?: string; backend?: string; version?: string }>(
    (resolve) => {
      let out = '';
      const timer = setTimeout(() => resolve({ ready: false, reason: 'no ready line within 120 s' }), 120_000);
      child.once('error', (e) => (clearTimeout(timer), resolve({ ready: false, reason: `${python}: ${e.message}` })));
      child.once(
        'exit',
        (code) => (
          clearTimeout(timer),
          resolve({
            ready: false,
            reason: `exited with code ${code}: ${service.lines
              .slice(-3)
              .map((l) => l.text)
              .join(' / ')}`,
          })
        ),
      );
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const line = out.split('\n')[0];
        if (out.includes('\n') && line !== undefined) {
          clearTimeout(timer);
          try {
            resolve(JSON.parse(line) as { ready: boolean });
          } catch {
            resolve({ ready: false, reason: line });
          }
        }
      });
    },
  );
  return { service, hello };
}

/** The fault service: supervised workers with the bench-only fault stage (or TSCUDA_SERVE_BENCH_WORKER's entry); `config`: more of the workers' configuration. */
export function startFaultService(
  root: string,
  port: number,
  workers: number,
  verbose: boolean,
  standby = 0,
  config: Record<string, unknown> = {},
): Service {
  const child = spawn(
    process.execPath,
    [
      ...benchNodeArgs(),
      '--import',
      'tsx',
      join(root, 'bench/serve/fault-service.ts'),
      String(workers),
      String(port),
      String(standby),
      JSON.stringify(config),
    ],
    {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  return track('fault', `http://127.0.0.1:${port}`, child, verbose);
}

/** A server's /metrics text ('' when it does not answer); a scrape also starts tscuda's next event-loop window. */
export async function scrape(base: string): Promise<string> {
  try {
    return await (await fetch(`${base}/metrics`)).text();
  } catch {
    return '';
  }
}

/** Reads one gauge from a Prometheus exposition (the first series whose labels contain `labels`). */
export function gauge(text: string, name: string, labels = ''): number | null {
  return gauges(text, name, labels)[0] ?? null;
}

/** Every series of a gauge whose labels contain `labels` (in a cluster, one per worker). */
export function gauges(text: string, name: string, labels = ''): number[] {
  const out: number[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_]+)(\{[^}]*\})? ([-+\d.eE]+|NaN)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    if (labels !== '' && !(m[2] ?? '').includes(labels)) continue;
    out.push(Number(m[3]));
  }
  return out;
}
