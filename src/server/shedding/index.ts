/**
 * Load shedding: admission and the bounds of work in progress, asked for every POST on its
 * headers (onRequest), before its body is read. The requests in progress are bounded (maxPending,
 * 429), the loop turn's reading of new ones (turn-budget.ts), and, with maxEventLoopDelayMs, the
 * share of new work taken while the event loop runs behind (admission.ts), fed by a sampler of the
 * loop. Admission counts a POST as in progress from its headers until its response is done (or its
 * connection goes), so a full server refuses new work before reading a body it would only drop,
 * and the bodies being read count against the limit: under an open-loop flood the requests in
 * progress, and the memory their bodies hold, stay bounded by maxPending. The bytes of bodies held
 * at once are bounded too (body-budget.ts), counted as they arrive (holdBody).
 */
import type { ServerResponse } from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../errors.js';
import type { ServerMetrics } from '../metrics.js';
import type { CreateServerOptions, ServerLimits } from '../options.js';
import type { FailureAccounting } from '../plugins/accounting.js';
import { AdmissionController, type LoopSample } from './admission.js';
import { BodyBudget } from './body-budget.js';
import { Refusals } from './refusals.js';
import { TurnBudget, turnLimit } from './turn-budget.js';

/** How often load shedding looks at the event loop, ms: short, so the admitted share follows the load within a few requests' time. */
const LOAD_SAMPLE_INTERVAL_MS = 50;
/** Resolution of the event-loop delay monitor, ms (its samples are late by at least this). */
const LOOP_DELAY_RESOLUTION_MS = 10;

/** What the rest of the server asks of load shedding. */
export interface Shedding {
  /** POSTs admitted and not yet answered. */
  readonly pending: number;
  /** The share of new work admission takes now (1 when adaptive admission is off). */
  readonly admissionShare: number;
  /** Resolves once no admitted POST is left unanswered (at once when none is). */
  untilIdle(): Promise<void>;
  /** Counts `bytes` more of `request`'s body against the bodies' bound (limits.maxBodyBytesInFlight), or refuses the body: 429, retryable. */
  holdBody(request: FastifyRequest, bytes: number): void;
}

/** What load shedding is built from. */
export interface SheddingParts {
  readonly limits: ServerLimits;
  readonly metrics: ServerMetrics;
  readonly accounting: FailureAccounting;
  readonly onLoadSample?: CreateServerOptions['onLoadSample'];
}

/** The load shedding of one server: its counts are its own; the plugin (plugins/shedding.ts) asks it per request. */
export class LoadShedding implements Shedding {
  readonly #limits: ServerLimits;
  readonly #metrics: ServerMetrics;
  readonly #refusals: Refusals;
  readonly #turnBudget: TurnBudget | null;
  readonly #floodTurn: ReturnType<typeof turnLimit>;
  readonly #quietTurn: ReturnType<typeof turnLimit>;
  readonly #admission: AdmissionController | null;
  readonly #bodyBudget: BodyBudget;
  /** Each admitted request's response, with its endpoint (the pending gauge's label). */
  readonly #admitted = new WeakMap<ServerResponse, string>();
  /** POSTs that reached admission since the last look at the loop. */
  #arrivals = 0;
  /** POSTs refused by the turn budget since the last look. */
  #refusedInLongTurns = 0;
  #pending = 0;
  /** Set while someone waits for the last admitted request's response (untilIdle). */
  #onIdle: (() => void) | undefined;
  /** Stops the sampler of the loop. */
  #stopSampler = (): void => undefined;
  /** One listener for every admitted response (no closure per request): 'finish', or 'close' when the connection goes first. */
  readonly #leave: (this: ServerResponse) => void;
  /** The 'close' listener of every admitted response: the body no longer counts against the bound, and the request leaves. */
  readonly #closed: (this: ServerResponse) => void;

  constructor(parts: SheddingParts) {
    const { limits } = parts;
    this.#limits = limits;
    this.#metrics = parts.metrics;
    this.#refusals = new Refusals(limits, parts.accounting);
    this.#turnBudget = limits.maxTurnMs > 0 ? new TurnBudget(limits.maxTurnMs) : null;
    this.#floodTurn = turnLimit(limits, true);
    this.#quietTurn = turnLimit(limits, false);
    this.#admission =
      limits.maxEventLoopDelayMs > 0 ? new AdmissionController({ targetLagMs: limits.maxEventLoopDelayMs }) : null;
    this.#bodyBudget = new BodyBudget(limits.maxBodyBytesInFlight);
    if (this.#admission !== null) this.#sample(this.#admission, parts.onLoadSample);
    const self = this;
    this.#leave = function leave(this: ServerResponse): void {
      const endpoint = self.#admitted.get(this);
      if (endpoint === undefined) return;
      self.#admitted.delete(this);
      self.#pending--;
      self.#metrics.pending.dec({ endpoint });
      if (self.#pending === 0) self.#onIdle?.();
    };
    const leave = this.#leave;
    this.#closed = function closed(this: ServerResponse): void {
      self.#bodyBudget.release(this.req);
      leave.call(this);
    };
  }

  get pending(): number {
    return this.#pending;
  }

  get admissionShare(): number {
    return this.#admission?.share ?? 1;
  }

  untilIdle(): Promise<void> {
    if (this.#pending === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const before = this.#onIdle;
      this.#onIdle = () => {
        this.#onIdle = undefined;
        before?.();
        resolve();
      };
    });
  }

  holdBody(request: FastifyRequest, bytes: number): void {
    const budget = this.#bodyBudget;
    if (budget.take(request.raw, bytes)) return;
    // The refused body is dropped now: its bytes stop counting at once, not when its connection closes
    // (a moment later, after other bodies' chunks may have been refused for them).
    const held = budget.heldBytes;
    budget.release(request.raw);
    throw new HttpError(
      429,
      'bodies_full',
      `body: the server holds ${held} bytes of request bodies, its bound of ${budget.limitBytes} (limits.maxBodyBytesInFlight); retry`,
      {
        field: 'body',
        retryable: true,
        retryAfterS: this.#limits.retryAfterS,
      },
    );
  }

  /**
   * Admits a request on its headers or answers its 429 (fastify's onRequest; only POSTs are asked):
   * `done` is called for an admitted request, a refused one is answered on the socket.
   */
  admit(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
    if (request.method !== 'POST') {
      done();
      return;
    }
    this.#arrivals++;
    const admission = this.#admission;
    // Asked first, for every POST: the budget counts the turn's new requests. Before a flood is seen
    // a turn may read more than 64 for maxEventLoopDelayMs; the refusals that cut a flood's first long
    // turn there start the pressure, faster than looks at the loop can (they need two late ones).
    const limit = admission !== null && admission.underPressure ? this.#floodTurn : this.#quietTurn;
    const inLongTurn = this.#turnBudget !== null && this.#turnBudget.overBudget(limit.ms, limit.arrivals);
    if (this.#pending >= this.#limits.maxPending) {
      this.#refusals.send(request, reply, this.#refusals.tooManyRequests());
      return;
    }
    if (inLongTurn) {
      this.#refusedInLongTurns++;
      this.#refusals.send(request, reply, this.#refusals.longTurn(limit.ms));
      return;
    }
    if (admission !== null && !admission.admit()) {
      this.#refusals.send(request, reply, this.#refusals.overloaded(admission.share));
      return;
    }
    const endpoint = request.routeOptions.url ?? 'unknown';
    this.#admitted.set(reply.raw, endpoint);
    this.#pending++;
    this.#metrics.pending.inc({ endpoint });
    // 'finish' once the response is handed to the socket, 'close' also when the connection goes first.
    reply.raw.once('finish', this.#leave);
    reply.raw.once('close', this.#closed);
    done();
  }

  /** Stops the sampler of the loop (the server's close). */
  stop(): void {
    this.#stopSampler();
  }

  /** Samples the event loop every LOAD_SAMPLE_INTERVAL_MS for `admission`, telling `onLoadSample` each look. */
  #sample(admission: AdmissionController, onLoadSample: CreateServerOptions['onLoadSample']): void {
    const delay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
    delay.enable();
    let utilization = performance.eventLoopUtilization();
    let last = performance.now();
    const sampler = setInterval(() => {
      const now = performance.now();
      const used = performance.eventLoopUtilization();
      // The monitor's mean, and this timer's own lateness: one iteration longer than the interval
      // leaves the monitor few samples, but shows here in full.
      const monitored = delay.count > 0 ? delay.mean / 1e6 - LOOP_DELAY_RESOLUTION_MS : 0;
      const sample = {
        lagMs: Math.max(0, monitored, now - last - LOAD_SAMPLE_INTERVAL_MS),
        utilization: performance.eventLoopUtilization(used, utilization).utilization,
        arrivals: this.#arrivals,
        refusedInLongTurns: this.#refusedInLongTurns,
      } satisfies LoopSample;
      this.#arrivals = 0;
      delay.reset();
      utilization = used;
      last = now;
      admission.update(sample);
      const counts = admission.takeCounts();
      this.#refusedInLongTurns = 0;
      if (onLoadSample) {
        // A mistake in the caller's tracing must not take the server down from inside a timer.
        try {
          onLoadSample({ ...sample, share: admission.share, ...counts, pending: this.#pending });
        } catch (error) {
          process.emitWarning(
            `createServer onLoadSample threw: ${error instanceof Error ? error.message : String(error)}`,
            { code: 'TSCUDA_LOAD_SAMPLE_FAILED' },
          );
        }
      }
    }, LOAD_SAMPLE_INTERVAL_MS);
    sampler.unref();
    this.#stopSampler = () => {
      clearInterval(sampler);
      delay.disable();
    };
  }
}
