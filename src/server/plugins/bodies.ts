/**
 * Request bodies as a server plugin: the body readers (body-readers.ts) in place of fastify's,
 * binary bodies read into pooled memory (shedding/body-pool.ts says why), each kept for its
 * request until a job takes it (handOver) or the response is sent, and the pool trimmed back
 * after a burst. Decorates `bodies`.
 */
import type { FastifyRequest } from 'fastify';
import { BufferPool, type BufferAllocator } from '../../runtime/memory/buffer-pool.js';
import { installBodyReaders, type PooledBodyReader } from '../body-readers.js';
import { IdleTrim, readPooledBody, type BodyStream, type ReadBodyOptions } from '../shedding/body-pool.js';
import { sharedPlugin } from './shared-plugin.js';

/** Bytes of free request-body buffers kept for reuse (bodies beyond it are left to the garbage collector). */
const BODY_POOL_BYTES = 256 * 2 ** 20;
/** A body pool untouched this long, ms, is trimmed to BODY_POOL_IDLE_BYTES: a burst's memory goes back within twice this. */
const BODY_POOL_IDLE_MS = 5000;
/** Bytes of free body buffers kept once the server is idle. */
const BODY_POOL_IDLE_BYTES = 32 * 2 ** 20;

/** The pooled memory of bodies and results, as routes and the job runner use it. */
export interface PooledBodies {
  /** A pooled Buffer of `bytes` (a result's largest part, a fused job's arrays). */
  take(bytes: number): Buffer;
  /** Gives a Buffer of take() back; nothing may read or write it afterwards. */
  release(buffer: Buffer): void;
  /** The job now reads `request`'s pooled body: it goes back to the pool once the engine is done with the job's memory (Job.released). */
  handOver(request: FastifyRequest, job: { released: Promise<unknown> }): void;
  /** Whether `request` still holds its pooled body (no job has taken it). */
  holds(request: FastifyRequest): boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Pooled memory of request bodies and results (plugins/bodies.ts). */
    readonly bodies: PooledBodies;
  }
}

/** The pooled request bodies of one server. */
export class RequestBodies implements PooledBodies, PooledBodyReader {
  readonly #pool: BufferPool;
  /** Trims the pool back after a burst; touched by every binary body read. */
  readonly #trim: IdleTrim;
  /** A request's pooled body, until a job takes it or the response is sent. */
  readonly #held = new WeakMap<FastifyRequest, Buffer>();

  /** `allocator`: pinned memory the engine lends, so a body is copied to the GPU without staging. */
  constructor(allocator?: BufferAllocator) {
    this.#pool = new BufferPool(BODY_POOL_BYTES, allocator);
    this.#trim = new IdleTrim(this.#pool, { idleMs: BODY_POOL_IDLE_MS, keepBytes: BODY_POOL_IDLE_BYTES });
  }

  take(bytes: number): Buffer {
    return this.#pool.take(bytes);
  }

  release(buffer: Buffer): void {
    this.#pool.release(buffer);
  }

  handOver(request: FastifyRequest, job: { released: Promise<unknown> }): void {
    const body = this.#held.get(request);
    if (body === undefined) return;
    this.#held.delete(request);
    const release = (): void => this.#pool.release(body);
    void job.released.then(release);
  }

  holds(request: FastifyRequest): boolean {
    return this.#held.has(request);
  }

  /** Reads `request`'s binary body into pooled memory (readPooledBody), kept for it until a job takes it or its response is sent. */
  read(request: FastifyRequest, payload: BodyStream, limitBytes: number, options: ReadBodyOptions): Promise<Buffer> {
    this.#trim.touch();
    return readPooledBody(payload, request.headers['content-length'], limitBytes, this.#pool, options).then((body) => {
      this.#held.set(request, body);
      return body;
    });
  }

  /** `request`'s response was sent: a body no job took goes back to the pool. */
  responded(request: FastifyRequest): void {
    const body = this.#held.get(request);
    if (body === undefined) return;
    this.#held.delete(request);
    this.#pool.release(body);
  }

  /** Stops the trimming (the server's close). */
  stop(): void {
    this.#trim.stop();
  }
}

/**
 * Decorates `bodies`, installs the body readers on the registering instance, gives back a body
 * once its response is sent. Needs the config, load shedding (the bodies' bound) and the metrics
 * (bytes in) registered before it.
 */
export const bodiesPlugin = sharedPlugin<{ bodies: RequestBodies }>(
  async (app, { bodies }) => {
    app.decorate('bodies', bodies);
    installBodyReaders(app, { limits: app.config.limits, bodies, shedding: app.shedding, metrics: app.metrics });
    // Callback style, not async: every answer passes here, and an async hook costs a promise each.
    app.addHook('onResponse', (request, _reply, done) => {
      bodies.responded(request);
      done();
    });
    app.addHook('onClose', (_instance, done) => {
      bodies.stop();
      done();
    });
  },
  { name: 'tscuda-bodies', dependencies: ['tscuda-config', 'tscuda-shedding', 'tscuda-accounting'] },
);
