/**
 * Load shedding on a server: admission on the headers (requests in progress, the turn budget,
 * adaptive admission), and the sampler that feeds adaptive admission from the event loop.
 * Admission counts a POST as in progress from its headers until its response is done (or its
 * connection goes), so a full server refuses new work before reading a body it would only drop,
 * and the bodies being read count against the limit: under an open-loop flood the requests in
 * progress, and the memory their bodies hold, stay bounded by maxPending.
 */
import type { ServerResponse } from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import type { ServerState } from '../state.js';
import { AdmissionController, type LoopSample } from './admission.js';
import { Refusals, refuse } from './refusals.js';
import { TurnBudget, turnLimit } from './turn-budget.js';

/** How often load shedding looks at the event loop, ms: short, so the admitted share follows the load within a few requests' time. */
const LOAD_SAMPLE_INTERVAL_MS = 50;
/** Resolution of the event-loop delay monitor, ms (its samples are late by at least this). */
const LOOP_DELAY_RESOLUTION_MS = 10;

/** Installs admission on `app`; returns the function that stops the sampler (close()). */
export function installShedding(app: FastifyInstance, state: ServerState): () => void {
  const { limits, options } = state;
  const refusals = new Refusals(limits);
  /** POSTs that reached admission since the last look at the loop. */
  let arrivals = 0;
  /** POSTs refused by the turn budget since the last look. */
  let refusedInLongTurns = 0;
  const turnBudget = limits.maxTurnMs > 0 ? new TurnBudget(limits.maxTurnMs) : null;
  const floodTurn = turnLimit(limits, true);
  const quietTurn = turnLimit(limits, false);
  const admission =
    limits.maxEventLoopDelayMs > 0 ? new AdmissionController({ targetLagMs: limits.maxEventLoopDelayMs }) : null;
  state.admission = admission;
  let stop = (): void => undefined;
  if (admission !== null) {
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
        arrivals,
        refusedInLongTurns,
      } satisfies LoopSample;
      arrivals = 0;
      delay.reset();
      utilization = used;
      last = now;
      admission.update(sample);
      const counts = admission.takeCounts();
      refusedInLongTurns = 0;
      if (options.onLoadSample) {
        // A mistake in the caller's tracing must not take the server down from inside a timer.
        try {
          options.onLoadSample({ ...sample, share: admission.share, ...counts, pending: state.pending });
        } catch (error) {
          process.emitWarning(
            `createServer onLoadSample threw: ${error instanceof Error ? error.message : String(error)}`,
            { code: 'TSCUDA_LOAD_SAMPLE_FAILED' },
          );
        }
      }
    }, LOAD_SAMPLE_INTERVAL_MS);
    sampler.unref();
    stop = () => {
      clearInterval(sampler);
      delay.disable();
    };
  }

  /** Each admitted request's response, with its endpoint (the pending gauge's label). */
  const admitted = new WeakMap<ServerResponse, string>();
  /** One listener for every admitted response (no closure per request): 'finish', or 'close' when the connection goes first. */
  function leave(this: ServerResponse): void {
    const endpoint = admitted.get(this);
    if (endpoint === undefined) return;
    admitted.delete(this);
    state.pending--;
    state.metrics.pending.dec({ endpoint });
    if (state.pending === 0) state.onIdle?.();
  }

  app.addHook('onRequest', (request, reply, done) => {
    if (request.method !== 'POST') {
      done();
      return;
    }
    arrivals++;
    // Asked first, for every POST: the budget counts the turn's new requests. Before a flood is seen
    // a turn may read more than 64 for maxEventLoopDelayMs; the refusals that cut a flood's first long
    // turn there start the pressure, faster than looks at the loop can (they need two late ones).
    const limit = admission !== null && admission.underPressure ? floodTurn : quietTurn;
    const inLongTurn = turnBudget !== null && turnBudget.overBudget(limit.ms, limit.arrivals);
    if (state.pending >= limits.maxPending) {
      refuse(state, request, reply, refusals.tooManyRequests());
      return;
    }
    if (inLongTurn) {
      refusedInLongTurns++;
      refuse(state, request, reply, refusals.longTurn(limit.ms));
      return;
    }
    if (admission !== null && !admission.admit()) {
      refuse(state, request, reply, refusals.overloaded(admission.share));
      return;
    }
    const endpoint = request.routeOptions.url ?? 'unknown';
    admitted.set(reply.raw, endpoint);
    state.pending++;
    state.metrics.pending.inc({ endpoint });
    // 'finish' once the response is handed to the socket, 'close' also when the connection goes first.
    reply.raw.once('finish', leave);
    reply.raw.once('close', leave);
    done();
  });
  return stop;
}
