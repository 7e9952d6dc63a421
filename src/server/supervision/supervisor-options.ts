/**
 * What superviseWorkers() is given (its options) and what it gives back (the running Supervisor and
 * how it ended).
 */
import type { WorkerConfig } from './protocol.js';

/** Options of superviseWorkers(). */
export interface SupervisorOptions {
  /** Worker processes (at least 1). */
  workers: number;
  /** Path of the worker entry module (it calls runWorker()). */
  workerEntry: string;
  config: WorkerConfig;
  /**
   * The devices the workers are spread over (worker slot i on devices[i % n]), at least one:
   * `tscuda serve` gives spreadDevices() of its --devices. Each worker's config then names its one device.
   */
  devices: readonly number[];
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
