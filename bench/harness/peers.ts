/**
 * The peers' protocol (bench/native/bench.cu and bench/peers/*.py): each prints one JSON line
 * {"peer", "available", "version"?, "reason"?, "metrics": {name: {median, spread, samples, note?}}, "errors"?}.
 * Parsing is pure and strict about shape; whatever does not fit is an error with the reason.
 */
import type { PassSummary } from './stats.js';

export const PEERS = ['c', 'cupy', 'torch', 'cudaPython'] as const;
export type PeerName = (typeof PEERS)[number];

/** The Python peers: program file under bench/peers/ and the name in the table. */
export const PYTHON_PEERS: readonly { peer: Exclude<PeerName, 'c'>; file: string; title: string }[] = [
  { peer: 'cupy', file: 'cupy_peer.py', title: 'CuPy' },
  { peer: 'torch', file: 'torch_peer.py', title: 'PyTorch' },
  { peer: 'cudaPython', file: 'cuda_python_peer.py', title: 'cuda-python' },
];

export interface PeerMetric extends PassSummary {
  note?: string;
}

export interface PeerLine {
  peer: PeerName;
  available: boolean;
  version?: string;
  reason?: string;
  metrics: Record<string, PeerMetric>;
  errors: Record<string, string>;
}

/**
 * What became of one peer in this run:
 * ok: it ran (some metrics may have failed: `errors`); absent: it said available:false
 * (not installed, no GPU for it), or it was not run (`--no-peers`, `--no-native`);
 * failed: it crashed, timed out or printed no valid line (`reason` holds its stderr tail).
 */
export interface PeerOutcome {
  peer: PeerName;
  status: 'ok' | 'absent' | 'failed' | 'skipped';
  version?: string;
  reason?: string;
  /** One entry per pass that produced a line (the native program runs twice for interleaved metrics). */
  passes: Record<string, PeerMetric>[];
  errors: Record<string, string>;
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function isPeerName(x: unknown): x is PeerName {
  return typeof x === 'string' && (PEERS as readonly string[]).includes(x);
}

function parseMetric(name: string, x: unknown): PeerMetric {
  if (!isRecord(x)) throw new Error(`metric ${name} is not an object`);
  const { median, spread, samples, note } = x;
  if (typeof median !== 'number' || !Number.isFinite(median)) throw new Error(`metric ${name} has no finite median`);
  const m: PeerMetric = {
    median,
    spread: typeof spread === 'number' && Number.isFinite(spread) ? spread : Number.NaN,
    samples: typeof samples === 'number' ? samples : 0,
  };
  if (typeof note === 'string' && note !== '') m.note = note;
  return m;
}

/** Parses one JSON line of the protocol; throws an Error saying what is wrong. */
export function parsePeerLine(line: string): PeerLine {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch (e) {
    throw new Error(`not JSON: ${(e as Error).message}`);
  }
  if (!isRecord(raw)) throw new Error('not a JSON object');
  if (!isPeerName(raw.peer)) throw new Error(`unknown peer ${JSON.stringify(raw.peer)}`);
  if (typeof raw.available !== 'boolean') throw new Error('"available" is not a boolean');
  const metrics: Record<string, PeerMetric> = {};
  const errors: Record<string, string> = {};
  if (raw.metrics !== undefined) {
    if (!isRecord(raw.metrics)) throw new Error('"metrics" is not an object');
    for (const [name, m] of Object.entries(raw.metrics)) {
      try {
        metrics[name] = parseMetric(name, m);
      } catch (e) {
        errors[name] = (e as Error).message;
      }
    }
  }
  if (isRecord(raw.errors)) for (const [name, msg] of Object.entries(raw.errors)) errors[name] = String(msg);
  const out: PeerLine = { peer: raw.peer, available: raw.available, metrics, errors };
  if (typeof raw.version === 'string') out.version = raw.version;
  if (typeof raw.reason === 'string') out.reason = raw.reason;
  return out;
}

/**
 * The protocol line in a program's stdout: the last line that parses as this peer's line
 * (libraries may print to stdout despite the programs' care).
 */
export function findPeerLine(stdout: string, peer: PeerName): PeerLine {
  const lines = stdout
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.startsWith('{'));
  // The reason given is that of the last candidate line, the one the program meant as its answer.
  let why: string | undefined;
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      const parsed = parsePeerLine(lines[i]!);
      if (parsed.peer === peer) return parsed;
      why ??= `its line is for peer ${parsed.peer}, expected ${peer}`;
    } catch (e) {
      why ??= `bad line: ${(e as Error).message}`;
    }
  }
  throw new Error(why ?? 'no JSON line on stdout');
}

/** The last `lines` non-empty lines of a program's stderr, for a report. */
export function tail(text: string, lines = 12): string {
  return text
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '')
    .slice(-lines)
    .join('\n');
}

/** Folds a finished process into an outcome: exit status, stdout, stderr and whether it timed out. */
export function peerOutcome(
  peer: PeerName,
  run: { exitCode: number | undefined; stdout: string; stderr: string; timedOut?: boolean; failure?: string },
): PeerOutcome {
  const stderrTail = tail(run.stderr);
  if (run.failure !== undefined) {
    return {
      peer,
      status: 'failed',
      reason: `${run.failure}${stderrTail ? `\n${stderrTail}` : ''}`,
      passes: [],
      errors: {},
    };
  }
  let line: PeerLine;
  try {
    line = findPeerLine(run.stdout, peer);
  } catch (e) {
    const why = run.timedOut
      ? 'timed out'
      : run.exitCode !== 0
        ? `exited with status ${String(run.exitCode)}`
        : (e as Error).message;
    return { peer, status: 'failed', reason: `${why}${stderrTail ? `\n${stderrTail}` : ''}`, passes: [], errors: {} };
  }
  if (!line.available)
    return { peer, status: 'absent', reason: line.reason ?? 'not available', passes: [], errors: {} };
  const out: PeerOutcome = { peer, status: 'ok', passes: [line.metrics], errors: line.errors };
  if (line.version !== undefined) out.version = line.version;
  if (run.exitCode !== 0)
    out.errors = { ...out.errors, '(exit)': `exited with status ${String(run.exitCode)} after printing its line` };
  return out;
}

/** Adds a later pass of the same program (the native baseline's second, interleaved pass). */
export function addPass(outcome: PeerOutcome, next: PeerOutcome): PeerOutcome {
  if (outcome.status !== 'ok') return next.status === 'ok' ? next : outcome;
  if (next.status !== 'ok')
    return {
      ...outcome,
      errors: { ...outcome.errors, '(pass)': `a later pass ${next.status}: ${next.reason ?? ''}`.trim() },
    };
  return { ...outcome, passes: [...outcome.passes, ...next.passes], errors: { ...outcome.errors, ...next.errors } };
}
