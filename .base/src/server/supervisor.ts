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
  execArgv?: string[] | undefined;
  /** One line per event (started, lost, replaced, exited). */
  log?: ((line: string) => void) | undefined;
  /**
   * Standby workers (default 0): processes with their engine built, not serving; a worker whose
   * context is lost is replaced by one at once (recovery without a process start), and a new
   * standby is started behind it. Each holds a CUDA context and its lanes' memory.
   */
  standby?: number | undefined;
  /** Grace for a graceful stop before workers are killed, ms; default 30000. */
  stopTimeoutMs?: number | undefined;
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
    // A worker may leave between the check and the write: the failed send is its exit's business, not an error here.
    if (worker.isConnected()) worker.send(message, () => undefined);
  };
  const broadcastPeers = (): void => {
    const readyWorkers = slots.filter((s) => s.ready).map((s) => s.worker);
    for (const w of slotOf.keys()) post(w, { tscuda: 'peers', ready: readyWorkers.filter((r) => r !== w).length });
  };

  // Standby workers: engines built, not listening; a lost worker's slot takes one at once.
  const spares = new Map<Worker, { device: number; ready: boolean }>();

  const spawn = (device: number, standby: boolean): Worker => {
    const config: WorkerConfig = { ...options.config, device, devices: [device], ...(standby ? { standby: true } : {}) };
    const worker = cluster.fork({ [CONFIG_ENV]: JSON.stringify(config) });
    worker.on('message', (m: unknown) => onMessage(worker, m));
    worker.on('exit', (code, signal) => onExit(worker, code, signal));
    // An IPC write to a worker that is leaving fails asynchronously: logged, never an uncaught 'error' that kills the primary.
    worker.on('error', (e: Error) => log(`worker ${worker.id}: ${e.message}`));
    return worker;
  };

  const spawnSpare = (device: number): void => {
    if (stopping !== null) return;
    spares.set(spawn(device, true), { device, ready: false });
  };

  /** Gives the slot a worker: a ready standby of its device when there is one, else a new process. */
  const fill = (slot: Slot): void => {
    slot.ready = false;
    slot.startedAt = Date.now();
    const spare = [...spares].find(([, s]) => s.ready && s.device === slot.device)?.[0];
    if (spare !== undefined) {
      spares.delete(spare);
      slot.worker = spare;
      slotOf.set(spare, slot);
      post(spare, { tscuda: 'activate' });
      log(`worker ${spare.id} (standby) takes over slot ${slot.index}`);
      spawnSpare(slot.device);
      return;
    }
    const worker = spawn(slot.device, false);
    slot.worker = worker;
    slotOf.set(worker, slot);
  };

  const onMessage = (worker: Worker, m: unknown): void => {
    if (!isProtocolMessage(m)) return;
    const message = m as WorkerMessage;
    const slot = slotOf.get(worker);
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
    } else if (message.tscuda === 'standby-ready') {
      const spare = spares.get(worker);
      if (spare !== undefined) {
        spare.ready = true;
        log(`worker ${worker.id} (pid ${worker.process.pid}, device ${spare.device}) on standby`);
      }
    } else if (message.tscuda === 'listening') {
      if (slot !== undefined && slot.worker === worker) {
        slot.ready = message.ready;
        log(`worker ${worker.id} (pid ${worker.process.pid}, device ${slot.device}) listening on ${message.address}${message.ready ? '' : `, not ready: ${message.reason}`}`);
        // The replacement serves: the workers it replaces may go.
        for (const old of slot.leaving) post(old, { tscuda: 'retire' });
        if (++startedCount === slots.length) resolveStarted();
      }
      broadcastPeers();
    } else if (message.tscuda === 'lost') {
      if (spares.has(worker)) {
        log(`standby worker ${worker.id} lost its GPU context (${message.reason}); replacing it`);
        post(worker, { tscuda: 'shutdown' });
        return;
      }
      log(`worker ${worker.id} lost its GPU context (${message.reason}); starting a replacement`);
      if (slot !== undefined && slot.worker === worker) {
        slot.leaving.push(worker);
        slot.worker = null;
        slot.ready = false;
        broadcastPeers();
        if (stopping === null) {
          replacements++;
          fill(slot);
        } else post(worker, { tscuda: 'shutdown' });
      }
    }
  };

  const onExit = (worker: Worker, code: number | null, signal: string | null): void => {
    if (spares.has(worker)) {
      spares.delete(worker);
      if (stopping === null) {
        log(`standby worker ${worker.id} exited (code ${code ?? signal}); starting another in 1 s`);
        setTimeout(() => spawnSpare(spares.size === 0 ? devices[0]! : devices[spares.size % devices.length]!), 1000);
      }
      return;
    }
    const slot = slotOf.get(worker);
    slotOf.delete(worker);
    if (slot === undefined) return;
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
      if (stopping === null && slot.worker === null) fill(slot);
    }, delay);
  };

  for (const slot of slots) fill(slot);
  for (let i = 0; i < (options.standby ?? 0); i++) spawnSpare(devices[i % devices.length]!);

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
        const all = [...slotOf.keys(), ...spares.keys()];
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
