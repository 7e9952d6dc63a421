/**
 * Supervision of serve workers with node:cluster: every worker listens on the one shared
 * socket (the primary hands out connections round-robin), owns its CUDA context, and can die
 * without taking the service down.
 *
 * Why cluster rather than an HTTP front process proxying to GPU children: no extra hop, no
 * copy of every body through a proxy, so the HTTP overhead stays that of one server. The cost
 * (a dying worker's connections go with it) is answered by the leaving protocol: a worker whose
 * context is lost answers everything it accepted with 503 + `Connection: close`, and keeps the
 * socket open until its replacement listens, so clients always get a response and the
 * listening socket never closes.
 */
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type PrometheusContentType } from 'prom-client';
import { CONFIG_ENV, isProtocolMessage, type PrimaryMessage, type WorkerConfig, type WorkerMessage } from './protocol.js';

/** Options of superviseWorkers(). */
export interface SupervisorOptions {
  /** Worker processes (at least 1). */
  workers: number;
  /** Path of the worker entry module (it calls runWorker()). */
  workerEntry: string;
  config: WorkerConfig;
  /** Node options of the workers; default: this process's (so tsx carries over). */
  execArgv?: string[];
  /** One line per event (started, lost, replaced, exited). */
  log?: (line: string) => void;
  /** Grace for a graceful stop before workers are killed, ms; default 30000. */
  stopTimeoutMs?: number;
}

interface Slot {
  index: number;
  device: number;
  worker: Worker | null;
  /** A worker that lost its context and waits for this slot's replacement to listen. */
  leaving: Worker[];
  ready: boolean;
  startedAt: number;
  quickExits: number;
}

/** The running supervisor. */
export interface Supervisor {
  /** Resolves once every slot's first worker listens (ready or not). */
  readonly started: Promise<void>;
  /** Workers ready to serve GPU work now. */
  readonly readyWorkers: number;
  /** Replacements started since the beginning (lost contexts and crashes). */
  readonly replacements: number;
  /** Graceful stop: each worker stops accepting, finishes, exits; resolves when all have. */
  stop(): Promise<void>;
}

/** Starts the workers and keeps them running; call from the primary process only. */
export function superviseWorkers(options: SupervisorOptions): Supervisor {
  if (!cluster.isPrimary) throw new Error('superviseWorkers() runs in the primary process');
  if (!Number.isInteger(options.workers) || options.workers < 1) throw new RangeError(`workers must be a positive integer, got ${options.workers}`);
  const log = options.log ?? (() => undefined);
  const devices = options.config.devices ?? [0];
  cluster.setupPrimary({ exec: options.workerEntry, execArgv: options.execArgv ?? process.execArgv, serialization: 'advanced' });
  const slots: Slot[] = Array.from({ length: options.workers }, (_, index) => ({
    index,
    device: devices[index % devices.length]!,
    worker: null,
    leaving: [],
    ready: false,
    startedAt: 0,
    quickExits: 0,
  }));
  const slotOf = new Map<Worker, Slot>();
  let stopping: Promise<void> | null = null;
  let aggregator: AggregatorRegistry<PrometheusContentType> | null = null;
  let replacements = 0;
  let startedCount = 0;
  let resolveStarted!: () => void;
  const started = new Promise<void>((resolve) => (resolveStarted = resolve));

  const post = (worker: Worker, message: PrimaryMessage): void => {
    if (worker.isConnected()) worker.send(message);
  };
  const broadcastPeers = (): void => {
    const readyWorkers = slots.filter((s) => s.ready).map((s) => s.worker);
    for (const w of slotOf.keys()) post(w, { tscuda: 'peers', ready: readyWorkers.filter((r) => r !== w).length });
  };

  const fork = (slot: Slot): void => {
    const config: WorkerConfig = { ...options.config, device: slot.device, devices: [slot.device] };
    const worker = cluster.fork({ [CONFIG_ENV]: JSON.stringify(config) });
    slot.worker = worker;
    slot.ready = false;
    slot.startedAt = Date.now();
    slotOf.set(worker, slot);
    worker.on('message', (m: unknown) => {
      if (!isProtocolMessage(m)) return;
      const message = m as WorkerMessage;
      if (message.tscuda === 'metrics-query') {
        aggregator ??= new AggregatorRegistry<PrometheusContentType>();
        aggregator.clusterMetrics().then(
          (text: string) => post(worker, { tscuda: 'metrics-answer', requestId: message.requestId, text }),
          () => post(worker, { tscuda: 'metrics-answer', requestId: message.requestId, text: null }),
        );
      } else if (message.tscuda === 'job-query') {
        // A job id of another worker: ask its owner, or answer "unknown" when it is gone.
        const owner = cluster.workers?.[message.target];
        if (owner === undefined || !owner.isConnected()) post(worker, { tscuda: 'job-answer', requestId: message.requestId, answer: null });
        else post(owner, { ...message, replyTo: worker.id });
      } else if (message.tscuda === 'job-answer') {
        const asker = message.replyTo === undefined ? undefined : cluster.workers?.[message.replyTo];
        if (asker !== undefined) post(asker, { tscuda: 'job-answer', requestId: message.requestId, answer: message.answer });
      } else if (message.tscuda === 'listening') {
        if (slot.worker === worker) {
          slot.ready = message.ready;
          log(`worker ${worker.id} (pid ${worker.process.pid}, device ${slot.device}) listening on ${message.address}${message.ready ? '' : `, not ready: ${message.reason}`}`);
          // The replacement serves: the workers it replaces may go.
          for (const old of slot.leaving) post(old, { tscuda: 'retire' });
          if (++startedCount === slots.length) resolveStarted();
        }
        broadcastPeers();
      } else if (message.tscuda === 'lost') {
        log(`worker ${worker.id} lost its GPU context (${message.reason}); starting a replacement`);
        if (slot.worker === worker) {
          slot.leaving.push(worker);
          slot.worker = null;
          slot.ready = false;
          broadcastPeers();
          if (stopping === null) {
            replacements++;
            fork(slot);
          } else post(worker, { tscuda: 'shutdown' });
        }
      }
    });
    worker.on('exit', (code, signal) => {
      slotOf.delete(worker);
      const wasLeaving = slot.leaving.indexOf(worker);
      if (wasLeaving >= 0) {
        slot.leaving.splice(wasLeaving, 1);
        log(`worker ${worker.id} left (code ${code ?? signal})`);
        return;
      }
      if (slot.worker !== worker) return;
      slot.worker = null;
      slot.ready = false;
      broadcastPeers();
      if (stopping !== null) return;
      // A crash (not a reported context loss): replace it, backing off while it keeps dying at start.
      slot.quickExits = Date.now() - slot.startedAt < 2000 ? slot.quickExits + 1 : 0;
      const delay = Math.min(10_000, slot.quickExits === 0 ? 0 : 250 * 2 ** (slot.quickExits - 1));
      log(`worker ${worker.id} exited (code ${code ?? signal}); replacing it${delay > 0 ? ` in ${delay} ms` : ''}`);
      replacements++;
      setTimeout(() => {
        if (stopping === null && slot.worker === null) fork(slot);
      }, delay);
    });
  };

  for (const slot of slots) fork(slot);

  return {
    started,
    get readyWorkers() {
      return slots.filter((s) => s.ready).length;
    },
    get replacements() {
      return replacements;
    },
    stop() {
      if (stopping !== null) return stopping;
      stopping = (async () => {
        const all = [...slotOf.keys()];
        const exits = all.map((w) => new Promise<void>((resolve) => (w.isDead() ? resolve() : w.once('exit', () => resolve()))));
        for (const w of all) post(w, { tscuda: 'shutdown' });
        const timer = setTimeout(() => {
          for (const w of all) if (!w.isDead()) w.process.kill('SIGKILL');
        }, options.stopTimeoutMs ?? 30_000);
        await Promise.all(exits);
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}
