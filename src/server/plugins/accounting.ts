/**
 * The accounting of every answer, in fastify's hooks: bytes out, durations, successes, failures
 * by reason, and connections that closed before their answer. The reason of a failure is told by
 * whoever knows it (the error handler, load shedding, a route) and read once the answer is sent.
 * Decorates `metrics` (the server's ServerMetrics) and `accounting`.
 */
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FailureReason } from '../errors.js';
import type { ServerMetrics } from '../metrics.js';
import { sharedPlugin } from './shared-plugin.js';

/** What the accounting is told of a request. */
export interface FailureAccounting {
  /** Records why `request` failed, for the failure counter (its status alone says less: a 429 is a full queue or a loop behind). */
  failed(request: FastifyRequest, reason: FailureReason): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The server's metrics: what `/metrics` exposes; a route counts there what its answer does not show (a batch's size). */
    readonly metrics: ServerMetrics;
    /** Why a request failed, for the failure counter (plugins/accounting.ts). */
    readonly accounting: FailureAccounting;
  }
}

/** The accounting of one server's answers. */
export class Accounting implements FailureAccounting {
  readonly metrics: ServerMetrics;
  /** Why a request failed, until its answer is counted. */
  readonly #reasons = new WeakMap<FastifyRequest, FailureReason>();

  constructor(metrics: ServerMetrics) {
    this.metrics = metrics;
  }

  failed(request: FastifyRequest, reason: FailureReason): void {
    this.#reasons.set(request, reason);
  }

  /** Counts `request` when its connection closes before its response is sent, whatever the stage. */
  watchAbort(request: FastifyRequest, reply: FastifyReply): void {
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) this.metrics.aborted.inc({ endpoint: request.routeOptions.url ?? 'unknown' });
    });
  }

  /** Counts the bytes of an answer's body. */
  countBytesOut(request: FastifyRequest, reply: FastifyReply, payload: unknown): void {
    const endpoint = request.routeOptions.url ?? 'unknown';
    if (typeof payload === 'string' || Buffer.isBuffer(payload))
      this.metrics.bytesOut.inc({ endpoint }, Buffer.byteLength(payload));
    else if (payload instanceof Readable)
      this.metrics.bytesOut.inc({ endpoint }, Number(reply.getHeader('content-length') ?? 0)); // a streamed answer (sendResult sets its length)
  }

  /** Counts a sent answer: its duration, and a success or a failure by its reason (from its status when none was told). */
  countAnswer(request: FastifyRequest, reply: FastifyReply): void {
    const endpoint = request.routeOptions.url ?? 'unknown';
    if (endpoint === '/metrics' || endpoint.startsWith('/v2/health')) return;
    this.metrics.requestDuration.observe({ endpoint }, reply.elapsedTime / 1000);
    if (reply.statusCode < 400) this.metrics.requestSuccess.inc({ endpoint });
    else
      this.metrics.fail(
        endpoint,
        this.#reasons.get(request) ??
          (reply.statusCode === 429 ? 'REJECTED' : reply.statusCode < 500 ? 'INVALID' : 'OTHER'),
      );
  }
}

/** Decorates `metrics` and `accounting`, counts every answer, and stops the metrics' loop monitor on close. */
export const accountingPlugin = sharedPlugin<{ accounting: Accounting }>(
  async (app, { accounting }) => {
    app.decorate('metrics', accounting.metrics);
    app.decorate('accounting', accounting);
    // Callback style, not async: every answer passes these, and an async hook costs a promise each.
    app.addHook('onRequest', (request, reply, done) => {
      accounting.watchAbort(request, reply);
      done();
    });
    app.addHook('onSend', (request, reply, payload, done) => {
      accounting.countBytesOut(request, reply, payload);
      done(null, payload);
    });
    app.addHook('onResponse', (request, reply, done) => {
      accounting.countAnswer(request, reply);
      done();
    });
    app.addHook('onClose', (_instance, done) => {
      accounting.metrics.dispose();
      done();
    });
  },
  { name: 'tscuda-accounting' },
);
