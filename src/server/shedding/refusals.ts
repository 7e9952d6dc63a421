/**
 * The 429s of load shedding, made once each and kept with their JSON: under a flood most answers
 * are refusals, and a new Error (with its stack trace) and a serialization per refusal cost the
 * loop a measurable share of what refusing is meant to save.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../errors.js';
import type { ServerLimits } from '../options.js';
import type { FailureAccounting } from '../plugins/accounting.js';

/** A cached refusal: the error (for its reason) and its JSON. */
export interface Refusal {
  error: HttpError;
  json: string;
}

/** The refusal cache's key of `too_many_requests` (the `overloaded` ones are keyed 0..100 by the admitted percent). */
const FULL = -1;
/** The refusal cache's keys of the 429s for a request read in a loop turn past its limit: LONG_TURN - the limit in ms. */
const LONG_TURN = -2;

/** The cached 429s of one server, and how they are sent. */
export class Refusals {
  readonly #cache = new Map<number, Refusal>();
  readonly #limits: ServerLimits;
  readonly #accounting: FailureAccounting;

  constructor(limits: ServerLimits, accounting: FailureAccounting) {
    this.#limits = limits;
    this.#accounting = accounting;
  }

  /** Keyed by a number (no key string built per refusal). */
  #get(key: number, make: () => HttpError): Refusal {
    let r = this.#cache.get(key);
    if (r === undefined) {
      const error = make();
      r = { error, json: JSON.stringify(error.toJSON()) };
      this.#cache.set(key, r);
    }
    return r;
  }

  /** Triton's REJECT: the requests in progress are at the limit. */
  tooManyRequests(): Refusal {
    const l = this.#limits;
    return this.#get(
      FULL,
      () =>
        new HttpError(
          429,
          'too_many_requests',
          `${l.maxPending} requests in progress (the limit); retry after ${l.retryAfterS} s`,
          {
            retryable: true,
            retryAfterS: l.retryAfterS,
          },
        ),
    );
  }

  /** Load shedding's 429: the event loop is the bottleneck; `share` of new work is taken now. */
  overloaded(share: number): Refusal {
    const l = this.#limits;
    const percent = Math.round(share * 100);
    return this.#get(
      percent,
      () =>
        new HttpError(
          429,
          'overloaded',
          `the server is overloaded: its event loop runs behind (limit ${l.maxEventLoopDelayMs} ms), so it takes ${percent} % of new work; retry after ${l.retryAfterS} s`,
          { retryable: true, retryAfterS: l.retryAfterS },
        ),
    );
  }

  /** The turn budget's 429: the loop turn reading this request has run past `ms`. */
  longTurn(ms: number): Refusal {
    const l = this.#limits;
    return this.#get(
      LONG_TURN - ms,
      () =>
        new HttpError(
          429,
          'overloaded',
          `the server is overloaded: its event loop had spent over ${ms} ms of one turn reading new requests (the limit) when this one came; retry after ${l.retryAfterS} s`,
          { retryable: true, retryAfterS: l.retryAfterS },
        ),
    );
  }

  /**
   * Answers a refusal on the headers, straight on the socket: the reply is hijacked, so none of
   * fastify's send path and hooks run for it (a flood is mostly refusals; this is the path the loop
   * must be fastest on). onResponse still counts it in the metrics.
   */
  send(request: FastifyRequest, reply: FastifyReply, r: Refusal): void {
    this.#accounting.failed(request, r.error.reason);
    reply.hijack();
    reply.raw.writeHead(429, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(r.json),
      'retry-after': String(this.#limits.retryAfterS),
    });
    reply.raw.end(r.json);
  }
}
