/**
 * The Python peers of the job-engine metrics (issue 11): bench/peers/stft_job_peer.py, run once
 * with `--backend cupy` and once with `--backend torch`. Their lines are in the peers' protocol
 * as peer "cupy" / "torch", and their metrics join those peers' columns. Folding is pure, so it
 * is tested without a GPU.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { protocolArgs, type ChildRunOptions } from './native.js';
import { addPass, peerOutcome, type PeerName, type PeerOutcome } from './peers.js';
import { runProcess } from './processes.js';
import { pythonExecutable } from './python-peers.js';

export const ENGINE_PEER_FILE = 'stft_job_peer.py';

/** The backends the engine peer runs as, with their column and title. */
export const ENGINE_PEER_BACKENDS: readonly { peer: Extract<PeerName, 'cupy' | 'torch'>; title: string }[] = [
  { peer: 'cupy', title: 'CuPy (job engine)' },
  { peer: 'torch', title: 'PyTorch (job engine)' },
];

/** A peer program of bench/peers/ that runs as either backend, and the arguments it takes besides the protocol's. */
export interface BackendPeerProgram {
  file: string;
  args?: readonly string[] | undefined;
}

/**
 * Runs the engine peer (or another backend peer program: the signal-ops peer) as `backend`; a
 * missing Python or library is an absent peer.
 */
export async function runEnginePeer(
  root: string,
  backend: Extract<PeerName, 'cupy' | 'torch'>,
  o: ChildRunOptions,
  program: BackendPeerProgram = { file: ENGINE_PEER_FILE },
): Promise<PeerOutcome> {
  const script = join(root, 'bench', 'peers', program.file);
  if (!existsSync(script))
    return {
      peer: backend,
      status: 'failed',
      reason: `bench/peers/${program.file} not found`,
      passes: [],
      errors: {},
    };
  const python = pythonExecutable();
  const r = await runProcess(python, [script, '--backend', backend, ...(program.args ?? []), ...protocolArgs(o)], {
    timeoutMs: o.timeoutMs,
    onStderrLine: o.onStderrLine,
    env: { PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1' },
  });
  if (r.code === 'ENOENT')
    return { peer: backend, status: 'absent', reason: `${python} not found`, passes: [], errors: {} };
  return peerOutcome(backend, r);
}

/**
 * Folds the engine peer's outcome (or another backend program's, named by `file`) into the peer's
 * outcome from its main program: both ok -> one more pass; only one ok -> that one (the other's
 * failure is kept as an error of the engine metrics, or of '(main program)'); neither -> the main
 * program's, unless it was only skipped.
 */
export function foldEnginePeer(
  main: PeerOutcome | undefined,
  engine: PeerOutcome,
  metrics: readonly string[],
  file: string = ENGINE_PEER_FILE,
): PeerOutcome {
  const why = `${engine.status}${engine.reason ? `: ${engine.reason.split('\n')[0]}` : ''}`;
  if (!main || main.status === 'skipped') return engine;
  if (main.status === 'ok' && engine.status === 'ok') return addPass(main, engine);
  if (main.status === 'ok') {
    const errors = { ...main.errors };
    for (const m of metrics) errors[m] ??= `${file} ${why}`;
    return { ...main, errors };
  }
  if (engine.status === 'ok') {
    return {
      ...engine,
      errors: {
        ...engine.errors,
        '(main program)': `${main.status}${main.reason ? `: ${main.reason.split('\n')[0]}` : ''}`,
      },
    };
  }
  return main;
}
