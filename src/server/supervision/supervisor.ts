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
import { post } from './post.js';
import { CONFIG_ENV, DEFAULT_DRAIN_MS, isProtocolMessage, type WorkerConfig, type WorkerMessage } from './protocol.js';
import { StandbyPool } from './standby-pool.js';
import { stopWorkers } from './stop-workers.js';
import type { Supervisor, SupervisorEnd, SupervisorOptions } from './supervisor-options.js';
import { workerDevice } from './worker-devices.js';
import { positiveInteger } from '../../runtime/value-checks.js';

export type { Supervisor, SupervisorEnd, SupervisorOptions } from './supervisor-options.js';

/** One serving place of the service: the worker in it, and those it replaced that wait to leave. */
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

/** Starts the workers and keeps them running; call from the primary process only. */
export function superviseWorkers(options: SupervisorOptions): Supervisor {
  if (!cluster.isPrimary) throw new Error('superviseWorkers() runs in the primary process');
  positiveInteger(options.workers, 'workers');
  const devices = options.devices;
  if (!Array.isArray(devices) || devices.length === 0)
    throw new RangeError('superviseWorkers: devices must list at least one device');
  cluster.setupPrimary({
    exec: options.workerEntry,
    execArgv: options.execArgv ?? process.execArgv,
    serialization: 'advanced',
  });
  const supervisor = new WorkerSupervisor(options, devices);
  supervisor.startAll();
  return supervisor;
}

/** The running service: its slots, its standbys, and what it does on each message and exit of a worker. */
class WorkerSupervisor implements Supervisor {
  readonly started: Promise<string>;
  readonly ended: Promise<SupervisorEnd>;
  readonly #options: SupervisorOptions;
  readonly #devices: readonly number[];
  readonly #log: (line: string) => void;
  readonly #maxStartFailures: number;
  readonly #slots: Slot[];
  readonly #slotOf = new Map<Worker, Slot>();
  /** The slot a worker served (kept after it has left, for its last counters). */
  readonly #slotIndex = new WeakMap<Worker, number>();
  /** Workers that reached `listening` (or `standby-ready`): an exit after that is a crash, not a failed start. */
  readonly #served = new WeakSet<Worker>();
  /** The one-line reason a worker gave for not starting. */
  readonly #startReasons = new WeakMap<Worker, string>();
  readonly #exitCodes = new Map<Worker, number | null>();
  readonly #ledger = new MetricsLedger<Worker>();
  readonly #standby = new StandbyPool();
  #stopping: Promise<SupervisorEnd> | null = null;
  #replacements = 0;
  #startedCount = 0;
  #address: string | null = null;
  #failure: string | null = null;
  #resolveStarted!: (address: string) => void;
  #rejectStarted!: (error: Error) => void;
  #resolveEnded!: (end: SupervisorEnd) => void;

  constructor(options: SupervisorOptions, devices: readonly number[]) {
    this.#options = options;
    this.#devices = devices;
    this.#log = options.log ?? (() => undefined);
    this.#maxStartFailures = options.maxStartFailures ?? 3;
    this.#slots = Array.from({ length: options.workers }, (_, index) => ({
      index,
      device: workerDevice(devices, index),
      worker: null,
      leaving: [],
      ready: false,
      startedAt: 0,
      quickExits: 0,
      startFailures: 0,
    }));
    this.started = new Promise<string>((resolve, reject) => {
      this.#resolveStarted = resolve;
      this.#rejectStarted = reject;
    });
    // A caller that only awaits `ended` must not see an unhandled rejection.
    this.started.catch(() => undefined);
    this.ended = new Promise<SupervisorEnd>((resolve) => (this.#resolveEnded = resolve));
  }

  /** Fills every slot and starts the standbys. */
  startAll(): void {
    for (const slot of this.#slots) this.#fill(slot);
    for (let i = 0; i < (this.#options.standby ?? 0); i++) this.#spawnSpare(workerDevice(this.#devices, i));
  }

  get readyWorkers(): number {
    return this.#slots.filter((s) => s.ready).length;
  }

  get replacements(): number {
    return this.#replacements;
  }

  stop(): Promise<SupervisorEnd> {
    if (this.#stopping !== null) return this.#stopping;
    this.#stopping = this.#stopAll().then(({ drained, cutWorkers }) => {
      const end: SupervisorEnd =
        this.#failure === null ? { kind: 'stopped', drained, cutWorkers } : { kind: 'failed', reason: this.#failure };
      this.#rejectStarted(new Error('the service was stopped before it started'));
      this.#resolveEnded(end);
      return end;
    });
    return this.#stopping;
  }

  cut(): void {
    if (this.#stopping === null) return;
    for (const w of [...this.#slotOf.keys(), ...this.#standby.workers]) post(w, { tscuda: 'cut' });
  }

  #broadcastPeers(): void {
    const readyWorkers = this.#slots.filter((s) => s.ready).map((s) => s.worker);
    for (const w of this.#slotOf.keys())
      post(w, { tscuda: 'peers', ready: readyWorkers.filter((r) => r !== w).length });
  }

  #spawn(device: number, standby: boolean): Worker {
    const config: WorkerConfig = { ...this.#options.config, devices: [device], ...(standby ? { standby: true } : {}) };
    const worker = cluster.fork({ [CONFIG_ENV]: JSON.stringify(config) });
    guardHandoffs(worker, (n) =>
      this.#log(`worker ${worker.id} exited holding ${n} connection(s) it had not read: answered 503 worker_lost`),
    );
    worker.on('message', (m: unknown) => this.#onMessage(worker, m));
    // Its counters are kept once it has exited and its channel is drained (its final report may come after 'exit').
    const gone = Promise.all([
      new Promise((r) => worker.once('disconnect', r)),
      new Promise((r) => worker.once('exit', r)),
    ]);
    void gone.then(() => this.#ledger.retire(worker));
    worker.on('exit', (code, signal) => {
      this.#exitCodes.set(worker, code);
      this.#onExit(worker, code, signal);
    });
    // An IPC write to a worker that is leaving fails asynchronously: logged, never an uncaught 'error' that kills the primary.
    worker.on('error', (e: Error) => this.#log(`worker ${worker.id}: ${e.message}`));
    return worker;
  }

  #spawnSpare(device: number): void {
    if (this.#stopping !== null) return;
    this.#standby.add(this.#spawn(device, true), device);
  }

  /** Gives the slot a worker: a ready standby of its device when there is one, else a new process. */
  #fill(slot: Slot): void {
    slot.ready = false;
    slot.startedAt = Date.now();
    const spare = this.#standby.takeReady(slot.device);
    if (spare !== undefined) {
      this.#seat(slot, spare);
      post(spare, { tscuda: 'activate' });
      this.#log(`worker ${spare.id} (standby) takes over slot ${slot.index}`);
      this.#spawnSpare(slot.device);
      return;
    }
    this.#seat(slot, this.#spawn(slot.device, false));
  }

  #seat(slot: Slot, worker: Worker): void {
    slot.worker = worker;
    this.#slotOf.set(worker, slot);
    this.#slotIndex.set(worker, slot.index);
  }

  /** Every live worker's series (its last snapshot when it does not answer in time), and the departed ones' counters. */
  #clusterMetrics(): Promise<string> {
    return this.#ledger.collect(
      [...this.#slotOf].map(([worker, slot]) => [worker, slot.index] as const),
      (worker, requestId) => post(worker, { tscuda: 'metrics-collect', requestId }),
    );
  }

  #onMessage(worker: Worker, m: unknown): void {
    if (!isProtocolMessage(m)) return;
    const message = m as WorkerMessage;
    switch (message.tscuda) {
      case 'metrics-query':
        this.#clusterMetrics().then(
          (text: string) => post(worker, { tscuda: 'metrics-answer', requestId: message.requestId, text }),
          () => post(worker, { tscuda: 'metrics-answer', requestId: message.requestId, text: null }),
        );
        return;
      case 'metrics-json':
        return this.#ledger.answer(message.requestId, message.metrics);
      case 'final-metrics': {
        const index = this.#slotIndex.get(worker);
        if (index !== undefined) this.#ledger.record(worker, index, message.metrics);
        return;
      }
      case 'start-failed':
        this.#startReasons.set(worker, message.reason);
        return;
      case 'job-query': {
        // A job id of another worker: ask its owner, or answer "unknown" when it is gone.
        const owner = cluster.workers?.[message.target];
        if (owner === undefined || !owner.isConnected())
          post(worker, { tscuda: 'job-answer', requestId: message.requestId, answer: null });
        else post(owner, { ...message, replyTo: worker.id });
        return;
      }
      case 'job-answer': {
        const asker = message.replyTo === undefined ? undefined : cluster.workers?.[message.replyTo];
        if (asker !== undefined)
          post(asker, { tscuda: 'job-answer', requestId: message.requestId, answer: message.answer });
        return;
      }
      case 'standby-ready':
        return this.#onStandbyReady(worker);
      case 'listening':
        return this.#onListening(worker, message);
      case 'lost':
        return this.#onLost(worker, message.reason);
    }
  }

  #onStandbyReady(worker: Worker): void {
    if (this.#stopping !== null) post(worker, { tscuda: 'shutdown' });
    const device = this.#standby.markReady(worker);
    if (device !== undefined) {
      this.#served.add(worker);
      this.#log(`worker ${worker.id} (pid ${worker.process.pid}, device ${device}) on standby`);
    }
  }

  #onListening(worker: Worker, message: Extract<WorkerMessage, { tscuda: 'listening' }>): void {
    // A worker that was still starting when the stop began missed its 'shutdown' (it listens for messages once built).
    if (this.#stopping !== null) post(worker, { tscuda: 'shutdown' });
    const slot = this.#slotOf.get(worker);
    if (slot !== undefined && slot.worker === worker) {
      this.#served.add(worker);
      slot.startFailures = 0;
      slot.ready = message.ready;
      this.#address ??= message.address;
      this.#log(
        `worker ${worker.id} (pid ${worker.process.pid}, device ${slot.device}) listening on ${message.address}${message.ready ? '' : `, not ready: ${message.reason}`}`,
      );
      // The replacement serves: the workers it replaces may go.
      for (const old of slot.leaving) post(old, { tscuda: 'retire' });
      if (++this.#startedCount === this.#slots.length) this.#resolveStarted(this.#address);
    }
    this.#broadcastPeers();
  }

  #onLost(worker: Worker, reason: string): void {
    if (this.#standby.has(worker)) {
      this.#log(`standby worker ${worker.id} lost its GPU context (${reason}); replacing it`);
      post(worker, { tscuda: 'shutdown' });
      return;
    }
    this.#log(`worker ${worker.id} lost its GPU context (${reason}); starting a replacement`);
    const slot = this.#slotOf.get(worker);
    if (slot !== undefined && slot.worker === worker) {
      slot.leaving.push(worker);
      slot.worker = null;
      slot.ready = false;
      this.#broadcastPeers();
      if (this.#stopping === null) {
        this.#replacements++;
        this.#fill(slot);
      } else post(worker, { tscuda: 'shutdown' });
    }
  }

  /** Why `worker` exited before it served, in one line. */
  #startReason(worker: Worker, code: number | null, signal: string | null): string {
    return (
      this.#startReasons.get(worker) ??
      `a worker exited before it listened (${signal ?? `code ${code}`}); run with --workers 0 to see its error`
    );
  }

  #onExit(worker: Worker, code: number | null, signal: string | null): void {
    if (this.#standby.remove(worker)) return this.#onStandbyExit(worker, code, signal);
    const slot = this.#slotOf.get(worker);
    this.#slotOf.delete(worker);
    if (slot === undefined) return;
    const wasLeaving = slot.leaving.indexOf(worker);
    if (wasLeaving >= 0) {
      slot.leaving.splice(wasLeaving, 1);
      this.#log(`worker ${worker.id} left (code ${code ?? signal})`);
      return;
    }
    if (slot.worker !== worker) return;
    slot.worker = null;
    slot.ready = false;
    this.#broadcastPeers();
    if (this.#stopping !== null) return;
    const served = this.#served.has(worker);
    if (!served) {
      // It never listened: the same start would fail the same way. The first start fails the service
      // at once; a replacement is tried again a few times (a port briefly taken, a device resetting).
      slot.startFailures++;
      const reason = this.#startReason(worker, code, signal);
      const firstStart = this.#startedCount < this.#slots.length;
      if (firstStart || slot.startFailures >= this.#maxStartFailures) {
        void this.#fail(
          firstStart ? reason : `a replacement worker failed to start ${slot.startFailures} times: ${reason}`,
        );
        return;
      }
      this.#log(`worker ${worker.id} could not start (${reason}); trying again`);
    }
    // A crash after serving: replace it, backing off while it keeps dying soon after it starts.
    slot.quickExits = Date.now() - slot.startedAt < 2000 || !served ? slot.quickExits + 1 : 0;
    const delay = Math.min(10_000, slot.quickExits === 0 ? 0 : 250 * 2 ** (slot.quickExits - 1));
    if (served)
      this.#log(
        `worker ${worker.id} exited (code ${code ?? signal}); replacing it${delay > 0 ? ` in ${delay} ms` : ''}`,
      );
    this.#replacements++;
    setTimeout(() => {
      if (this.#stopping === null && slot.worker === null) this.#fill(slot);
    }, delay);
  }

  /** A standby exited (already out of the pool): another is started unless they keep failing to start. */
  #onStandbyExit(worker: Worker, code: number | null, signal: string | null): void {
    if (this.#stopping !== null) return;
    if (!this.#served.has(worker) && this.#standby.failedToStart() >= this.#maxStartFailures) {
      this.#log(
        `standby workers keep failing to start (${this.#startReason(worker, code, signal)}); no more are started`,
      );
      return;
    }
    this.#log(`standby worker ${worker.id} exited (code ${code ?? signal}); starting another in 1 s`);
    setTimeout(() => this.#spawnSpare(workerDevice(this.#devices, this.#standby.size)), 1000);
  }

  /** Stops every worker and waits for their exits; kills those still there `killGraceMs` after their drain's bound. */
  #stopAll(): Promise<{ drained: boolean; cutWorkers: number }> {
    return stopWorkers({
      workers: [...this.#slotOf.keys(), ...this.#standby.workers],
      served: (w) => this.#served.has(w),
      exitCode: (w) => this.#exitCodes.get(w),
      killAfterMs: (this.#options.config.drainMs ?? DEFAULT_DRAIN_MS) + (this.#options.killGraceMs ?? 5000),
    });
  }

  #fail(reason: string): Promise<SupervisorEnd> {
    if (this.#stopping !== null) return this.#stopping;
    this.#failure = reason;
    this.#stopping = this.#stopAll().then(() => {
      const end: SupervisorEnd = { kind: 'failed', reason };
      this.#rejectStarted(new Error(reason));
      this.#resolveEnded(end);
      return end;
    });
    return this.#stopping;
  }
}
