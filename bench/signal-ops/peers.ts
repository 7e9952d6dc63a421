/**
 * The signal-ops rows' Python peers: bench/peers/signal_ops_peer.py run once as cupyx.scipy.signal
 * (`--backend cupy`) and once as PyTorch (`--backend torch`), each reading the jobs tscuda's side
 * left in the data folder (data.ts). Their lines fold into the CuPy and PyTorch columns.
 */
import { foldEnginePeer, runEnginePeer } from '../harness/engine-peers.js';
import type { ChildRunOptions } from '../harness/native.js';
import type { PeerName, PeerOutcome } from '../harness/peers.js';
import { removeSignalOpsData, signalOpsDataDir } from './data.js';

export const SIGNAL_OPS_PEER_FILE = 'signal_ops_peer.py';

/** The backends the signal-ops peer runs as, with their column and title. */
export const SIGNAL_OPS_PEER_BACKENDS: readonly { peer: Extract<PeerName, 'cupy' | 'torch'>; title: string }[] = [
  { peer: 'cupy', title: 'cupyx.scipy.signal (signal ops)' },
  { peer: 'torch', title: 'PyTorch (signal ops)' },
];

/**
 * Runs both backends over the rows named in `o.only`, folding each into `peers`, then removes the
 * data folder. `phase` announces each backend (the harness's progress), `log` says what failed.
 */
export async function runSignalOpsPeers(
  root: string,
  metrics: readonly string[],
  o: ChildRunOptions,
  peers: Partial<Record<PeerName, PeerOutcome>>,
  phase: (title: string) => void,
  log: (line: string) => void,
): Promise<void> {
  try {
    const program = { file: SIGNAL_OPS_PEER_FILE, args: ['--data', signalOpsDataDir()] };
    for (const backend of SIGNAL_OPS_PEER_BACKENDS) {
      phase(`peer ${backend.title}`);
      const outcome = await runEnginePeer(root, backend.peer, o, program);
      if (outcome.status !== 'ok') log(`${backend.title} ${outcome.status}: ${(outcome.reason ?? '').split('\n')[0]}`);
      peers[backend.peer] = foldEnginePeer(peers[backend.peer], outcome, metrics, SIGNAL_OPS_PEER_FILE);
    }
  } finally {
    removeSignalOpsData();
  }
}
