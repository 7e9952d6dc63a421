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
 *
 * Start-up is told from a crash: a worker that exits before it listens could not start (its
 * socket is taken, its engine cannot be built); the service then fails once, with that reason,
 * instead of respawning it forever (a first start fails at once; a replacement after
 * `maxStartFailures` tries in a row). A worker that crashes after it served is replaced. Its
 * connections not yet taken are answered (handoff-guard.ts), its counters kept (metrics-ledger.ts).
 */
import cluster, { type Worker } from 'node:cluster';
import { guardHandoffs } from './handoff-guard.js';
import { MetricsLedger } from './metrics-ledger.js';
import { workerDevice } from './worker-devices.js';
import {
  CONFIG_ENV,
  DEFAULT_DRAIN_MS,
  EXIT_CODES,
  isProtocolMessage,
  type MetricsSnapshot,
  type PrimaryMessage,
  type WorkerConfig,
  type WorkerMessage,
} from './protocol.js';
import { positiveInteger } from '../../runtime/value-checks.js';

/** Options of superviseWorkers(). */
export interface SupervisorOptions {
  /** Worker processes (at least 1). */
  workers: number;
  /** Path of the worker entry module (it calls runWorker()). */
  workerEntry: string;
  config: WorkerConfig;
  /**
   * The devices the workers are spread over (worker slot i on devices[i % n]); default
   * `config.devices` when it is a list, else [0]. Each worker's config then names its one device.
   */
  devices?: readonly number[] | undefined;
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
  /**
   * How long past the workers' own drain deadline (config.drainMs) the primary waits before it
   * kills a worker that has not exited, ms; default 5000.
   */
  killGraceMs?: number | undefined;
  /** Start-up failures in a row of one slot's replacements before the service gives up; default 3. */
  maxStartFailures?: number | undefined;
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
  /** Start-up failures in a row (reset once a worker of this slot listens). */
  startFailures: number;
}

/** How a supervisor ended. */
export type SupervisorEnd =
  /** stop(): `drained` when every worker finished its accepted requests in time (all exited 0). */
  | { kind: 'stopped'; drained: boolean; cutWorkers: number }
  /** A worker could not start (the first time, or `maxStartFailures` times in a row): one line saying why. */
  | { kind: 'failed'; reason: string };

/** The running supervisor. */
export interface Supervisor {
  /**
   * Resolves with the service's address (the real port, also for port 0) once every slot's first
   * worker listens (ready or not); rejects with the one-line reason when a worker cannot start
   * (every worker is stopped by then).
   */
  readonly started: Promise<string>;
  /** Resolves when the supervisor has ended: stopped by stop(), or failed. */
  readonly ended: Promise<SupervisorEnd>;
  /** Workers ready to serve GPU work now. */
  readonly readyWorkers: number;
  /** Replacements started since the beginning (lost contexts and crashes). */
  readonly replacements: number;
  /**
   * Graceful stop: each worker stops accepting, finishes what it accepted within the drain's
   * bound (config.drainMs), exits; resolves when all have. Idempotent.
   */
  stop(): Promise<SupervisorEnd>;
  /** Cuts a stop in progress: workers close their connections now and exit (drain cut). */
  cut(): void;
}

/** Starts the workers and keeps them running; call from the primary process only. */
export function superviseWorkers(options: SupervisorOptions): Supervisor {
  if (!cluster.isPrimary) throw new Error('superviseWorkers() runs in the primary process');
  positiveInteger(options.workers, 'workers');
  const log = options.log ?? (() => undefined);
  const devices = options.devices ?? (Array.isArray(options.config.devices) ? options.config.devices : [0]);
  if (devices.length === 0) throw new RangeError('devices must list at least one device');
  const maxStartFailures = options.maxStartFailures ?? 3;
  const drainMs = options.config.drainMs ?? DEFAULT_DRAIN_MS;
  cluster.setupPrimary({
    exec: options.workerEntry,
    execArgv: options.execArgv ?? process.execArgv,
    serialization: 'advanced',
  });
  const slots: Slot[] = Array.from({ length: options.workers }, (_, index) => ({
    index,
    device: workerDevice(devices, index),
    worker: null,
    leaving: [],
    ready: false,
    startedAt: 0,
    quickExits: 0,
    startFailures: 0,
  }));
  const slotOf = new Map<Worker, Slot>();
  /** The slot a worker served (kept after it has left, for its last counters). */
  const slotIndex = new WeakMap<Worker, number>();
  /** Workers that reached `listening` (or `standby-ready`): an exit after that is a crash, not a failed start. */
  const served = new WeakSet<Worker>();
  /** The one-line reason a worker gave for not starting. */
  const startReasons = new WeakMap<Worker, string>();
  const exitCodes = new Map<Worker, number | null>();
  const ledger = new MetricsLedger<Worker>();
  let stopping: Promise<SupervisorEnd> | null = null;
  let replacements = 0;
  let startedCount = 0;
  let address: string | null = null;
  let resolveStarted!: (address: string) => void;
  let rejectStarted!: (error: Error) => void;
  const started = new Promise<string>((resolve, reject) => {
    resolveStarted = resolve;
    rejectStarted = reject;
  });
  // A caller that only awaits `ended` must not see an unhandled rejection.
  started.catch(() => undefined);
  let resolveEnded!: (end: SupervisorEnd) => void;
  const ended = new Promise<SupervisorEnd>((resolve) => (resolveEnded = resolve));
  let failure: string | null = null;

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
  let spareFailures = 0;

  const spawn = (device: number, standby: boolean): Worker => {
    const config: WorkerConfig = { ...options.config, devices: [device], ...(standby ? { standby: true } : {}) };
    const worker = cluster.fork({ [CONFIG_ENV]: JSON.stringify(config) });
    guardHandoffs(worker, (n) =>
      log(`worker ${worker.id} exited holding ${n} connection(s) it had not read: answered 503 worker_lost`),
    );
    worker.on('message', (m: unknown) => onMessage(worker, m));
    // Its counters are kept once it has exited and its channel is drained (its final report may come after 'exit').
    const gone = Promise.all([
      new Promise((r) => worker.once('disconnect', r)),
      new Promise((r) => worker.once('exit', r)),
    ]);
    void gone.then(() => ledger.retire(worker));
    worker.on('exit', (code, signal) => {
      exitCodes.set(worker, code);
      onExit(worker, code, signal);
    });
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
      slotIndex.set(spare, slot.index);
      post(spare, { tscuda: 'activate' });
      log(`worker ${spare.id} (standby) takes over slot ${slot.index}`);
      spawnSpare(slot.device);
      return;
    }
    const worker = spawn(slot.device, false);
    slot.worker = worker;
    slotOf.set(worker, slot);
    slotIndex.set(worker, slot.index);
  };

  /** Every live worker's series (its last snapshot when it does not answer in time), and the departed ones' counters. */
  const clusterMetrics = (): Promise<string> =>
    ledger.collect(
      [...slotOf].map(([worker, slot]) => [worker, slot.index] as const),
      (worker, requestId) => post(worker, { tscuda: 'metrics-collect', requestId }),
    );

  const onMessage = (worker: Worker, m: unknown): void => {
    if (!isProtocolMessage(m)) return;
    const message = m as WorkerMessage;
    const slot = slotOf.get(worker);
    if (message.tscuda === 'metrics-query') {
      clusterMetrics().then(
        (text: string) => post(worker, { tscuda: 'metrics-answer', requestId: message.requestId, text }),
        () => post(worker, { tscuda: 'metrics-answer', requestId: message.requestId, text: null }),
      );
    } else if (message.tscuda === 'metrics-json') ledger.answer(message.requestId, message.metrics);
    else if (message.tscuda === 'final-metrics') {
      const index = slotIndex.get(worker);
      if (index !== undefined) ledger.record(worker, index, message.metrics);
    } else if (message.tscuda === 'start-failed') startReasons.set(worker, message.reason);
    else if (message.tscuda === 'job-query') {
      // A job id of another worker: ask its owner, or answer "unknown" when it is gone.
      const owner = cluster.workers?.[message.target];
      if (owner === undefined || !owner.isConnected())
        post(worker, { tscuda: 'job-answer', requestId: message.requestId, answer: null });
      else post(owner, { ...message, replyTo: worker.id });
    } else if (message.tscuda === 'job-answer') {
      const asker = message.replyTo === undefined ? undefined : cluster.workers?.[message.replyTo];
      if (asker !== undefined)
        post(asker, { tscuda: 'job-answer', requestId: message.requestId, answer: message.answer });
    } else if (message.tscuda === 'standby-ready') {
      const spare = spares.get(worker);
      if (stopping !== null) post(worker, { tscuda: 'shutdown' });
      if (spare !== undefined) {
        served.add(worker);
        spareFailures = 0;
        spare.ready = true;
        log(`worker ${worker.id} (pid ${worker.process.pid}, device ${spare.device}) on standby`);
      }
    } else if (message.tscuda === 'listening') {
      // A worker that was still starting when the stop began missed its 'shutdown' (it listens for messages once built).
      if (stopping !== null) post(worker, { tscuda: 'shutdown' });
      if (slot !== undefined && slot.worker === worker) {
        served.add(worker);
        slot.startFailures = 0;
        slot.ready = message.ready;
        address ??= message.address;
        log(
          `worker ${worker.id} (pid ${worker.process.pid}, device ${slot.device}) listening on ${message.address}${message.ready ? '' : `, not ready: ${message.reason}`}`,
        );
        // The replacement serves: the workers it replaces may go.
        for (const old of slot.leaving) post(old, { tscuda: 'retire' });
        if (++startedCount === slots.length) resolveStarted(address);
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

  /** Why `worker` exited before it served, in one line. */
  const startReason = (worker: Worker, code: number | null, signal: string | null): string =>
    startReasons.get(worker) ??
    `a worker exited before it listened (${signal ?? `code ${code}`}); run with --workers 0 to see its error`;

  const onExit = (worker: Worker, code: number | null, signal: string | null): void => {
    if (spares.has(worker)) {
      spares.delete(worker);
      if (stopping !== null) return;
      if (!served.has(worker) && ++spareFailures >= maxStartFailures) {
        log(`standby workers keep failing to start (${startReason(worker, code, signal)}); no more are started`);
        return;
      }
      log(`standby worker ${worker.id} exited (code ${code ?? signal}); starting another in 1 s`);
      setTimeout(() => spawnSpare(workerDevice(devices, spares.size)), 1000);
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
    if (!served.has(worker)) {
      // It never listened: the same start would fail the same way. The first start fails the service
      // at once; a replacement is tried again a few times (a port briefly taken, a device resetting).
      slot.startFailures++;
      const reason = startReason(worker, code, signal);
      if (startedCount < slots.length || slot.startFailures >= maxStartFailures) {
        void fail(
          startedCount < slots.length
            ? reason
            : `a replacement worker failed to start ${slot.startFailures} times: ${reason}`,
        );
        return;
      }
      log(`worker ${worker.id} could not start (${reason}); trying again`);
    }
    // A crash after serving: replace it, backing off while it keeps dying soon after it starts.
    slot.quickExits = Date.now() - slot.startedAt < 2000 || !served.has(worker) ? slot.quickExits + 1 : 0;
    const delay = Math.min(10_000, slot.quickExits === 0 ? 0 : 250 * 2 ** (slot.quickExits - 1));
    if (served.has(worker))
      log(`worker ${worker.id} exited (code ${code ?? signal}); replacing it${delay > 0 ? ` in ${delay} ms` : ''}`);
    replacements++;
    setTimeout(() => {
      if (stopping === null && slot.worker === null) fill(slot);
    }, delay);
  };

  /** Stops every worker and waits for their exits; kills those still there `killGraceMs` after their drain's bound. */
  const stopAll = (): Promise<{ drained: boolean; cutWorkers: number }> => {
    const all = [...slotOf.keys(), ...spares.keys()];
    const exits = all.map(
      (w) => new Promise<void>((resolve) => (w.isDead() ? resolve() : w.once('exit', () => resolve()))),
    );
    // A worker still starting holds no request, and reads 'shutdown' only once built, which on a
    // loaded machine can come after the drain's bound (a cut drain, exit 3, for nothing): it is
    // ended now (its signal handlers come with the server), and its end is no cut.
    const starting = new Set(all.filter((w) => !served.has(w) && !w.isDead()));
    for (const w of starting) w.process.kill('SIGTERM');
    for (const w of all) if (!starting.has(w)) post(w, { tscuda: 'shutdown' });
    const timer = setTimeout(
      () => {
        for (const w of all) if (!w.isDead()) w.process.kill('SIGKILL');
      },
      drainMs + (options.killGraceMs ?? 5000),
    );
    return Promise.all(exits).then(() => {
      clearTimeout(timer);
      const cutWorkers = all.filter((w) => !starting.has(w) && exitCodes.get(w) !== EXIT_CODES.drained).length;
      return { drained: cutWorkers === 0, cutWorkers };
    });
  };

  const fail = (reason: string): Promise<SupervisorEnd> => {
    if (stopping !== null) return stopping;
    failure = reason;
    stopping = stopAll().then(() => {
      const end: SupervisorEnd = { kind: 'failed', reason };
      rejectStarted(new Error(reason));
      resolveEnded(end);
      return end;
    });
    return stopping;
  };

  for (const slot of slots) fill(slot);
  for (let i = 0; i < (options.standby ?? 0); i++) spawnSpare(workerDevice(devices, i));

  return {
    started,
    ended,
    get readyWorkers() {
      return slots.filter((s) => s.ready).length;
    },
    get replacements() {
      return replacements;
    },
    stop() {
      if (stopping !== null) return stopping;
      stopping = stopAll().then(({ drained, cutWorkers }) => {
        const end: SupervisorEnd =
          failure === null ? { kind: 'stopped', drained, cutWorkers } : { kind: 'failed', reason: failure };
        rejectStarted(new Error('the service was stopped before it started'));
        resolveEnded(end);
        return end;
      });
      return stopping;
    },
    cut() {
      if (stopping === null) return;
      for (const w of [...slotOf.keys(), ...spares.keys()]) post(w, { tscuda: 'cut' });
    },
  };
}
