/** Runs the Python peers one after another; a missing Python or library is an absent peer, a crash is reported and skipped. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { protocolArgs, type ChildRunOptions } from './native.js';
import { peerOutcome, PYTHON_PEERS, type PeerName, type PeerOutcome } from './peers.js';
import { runProcess } from './processes.js';

export function pythonExecutable(): string {
  return process.env.TSCUDA_BENCH_PYTHON || 'python3';
}

export async function runPythonPeer(
  root: string,
  peer: (typeof PYTHON_PEERS)[number],
  o: ChildRunOptions,
): Promise<PeerOutcome> {
  const script = join(root, 'bench', 'peers', peer.file);
  if (!existsSync(script))
    return { peer: peer.peer, status: 'failed', reason: `bench/peers/${peer.file} not found`, passes: [], errors: {} };
  const python = pythonExecutable();
  const r = await runProcess(python, [script, ...protocolArgs(o)], {
    timeoutMs: o.timeoutMs,
    onStderrLine: o.onStderrLine,
    env: { PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1' },
  });
  if (r.code === 'ENOENT')
    return { peer: peer.peer, status: 'absent', reason: `${python} not found`, passes: [], errors: {} };
  return peerOutcome(peer.peer as PeerName, r);
}
