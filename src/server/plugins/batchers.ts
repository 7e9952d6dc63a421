/**
 * The batchers of `/v1/batch/*` as a server plugin: one per kind and vector length, made on first
 * use from the caller's factories (at most limits.maxBatchDims lengths per kind), closed on close.
 * Decorates `batchers`.
 */
import { BATCH_KINDS, type BatchFactories, type BatchItems, type BatchKind, type BatchSubmitter } from '../batch.js';
import { HttpError, invalidField } from '../errors.js';
import type { MetricsSources } from '../metrics.js';
import { sharedPlugin } from './shared-plugin.js';

/** What a batch route asks of the batchers. */
export interface Batchers {
  /** The kinds this server has a batcher factory for. */
  readonly kinds: readonly BatchKind[];
  /** Whether this server has a batcher factory for `kind`. */
  has(kind: BatchKind): boolean;
  /** The batcher of `kind` for vectors of `dim` floats, made on first use; 503 without a factory, 400 past maxBatchDims lengths. */
  batcherFor<K extends BatchKind>(kind: K, dim: number): BatchSubmitter<BatchItems[K]>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The batchers of `/v1/batch/*` (plugins/batchers.ts). */
    readonly batchers: Batchers;
  }
}

/** The batchers of one server. */
export class ServerBatchers implements Batchers {
  readonly kinds: readonly BatchKind[];
  readonly #factories: BatchFactories;
  readonly #maxDims: number;
  /** The batchers made so far, by `kind:dim`. */
  readonly #made = new Map<string, { kind: BatchKind; dim: number; submitter: BatchSubmitter<unknown> }>();

  constructor(factories: BatchFactories | undefined, maxDims: number) {
    this.#factories = factories ?? {};
    this.#maxDims = maxDims;
    this.kinds = BATCH_KINDS.filter((k) => this.#factories[k] !== undefined);
  }

  has(kind: BatchKind): boolean {
    return this.#factories[kind] !== undefined;
  }

  batcherFor<K extends BatchKind>(kind: K, dim: number): BatchSubmitter<BatchItems[K]> {
    const key = `${kind}:${dim}`;
    const known = this.#made.get(key);
    if (known !== undefined) return known.submitter as BatchSubmitter<BatchItems[K]>;
    const factory = this.#factories[kind] as ((dim: number) => BatchSubmitter<BatchItems[K]>) | undefined;
    if (factory === undefined) throw new HttpError(503, 'batcher_unavailable', `this server has no ${kind} batcher`);
    const sameKind = [...this.#made.values()].filter((b) => b.kind === kind).length;
    if (sameKind >= this.#maxDims)
      throw invalidField(
        'items',
        `vectors of ${dim} values would need a new ${kind} batcher; this server serves at most ${this.#maxDims} vector lengths per kind`,
      );
    const submitter = factory(dim);
    this.#made.set(key, { kind, dim, submitter: submitter as BatchSubmitter<unknown> });
    return submitter;
  }

  /** Each batcher's counts, for the metrics. */
  stats(): ReturnType<MetricsSources['batcherStats']> {
    return [...this.#made.values()].map((b) => {
      const m = b.submitter.metrics;
      return {
        kind: b.kind,
        dim: b.dim,
        batches: m?.batches ?? 0,
        items: m?.items ?? 0,
        fillRate: m?.fillRate ?? 0,
        queued: m?.queued ?? 0,
      };
    });
  }

  /** Closes every batcher made (the server's close, once no request is left to use them). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#made.values()].map((b) => b.submitter.close?.()));
  }
}

/**
 * Decorates `batchers` and closes them on close: registered before the GPU plugin, they close
 * after its onClose has let the requests in progress finish (fastify runs onClose hooks in
 * reverse order of registration).
 */
export const batchersPlugin = sharedPlugin<{ batchers: ServerBatchers }>(
  async (app, { batchers }) => {
    app.decorate('batchers', batchers);
    app.addHook('onClose', () => batchers.close());
  },
  { name: 'tscuda-batchers' },
);
