/**
 * The benchmark harness (issue 6): in one invocation on a GPU host it builds and runs the
 * native C baseline, runs tscuda's benchmarks in this process (host-timed ones interleaved
 * with a second native pass: C, tscuda, C, tscuda), runs the Python peers, and writes the
 * table, bench/results/<gpu>-<yyyymmdd>.{json,md,svg} and progress on stderr.
 * `runBench(args)` is what `npm run bench` (bench/main.ts) and `tscuda bench` call.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Device } from '../src/runtime/index.js';
import { parseArgs, USAGE, UsageError, type BenchOptions } from './harness/args.js';
import { commitOf, describeEnvironment, probeGpu } from './harness/environment.js';
import { mergeMetrics, peerStatuses, type BenchRun, type TscudaMetricRun } from './harness/merge.js';
import { exactNamesPattern, METRIC_NAMES, selectMetrics, type MetricSpec } from './harness/metrics.js';
import { buildNative, runNative } from './harness/native.js';
import { ENGINE_PEER_BACKENDS, foldEnginePeer, runEnginePeer } from './harness/engine-peers.js';
import { table, textSummary, writeResults } from './harness/output.js';
import { addPass, PYTHON_PEERS, type PeerName, type PeerOutcome } from './harness/peers.js';
import { Progress } from './harness/progress.js';
import { runPythonPeer } from './harness/python-peers.js';
import { removeSignalOpsData } from './signal-ops/data.js';
import { runSignalOpsPeers, SIGNAL_OPS_PEER_BACKENDS } from './signal-ops/peers.js';
import { loadBenchKernels, type BenchKernels } from './tscuda/kernels.js';
import { producedMetricNames, runTscudaPass } from './tscuda/runner.js';
import { NotMeasured, type BenchContext } from './tscuda/types.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

const NATIVE_TIMEOUT_MS = 180_000;
const PEER_TIMEOUT_MS = 200_000;

function firstLine(s: string | undefined): string {
  return (s ?? '').split('\n')[0] ?? '';
}

function names(specs: readonly MetricSpec[]): Set<string> {
  return new Set(specs.map((s) => s.name));
}

export async function runBench(argv: readonly string[]): Promise<number> {
  let opts: BenchOptions;
  try {
    opts = parseArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`tscuda bench: ${e.message}\n${USAGE}\n`);
    return 2;
  }
  if (opts.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const specs = selectMetrics(opts.only);
  if (specs.length === 0) {
    process.stderr.write(
      `tscuda bench: no metric matches --only ${opts.onlySource ?? ''}; the metrics are:\n  ${METRIC_NAMES.join('\n  ')}\n`,
    );
    return 2;
  }
  const gpu = probeGpu();
  if (!gpu.ok) {
    process.stderr.write(`tscuda bench: ${gpu.reason}; the benchmarks need a CUDA GPU.\n`);
    return 1;
  }
  const missing = METRIC_NAMES.filter((n) => !producedMetricNames().includes(n));
  if (missing.length > 0) throw new Error(`harness bug: no tscuda benchmark produces ${missing.join(', ')}`);

  const date = new Date();
  const nativeSpecs = specs.filter((s) => s.group === 'native');
  const interleaved = nativeSpecs.filter((s) => s.interleave);
  // tscuda's side of the peers-only metrics (the job engine) runs in the same pass as its own metrics.
  const ownSpecs = specs.filter((s) => s.group !== 'native');
  const enginePeerSpecs = specs.filter((s) => s.group === 'peers');
  const wantEnginePeers = opts.peers && enginePeerSpecs.length > 0;
  // Issue 41's signal operations: tscuda in this process, then their own peer program.
  const signalPeerSpecs = specs.filter((s) => s.group === 'signal-ops');
  const wantSignalPeers = opts.peers && signalPeerSpecs.length > 0;
  const wantNative = opts.native && nativeSpecs.length > 0;
  const wantPeers = opts.peers && nativeSpecs.length > 0;
  const extraPasses = wantNative && interleaved.length > 0 ? 2 * (opts.rounds - 1) : 0;
  const planned =
    2 +
    (wantNative ? 2 : 0) +
    (nativeSpecs.length > 0 ? 1 : 0) +
    extraPasses +
    (ownSpecs.length > 0 ? 1 : 0) +
    (wantPeers ? PYTHON_PEERS.length : 0) +
    (wantEnginePeers ? ENGINE_PEER_BACKENDS.length : 0) +
    (wantSignalPeers ? SIGNAL_OPS_PEER_BACKENDS.length : 0);
  const progress = new Progress(planned);
  const log = progress.detail;

  progress.phase('set-up: GPU, versions, kernels');
  const device = Device.get(0);
  const context = device.context;
  const env = describeEnvironment(device);
  const commit = await commitOf(ROOT);
  progress.info(
    `${env.gpu} (${env.arch}), driver ${env.driver}, CUDA ${env.cuda}, commit ${commit}; reps ${opts.reps}, iters ${opts.iters}; ${specs.length} metric(s)`,
  );
  let kernels: BenchKernels | undefined;
  let kernelsError = '';
  try {
    kernels = await loadBenchKernels(ROOT, env.arch, log);
    log(`kernels from ${kernels.source}`);
  } catch (e) {
    kernelsError = `kernels unavailable: ${e instanceof Error ? e.message : String(e)}`;
    log(kernelsError);
  }
  const ctx: BenchContext = {
    device,
    context,
    timing: { reps: opts.reps, iters: opts.iters },
    root: ROOT,
    log,
    get kernels(): BenchKernels {
      if (!kernels) throw new NotMeasured(kernelsError);
      return kernels;
    },
  };

  const peers: Partial<Record<PeerName, PeerOutcome>> = {};
  const tscuda: Record<string, TscudaMetricRun> = {};
  const childOptions = (only: readonly MetricSpec[], timeoutMs: number) => ({
    only: exactNamesPattern(only.map((s) => s.name)),
    reps: opts.reps,
    iters: opts.iters,
    timeoutMs,
    onStderrLine: log,
  });

  let nativeBinary: string | undefined;
  if (wantNative) {
    progress.phase('native baseline: build (nvcc)');
    const built = await buildNative(ROOT, env.arch, log);
    if (built.ok) {
      nativeBinary = built.binary;
      log(built.cached ? `cached: ${built.binary}` : `built ${built.binary} in ${built.seconds.toFixed(1)} s`);
    } else {
      log(`native baseline not built: ${firstLine(built.reason)}`);
      peers.c = { peer: 'c', status: 'failed', reason: `build failed: ${built.reason}`, passes: [], errors: {} };
      for (let i = 0; i < 1 + extraPasses; i++) progress.skip();
    }
  } else {
    peers.c = {
      peer: 'c',
      status: 'skipped',
      reason: opts.native ? 'no selected metric has a C baseline' : '--no-native',
      passes: [],
      errors: {},
    };
  }

  if (nativeBinary) {
    progress.phase(`native baseline, pass 1 (${nativeSpecs.length} metrics)`);
    peers.c = await runNative(nativeBinary, childOptions(nativeSpecs, NATIVE_TIMEOUT_MS));
    if (peers.c.status !== 'ok') log(`native baseline ${peers.c.status}: ${firstLine(peers.c.reason)}`);
  }
  if (nativeSpecs.length > 0) {
    progress.phase(`tscuda, pass 1 (${nativeSpecs.length} metrics)`);
    await runTscudaPass(ctx, names(nativeSpecs), tscuda);
  }
  // Host-timed metrics again, alternating, so that drift (clocks, other load) hits both sides alike.
  for (let pass = 2; nativeBinary && interleaved.length > 0 && pass <= opts.rounds; pass++) {
    progress.phase(`native baseline, pass ${pass} (${interleaved.length} host-timed metrics)`);
    const next = await runNative(nativeBinary, childOptions(interleaved, NATIVE_TIMEOUT_MS));
    peers.c = peers.c ? addPass(peers.c, next) : next;
    progress.phase(`tscuda, pass ${pass} (${interleaved.length} host-timed metrics)`);
    await runTscudaPass(ctx, names(interleaved), tscuda);
  }
  if (ownSpecs.length > 0) {
    progress.phase(`tscuda pipeline, batcher, job engine, signal ops and event loop (${ownSpecs.length} metrics)`);
    await runTscudaPass(ctx, names(ownSpecs), tscuda);
  }
  if (wantPeers) {
    for (const peer of PYTHON_PEERS) {
      progress.phase(`peer ${peer.title}`);
      const outcome = await runPythonPeer(ROOT, peer, childOptions(nativeSpecs, PEER_TIMEOUT_MS));
      peers[peer.peer] = outcome;
      // Its stderr has been shown as it came: one line says what became of it.
      if (outcome.status !== 'ok') log(`${peer.title} ${outcome.status}: ${firstLine(outcome.reason)}`);
    }
  } else {
    for (const peer of PYTHON_PEERS)
      peers[peer.peer] = {
        peer: peer.peer,
        status: 'skipped',
        reason: opts.peers ? 'no selected metric has peers' : '--no-peers',
        passes: [],
        errors: {},
      };
  }
  for (const backend of wantEnginePeers ? ENGINE_PEER_BACKENDS : []) {
    progress.phase(`peer ${backend.title}`);
    const outcome = await runEnginePeer(ROOT, backend.peer, childOptions(enginePeerSpecs, PEER_TIMEOUT_MS));
    if (outcome.status !== 'ok') log(`${backend.title} ${outcome.status}: ${firstLine(outcome.reason)}`);
    peers[backend.peer] = foldEnginePeer(
      peers[backend.peer],
      outcome,
      enginePeerSpecs.map((s) => s.name),
    );
  }
  if (wantSignalPeers)
    await runSignalOpsPeers(
      ROOT,
      signalPeerSpecs.map((s) => s.name),
      childOptions(signalPeerSpecs, PEER_TIMEOUT_MS),
      peers,
      (title) => progress.phase(title),
      log,
    );
  // What tscuda's side left for the peers (about 400 MB) goes, peers or not.
  else removeSignalOpsData();

  progress.phase('results');
  const run: BenchRun = {
    gpu: env.gpu,
    driver: env.driver,
    cuda: env.cuda,
    commit,
    date: date.toISOString(),
    metrics: mergeMetrics(specs, peers, tscuda),
    versions: env.versions,
    peers: peerStatuses(peers),
    tscuda: context.stickyError ? { status: 'failed', reason: context.stickyError.message } : { status: 'ok' },
    settings: { reps: opts.reps, iters: opts.iters, rounds: opts.rounds, only: opts.onlySource },
    durationS: Number(progress.elapsedS.toFixed(1)),
  };
  const files = writeResults(run, join(ROOT, 'bench', 'results'), date, opts.only !== null);
  progress.info(`wrote ${files.json}, .md and .svg${files.copiedTo ? ` (copied to ${files.copiedTo})` : ''}`);
  if (opts.json) process.stdout.write(JSON.stringify(run, null, 2) + '\n');
  else process.stdout.write(`${table(run)}\n${textSummary(run)}`);
  return 0;
}
