import { Batcher, type BatcherMetrics, type CloseOptions, type SubmitOptions } from './batcher.js';
import type { BatcherDescriptor } from './options.js';
import {
  createGradientDispatcher,
  createLerpDispatcher,
  createSlerpDispatcher,
  type GpuBatchDispatcher,
  type GradientDispatcherDescriptor,
  type InterpolationItem,
  type VectorDispatcherDescriptor,
} from './batch-dispatchers.js';
import { BATCHER_KEYS, resolveBatcherOptions } from './options.js';

/**
 * A Batcher over a GPU dispatcher: items are validated at submit, so a malformed item rejects
 * its own submit instead of failing a whole batch of other callers; close() drains, then frees
 * the GPU resources.
 */
export class GpuBatcher<I, O> {
  readonly batcher: Batcher<I, O>;
  readonly dispatcher: GpuBatchDispatcher<I, O>;

  constructor(dispatcher: GpuBatchDispatcher<I, O>, options: BatcherDescriptor) {
    if (typeof options !== 'object' || options === null)
      throw new TypeError(`new GpuBatcher() takes Batcher options, got ${options === null ? 'null' : typeof options}`);
    this.dispatcher = dispatcher;
    // No more batches in flight than staging sets: a slow GPU then backs up into submit().
    this.batcher = new Batcher<I, O>(dispatcher.dispatch, {
      ...options,
      maxConcurrentBatches: options.maxConcurrentBatches ?? dispatcher.depth,
    });
  }

  /** Batcher.submit() after validating every item with the dispatcher: a malformed item rejects this submit (with the dispatcher's TypeError) before any of its items is queued. */
  submit(items: readonly I[], options?: SubmitOptions): Promise<O[]> {
    try {
      if (Array.isArray(items)) for (const item of items) this.dispatcher.validate(item);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.batcher.submit(items, options);
  }

  /** Batcher.submitOne() after validating the item with the dispatcher: a malformed item rejects this call alone, before it is queued. */
  submitOne(item: I, options?: SubmitOptions): Promise<O> {
    try {
      this.dispatcher.validate(item);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.batcher.submitOne(item, options);
  }

  get metrics(): BatcherMetrics {
    return this.batcher.metrics;
  }

  /** Dispatches what is queued now; resolves once everything submitted before the call has settled (Batcher.flush()). */
  flush(): Promise<void> {
    return this.batcher.flush();
  }

  /** Drains (bounded with `timeoutMs` / `signal`, see Batcher.close()), then frees the GPU resources. */
  async close(options?: CloseOptions): Promise<void> {
    try {
      await this.batcher.close(options);
    } finally {
      this.dispatcher.dispose();
    }
  }

  /** `await using` support: close() with no bound, which drains every accepted item and then frees the dispatcher's GPU resources. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Closes at once (Batcher.dispose(): every unsettled submit rejects) and frees the GPU resources. */
  dispose(): void {
    try {
      this.batcher.dispose();
    } finally {
      this.dispatcher.dispose();
    }
  }

  /** `using` support: dispose(), which rejects every unsettled submit and frees the dispatcher's GPU resources at once. */
  [Symbol.dispose](): void {
    this.dispose();
  }
}

type DispatcherSide = Omit<VectorDispatcherDescriptor, 'maxBatchSize' | 'label'>;

/** Gradients of float32 vectors of `dim`, batched: `await g.submit([x1, x2])` -> [grad1, grad2]. */
export function gradientBatcher(
  options: BatcherDescriptor & DispatcherSide & Pick<GradientDispatcherDescriptor, 'h'>,
): GpuBatcher<ArrayLike<number>, Float32Array> {
  return new GpuBatcher(
    createGradientDispatcher(dispatcherOptions(options, 'gradient', GRADIENT_KEYS)),
    batcherPart(options),
  );
}

/** lerp of float32 vector pairs, batched: `await l.submitOne({ a, b, t })`. */
export function lerpBatcher(options: BatcherDescriptor & DispatcherSide): GpuBatcher<InterpolationItem, Float32Array> {
  return new GpuBatcher(
    createLerpDispatcher(dispatcherOptions(options, 'lerp', DISPATCHER_KEYS)),
    batcherPart(options),
  );
}

/** slerp of float32 vector pairs, batched. */
export function slerpBatcher(options: BatcherDescriptor & DispatcherSide): GpuBatcher<InterpolationItem, Float32Array> {
  return new GpuBatcher(
    createSlerpDispatcher(dispatcherOptions(options, 'slerp', DISPATCHER_KEYS)),
    batcherPart(options),
  );
}

/** The keys a vector batcher reads for its dispatcher, besides the Batcher's (the Record makes a new one fail to compile until listed). */
const DISPATCHER_KEYS = Object.keys({ dim: true, depth: true, device: true, context: true } satisfies Record<
  keyof DispatcherSide,
  true
>);
/** The gradient batcher's: those and the finite-difference step. */
const GRADIENT_KEYS = [...DISPATCHER_KEYS, 'h'];

/** The Batcher's own options among a GPU batcher's (the Batcher refuses keys it does not know). */
function batcherPart(options: BatcherDescriptor): BatcherDescriptor {
  const out: Record<string, unknown> = {};
  for (const key of BATCHER_KEYS)
    if (Object.hasOwn(options, key)) out[key] = (options as unknown as Record<string, unknown>)[key];
  return out as unknown as BatcherDescriptor;
}

function dispatcherOptions<O extends BatcherDescriptor & DispatcherSide>(
  options: O,
  name: string,
  keys: readonly string[],
): GradientDispatcherDescriptor {
  // null read 'label' of null: named here, with the call.
  if (typeof options !== 'object' || options === null)
    throw new TypeError(
      `${name}Batcher() takes an options object { dim, maxBatchSize, maxWaitMs, channelSize, ... }, got ${options === null ? 'null' : typeof options}`,
    );
  // The Batcher's options (and unknown keys) are checked before the dispatcher takes a GPU: a
  // mistake in them is named without a GPU, and with one no dispatcher is left behind.
  resolveBatcherOptions({ ...options, label: options.label ?? name }, keys);
  const out: GradientDispatcherDescriptor = {
    dim: options.dim,
    maxBatchSize: options.autoTune?.maxBatchSize ?? options.maxBatchSize,
    label: `${options.label ?? name}[${options.dim}]`,
  };
  if (options.depth !== undefined) out.depth = options.depth;
  if (options.context !== undefined) out.context = options.context;
  if (options.device !== undefined) out.device = options.device;
  const h = (options as { h?: number | undefined }).h;
  if (h !== undefined) out.h = h;
  return out;
}
