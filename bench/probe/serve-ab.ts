/**
 * The serve bench's two slow rows (bench/results/serve-ab-20261127), old tree against new tree,
 * without a GPU: each tree's own createServer (its src/server/index.ts) over its tests' CUDA-free
 * FakeEngine and fakeBatcher, started in a child process with the options `tscuda serve --workers 1`
 * gives a worker (serverOptions of a default config: the engine owned, no logger, default limits;
 * plus the worker's job id prefix and metrics label), loaded by the serve bench's own closed loop
 * (bench/serve/load.ts, from this tree for both servers):
 *   - throughput: POST /v1/stft, 16 x 65536 f32 binary (4 MiB bodies), binary answers, c=16. The
 *     FakeEngine answers flags ['stft'] with `filtered` (same length as the data) and `spectrum`
 *     (batch x previewBins), the size of a real job's answer (4 x 16 x (65536 + 256) bytes);
 *   - batch: POST /v1/batch/gradient, JSON {items: 32 x 64 numbers}, binary answers, c=64.
 * The trees alternate each round (old first in odd rounds, new first in even ones); each load
 * reports 200s per second and the server process's CPU time per 200 (from /proc/PID/stat: the
 * number least moved by how the clients share the CPUs; 429s of load shedding cost CPU too). With
 * taskset and 2+ CPUs the server is pinned to CPU 0 and the clients to the others. Medians over
 * the rounds go to stdout.
 *   npx tsx bench/probe/serve-ab.ts [--old /work/main/.base] [--new .] [--rounds 5] [--duration 4]
 *     [--loads throughput,batch] [--client-processes 1] [--prof DIR]
 *   (--loads small: the serve bench's small f32 row, 4 x 4096 f32 at c=64; bench/probe/serve-inject-ab.ts
 *   alternates two trees' --inject runs of it)
 * --prof DIR: the servers run under `node --cpu-prof --cpu-prof-dir DIR/<old|new>` (the main
 * thread's profile and tsx's loader thread's, per run).
 * One tree in process, no sockets (fastify inject, shedding off; prints CPU ms per request):
 *   node --import tsx bench/probe/serve-ab.ts --serve 0 --root <tree> --inject 3000 [--loads batch] [--engine sim]
 * (inject hands a 4 MiB body over in one piece and builds a string of each answer: use it for the
 * batch row, not the throughput row.)
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { asciiSignal, closedLoop, type LoadRequest, type LoopReport } from '../serve/load.js';
import { closedLoopProcesses } from '../serve/load-processes.js';
import { RPS_MIX, stftRequest } from '../serve/mixes.js';

const { values } = parseArgs({
  options: {
    serve: { type: 'string' },
    root: { type: 'string' },
    old: { type: 'string' },
    new: { type: 'string' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    loads: { type: 'string' },
    'client-processes': { type: 'string' },
    prof: { type: 'string' },
    inject: { type: 'string' },
    engine: { type: 'string' },
  },
});

/** What the server child needs of a tree (its own types differ between trees; only these shapes are used). */
interface TreeServer {
  app: {
    inject(options: {
      method: string;
      url: string;
      headers: Record<string, string>;
      payload: Buffer;
    }): Promise<{ statusCode: number; body: string }>;
  };
  listen(options: { port: number; host: string }): Promise<unknown>;
  close(): Promise<void>;
}
type CreateServer = (options: Record<string, unknown>) => TreeServer;
type FakeEngineClass = new (options?: { maxQueued?: number }) => object;
type FakeBatcher = (compute: (item: ArrayLike<number>) => Float32Array) => object;

/** The parts of a job the wrapper below touches. */
interface ProbeJob {
  result: Promise<Record<string, unknown>>;
}
interface ProbeSpec {
  data: Float32Array;
  batch?: number;
  previewBins?: number;
  flags: readonly string[];
  into?: { filtered?: Float32Array };
}

/**
 * The tree's FakeEngine with its 'stft' answer computed the same way in both trees: the trees'
 * fakeResult differ (the new one reads each sample through a function, about 2x the old one's
 * JavaScript per job), which would show as a server regression. A real engine hands back a fresh
 * array of the data's length (lane-runner.ts: `into.filtered ?? new Wave(b * n)`: the server's
 * pooled array when it lends one) filled from pinned memory, and the preview: here the same array
 * choice plus one memcpy of the data, and a zero preview. Everything
 * else (queue, errors, stats, close) is the tree's own FakeEngine.
 */
function sameCostEngine(engine: object): object {
  const submit = (
    Reflect.get(engine, 'submit') as (spec: ProbeSpec, options?: unknown) => ProbeJob | Promise<ProbeJob>
  ).bind(engine);
  const wrap = (job: ProbeJob, spec: ProbeSpec): ProbeJob =>
    Object.assign(Object.create(job) as ProbeJob, {
      result: job.result.then((r) => {
        // As the engine: into the server's array when it lends one (a pooled body buffer), else fresh.
        const filtered = spec.into?.filtered ?? new Float32Array(spec.data.length);
        filtered.set(spec.data);
        return { ...r, filtered, spectrum: new Float32Array((spec.batch ?? 1) * (spec.previewBins ?? 4)) };
      }),
    });
  const probeSubmit = (spec: ProbeSpec, options?: unknown): ProbeJob | Promise<ProbeJob> => {
    if (!spec.flags.includes('stft') || !(spec.data instanceof Float32Array)) return submit(spec, options);
    const job = submit({ ...spec, flags: spec.flags.filter((f) => f !== 'stft') }, options);
    return job instanceof Promise ? job.then((j) => wrap(j, spec)) : wrap(job, spec);
  };
  return new Proxy(engine, {
    // Private fields: the FakeEngine's own methods and getters run with the engine itself as `this`.
    get: (target, key) => {
      if (key === 'submit') return probeSubmit;
      const v: unknown = Reflect.get(target, key, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** The loads: the throughput row's request (c=16), the batch row's (c=64) and the serve bench's small f32 row (RPS_MIX, c=64), against `base`. */
function loadRequests(base: string): Record<string, { req: LoadRequest; concurrency: number; answerBytes?: number }> {
  const throughput = asciiSignal(16 * 65536);
  const items = Array.from({ length: 32 }, () =>
    Array.from({ length: 64 }, (_, i) => Math.sin(i * 0.05) + (Math.random() - 0.5) * 0.2),
  );
  return {
    throughput: {
      req: {
        base,
        path: '/v1/stft?dtype=f32&batch=16&fs=1000&passBand=20,200&previewBins=256',
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' },
        body: Buffer.from(throughput.buffer),
      },
      concurrency: 16,
      answerBytes: 4 * 16 * (65536 + 256),
    },
    // The small f32 row of the serve bench's floor rows (4 x 4096 f32, 64 KiB in): where the per-request work shows.
    small: { req: stftRequest(base, RPS_MIX), concurrency: 64, answerBytes: 4 * 4 * (4096 + 64) },
    batch: {
      req: {
        base,
        path: '/v1/batch/gradient',
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/octet-stream' },
        body: Buffer.from(JSON.stringify({ items })),
      },
      concurrency: 64,
    },
  };
}

/** The tree's server as its worker builds it (see the doc comment). */
async function treeServer(rootDir: string, limits: Record<string, number> = {}): Promise<TreeServer> {
  const root = resolve(rootDir);
  const server = (await import(pathToFileURL(join(root, 'src/server/index.ts')).href)) as {
    createServer: CreateServer;
  };
  const fake = (await import(pathToFileURL(join(root, 'test/unit/server/fake-engine.ts')).href)) as {
    FakeEngine: FakeEngineClass;
    fakeBatcher: FakeBatcher;
  };
  // --engine sim: the serve bench's --sim worker's engine (bench/serve/sim-worker.ts), whose cost per
  // job is the simulated GPU's wait alone, so the server's own work is what a request costs.
  const sim =
    values.engine === 'sim'
      ? new (
          (await import(pathToFileURL(join(root, 'bench/queue/sim-engine.ts')).href)) as {
            SimEngine: new (options: Record<string, unknown>) => object;
          }
        ).SimEngine({ nsPerSample: 0.085, fixedUs: 20, lanes: 4, label: 'sim', hostCopies: false, checksSamples: true })
      : undefined;
  const s = server.createServer({
    engine: sim ?? sameCostEngine(new fake.FakeEngine({ maxQueued: 1024 })), // --max-queued 1024, as the bench starts it
    ownsEngine: true,
    logger: false,
    limits,
    batchers: { gradient: () => fake.fakeBatcher((v) => Float32Array.from(v, (x) => 2 * x)) },
    jobIdPrefix: 'w1-',
    metricsLabels: { worker: '1' },
    peersReady: () => false,
  });
  return s;
}

if (values.serve !== undefined && values.inject !== undefined) {
  // In-process mode: requests through fastify's inject (no sockets, no client), `--inject N` of
  // each load with its clients' concurrency in flight; prints the process CPU ms per request.
  // Load shedding off: with no socket between them the requests leave the loop no gap, and its
  // refusals would be measured instead of the requests' own work.
  const s = await treeServer(values.root ?? '.', { maxEventLoopDelayMs: 0, maxTurnMs: 0 });
  const n = Number(values.inject);
  const out: Record<string, number> = {};
  for (const [load, { req, concurrency }] of Object.entries(loadRequests('http://x'))) {
    if (!(values.loads ?? 'throughput,batch').split(',').includes(load)) continue;
    const one = async (): Promise<void> => {
      const r = await s.app.inject({ method: req.method, url: req.path, headers: req.headers, payload: req.body });
      if (r.statusCode !== 200) throw new Error(`${load}: ${r.statusCode} ${r.body.slice(0, 200)}`);
    };
    const run = async (count: number): Promise<void> => {
      let left = count;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (left-- > 0) await one();
        }),
      );
    };
    await run(Math.ceil(n / 4)); // warm-up: the JIT, the body pool
    const c0 = process.cpuUsage();
    await run(n);
    const c = process.cpuUsage(c0);
    out[load] = (c.user + c.system) / 1000 / n;
  }
  console.log(JSON.stringify(out));
  await s.close();
  process.exit(0);
} else if (values.serve !== undefined) {
  // The server child: the tree's createServer, as a `tscuda serve --workers 1` worker builds it.
  const s = await treeServer(values.root ?? '.');
  await s.listen({ port: Number(values.serve), host: '127.0.0.1' });
  console.log('ready');
  process.on('SIGTERM', () => void s.close().then(() => process.exit(0)));
} else {
  const here = resolve(import.meta.dirname, '..', '..');
  const trees = { old: resolve(values.old ?? '/work/main/.base'), new: resolve(values.new ?? here) };
  const rounds = Number(values.rounds ?? 5);
  const durationS = Number(values.duration ?? 4);
  const loads = (values.loads ?? 'throughput,batch').split(',');
  const clientProcesses = Number(values['client-processes'] ?? 1);
  const cpus = Number(spawnSync('nproc').stdout?.toString().trim() ?? 1);
  const pinned = cpus > 1 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;
  if (pinned) spawnSync('taskset', ['-pc', `1-${cpus - 1}`, String(process.pid)]);
  const port = 19_000 + Math.floor(Math.random() * 500);
  const base = `http://127.0.0.1:${port}`;

  const requests = loadRequests(base);

  /** [utime, stime] of a process, ms (clock ticks of 10 ms). */
  const cpuMs = (pid: number): [number, number] => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return [Number(fields[11]) * 10, Number(fields[12]) * 10];
  };
  const start = async (tree: 'old' | 'new', round: number): Promise<ChildProcess> => {
    const prof = values.prof === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', join(resolve(values.prof), tree)];
    const args = [
      ...prof,
      '--import',
      'tsx',
      join(import.meta.dirname, 'serve-ab.ts'),
      '--serve',
      String(port),
      '--root',
      trees[tree],
    ];
    const child = pinned
      ? spawn('taskset', ['-c', '0', process.execPath, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
      : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((res, rej) => {
      child.stdout!.once('data', () => res());
      child.once('exit', (code) => rej(new Error(`${tree} server exited ${code}`)));
    });
    return child;
  };
  const stop = (child: ChildProcess): Promise<void> =>
    new Promise((res) => {
      child.once('exit', () => res());
      child.kill('SIGTERM');
    });
  const loop = (req: LoadRequest, c: number, s: number): Promise<LoopReport> =>
    clientProcesses > 1
      ? closedLoopProcesses(req, c, s, clientProcesses)
      : closedLoop(req, c, s, { warmPath: '/v2/health/live' });

  interface Row {
    tree: 'old' | 'new';
    load: string;
    okPerS: number;
    cpuMsPerOk: number;
    userMsPerOk: number;
    p50Ms: number;
    other: number;
  }
  const rows: Row[] = [];
  for (let round = 1; round <= rounds; round++) {
    // Alternate which tree goes first, so neither always meets a warmer (or cooler) machine.
    const order: ('old' | 'new')[] = round % 2 === 1 ? ['old', 'new'] : ['new', 'old'];
    for (const tree of order) {
      const child = await start(tree, round);
      for (const load of loads) {
        const { req, concurrency, answerBytes } = requests[load]!;
        if (answerBytes !== undefined) {
          const r = await fetch(base + req.path, { method: 'POST', headers: req.headers, body: req.body });
          const got = (await r.arrayBuffer()).byteLength;
          if (r.status !== 200 || got !== answerBytes)
            throw new Error(`${tree} ${load}: status ${r.status}, ${got} bytes (expected 200, ${answerBytes})`);
        }
        await loop(req, concurrency, 1); // warm-up: the JIT, the body pool
        const cpu0 = cpuMs(child.pid!);
        const r = await loop(req, concurrency, durationS);
        const cpu1 = cpuMs(child.pid!);
        const user = cpu1[0] - cpu0[0];
        const cpu = user + cpu1[1] - cpu0[1];
        const ok = r.byStatus['200'] ?? 0;
        const seconds = r.elapsedS ?? durationS;
        const other =
          Object.entries(r.byStatus).reduce((a, [k, v]) => a + (k === '200' ? 0 : v), 0) +
          Object.values(r.unanswered).reduce((a, b) => a + b, 0);
        rows.push({
          tree,
          load,
          okPerS: ok / seconds,
          cpuMsPerOk: cpu / Math.max(1, ok),
          userMsPerOk: user / Math.max(1, ok),
          p50Ms: r.latencyMs['200']?.p50 ?? Number.NaN,
          other,
        });
        const x = rows[rows.length - 1]!;
        console.error(
          `round ${round} ${tree} ${load}: ${x.okPerS.toFixed(0)} req/s, server CPU ${x.cpuMsPerOk.toFixed(3)} ms/req (user ${x.userMsPerOk.toFixed(3)}), p50 ${x.p50Ms.toFixed(1)} ms, non-200 ${JSON.stringify({ ...r.byStatus, ...r.unanswered })}`,
        );
      }
      await stop(child);
    }
  }
  const median = (xs: number[]): number => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length === 0
      ? Number.NaN
      : s.length % 2 === 1
        ? s[(s.length - 1) / 2]!
        : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  const lines = [
    `# serve A/B on CPU: ${trees.old} (old) vs ${trees.new} (new); ${rounds} rounds x ${durationS} s, ${cpus} CPUs, server ${pinned ? 'pinned to CPU 0' : 'not pinned'}, ${clientProcesses} client process(es)`,
    '',
    '| load | tree | req/s (median) | req/s (rounds) | server CPU ms/req (median) | p50 ms |',
    '| --- | --- | ---: | --- | ---: | ---: |',
  ];
  for (const load of loads)
    for (const tree of ['old', 'new'] as const) {
      const mine = rows.filter((r) => r.load === load && r.tree === tree);
      lines.push(
        `| ${load} | ${tree} | ${median(mine.map((r) => r.okPerS)).toFixed(0)} | ${mine.map((r) => r.okPerS.toFixed(0)).join(', ')} | ${median(mine.map((r) => r.cpuMsPerOk)).toFixed(3)} | ${median(mine.map((r) => r.p50Ms)).toFixed(1)} |`,
      );
    }
  console.log(lines.join('\n'));
}
