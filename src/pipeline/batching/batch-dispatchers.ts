/**
 * GPU dispatchers for the Batcher, mirroring the batching seed: per-vector gradients by
 * central finite differences, and lerp/slerp interpolation of float32 vectors. Each batch is
 * one upload of its packed inputs, one launch and one download, through pinned staging that
 * is reused from batch to batch (staged pairs of the runtime's BufferCache, one set per batch in
 * flight, grown when a batch is larger than they were sized for).
 */
import type { Context } from '../../runtime/context.js';
import { resolveContext, type Placement } from '../../runtime/defaults.js';
import { BufferCache } from '../../runtime/memory/buffer-cache.js';
import type { StagedBuffer } from '../../runtime/memory/staged-buffer.js';
import type { DeviceBuffer } from '../../runtime/memory/device-buffer.js';
import { type BatchKernels, loadBatchKernels } from '../../kernels/index.js';
import { DisposedError, Resource } from '../../runtime/resource.js';
import { Stream } from '../../runtime/stream.js';
import type { BatchDispatch, BatchInfo } from './batcher.js';

/** A dispatch function with the GPU resources behind it. */
export interface GpuBatchDispatcher<I, O> {
  readonly dispatch: BatchDispatch<I, O>;
  /** Throws a TypeError for an item the kernel cannot take, so it can be refused before it joins a batch. */
  validate(item: I): void;
  /** Vector length every item must have. */
  readonly dim: number;
  /** Staging sets: batches that can be in flight at once. */
  readonly depth: number;
  readonly stream: Stream;
  readonly label: string;
  readonly disposed: boolean;
  /** Frees the staging, the stream and the kernels; a batch waiting for staging rejects (DisposedError). */
  dispose(): void;
  /** `using` support: the same as dispose() (frees the staging, the stream and the kernels). */
  [Symbol.dispose](): void;
}

/** How a vector dispatcher is made. `device` / `context`: where it runs (default device 0). */
export interface VectorDispatcherDescriptor extends Placement {
  /** Floats per vector; every item of this dispatcher has this length. */
  dim: number;
  /** The batch size the staging is allocated for; larger batches grow it. */
  maxBatchSize: number;
  /** Staging sets, so that one batch is packed while another runs (default 2). */
  depth?: number | undefined;
  label?: string | undefined;
}

/** How a gradient dispatcher is made. */
export interface GradientDispatcherDescriptor extends VectorDispatcherDescriptor {
  /** Finite-difference step (default 5e-3, near the cube root of float32 epsilon). */
  h?: number | undefined;
}

/** @deprecated the name before issue 9; use VectorDispatcherDescriptor. */
export type VectorDispatcherOptions = VectorDispatcherDescriptor;
/** @deprecated the name before issue 9; use GradientDispatcherDescriptor. */
export type GradientDispatcherOptions = GradientDispatcherDescriptor;

/** lerp/slerp input: two vectors of `dim` floats and where between them, t in [0, 1]. */
export interface InterpolationItem {
  a: ArrayLike<number>;
  b: ArrayLike<number>;
  t: number;
}

interface KernelSpec<I> {
  name: string;
  /** Input floats per item in the packed upload. */
  inputsPerItem: number;
  validate(item: I): void;
  /** Writes the inputs of `items` into `packed` (n = items.length). */
  pack(items: readonly I[], packed: Float32Array): void;
  launch(
    kernels: BatchKernels,
    stream: Stream,
    input: DeviceBuffer<'f32'>,
    output: DeviceBuffer<'f32'>,
    n: number,
  ): void;
}

const BLOCK = 256;

function checkVector(v: ArrayLike<number>, dim: number, what: string): void {
  if (v === null || typeof v !== 'object' || typeof v.length !== 'number')
    throw new TypeError(`${what} must be an array of ${dim} numbers`);
  if (v.length !== dim) throw new TypeError(`${what} has ${v.length} values, expected ${dim}`);
}

class VectorDispatcher<I> extends Resource implements GpuBatchDispatcher<I, Float32Array> {
  readonly dim: number;
  readonly depth: number;
  readonly stream!: Stream;
  readonly #spec: KernelSpec<I>;
  readonly #context: Context;
  readonly #kernels: BatchKernels;
  /** The staging sets' staged pairs ('in' and 'out' of set i in slot i): doubled when a batch outgrows them. */
  readonly #staging: BufferCache;
  /** Staging sets (by index) no batch holds. */
  readonly #free: number[] = [];
  readonly #waiting: { resolve: (set: number) => void; reject: (e: Error) => void }[] = [];

  constructor(spec: KernelSpec<I>, options: VectorDispatcherDescriptor) {
    super('BatchDispatcher', options.label ?? `${spec.name}[${options.dim}]`);
    const { dim, maxBatchSize } = options;
    if (!Number.isInteger(dim) || dim < 1)
      throw new RangeError(`${spec.name} dispatcher: dim must be a positive integer, got ${dim}`);
    if (!Number.isInteger(maxBatchSize) || maxBatchSize < 1)
      throw new RangeError(`${spec.name} dispatcher: maxBatchSize must be a positive integer, got ${maxBatchSize}`);
    const depth = options.depth ?? 2;
    if (!Number.isInteger(depth) || depth < 1)
      throw new RangeError(`${spec.name} dispatcher: depth must be a positive integer, got ${depth}`);
    this.dim = dim;
    this.depth = depth;
    this.#spec = spec;
    this.#context = resolveContext(options);
    this.#kernels = loadBatchKernels({ context: this.#context });
    try {
      this.stream = new Stream({ context: this.#context, priority: 'high', label: `${this.label} stream` });
      this.#staging = new BufferCache({ context: this.#context, growth: 2, label: `${this.label} staging` });
      for (let i = 0; i < depth; i++) {
        this.#input(i, maxBatchSize);
        this.#output(i, maxBatchSize);
        this.#free.push(i);
      }
    } catch (e) {
      this.dispose();
      throw e;
    }
  }

  validate(item: I): void {
    this.#spec.validate(item);
  }

  readonly dispatch = async (items: readonly I[], info: BatchInfo): Promise<Float32Array[]> => {
    if (this.disposed) throw new DisposedError(`${this.label}: dispatcher was disposed`);
    const n = items.length;
    for (const item of items) this.#spec.validate(item);
    const set = await this.#acquire();
    try {
      // The set's previous batch has completed: growing its pairs (the auto-tuner may raise maxBatchSize) frees nothing in use.
      const input = this.#input(set, n);
      const output = this.#output(set, n);
      const inputs = this.#spec.inputsPerItem * n;
      this.#spec.pack(items, input.array);
      const stream = this.stream;
      input.upload(stream, { length: inputs });
      this.#spec.launch(this.#kernels, stream, input.device, output.device, n);
      const outputs = this.dim * n;
      output.download(stream, { length: outputs });
      await stream.done();
      if (this.disposed)
        throw new DisposedError(`${this.label}: dispatcher was disposed while batch #${info.batchId} ran`);
      // One copy out of the staging per batch; each submitter gets a view of it.
      const out = output.array.slice(0, outputs);
      const results = new Array<Float32Array>(n);
      for (let i = 0, dim = this.dim; i < n; i++) results[i] = out.subarray(i * dim, (i + 1) * dim);
      return results;
    } catch (e) {
      // Work already enqueued may still read the staging: the next batch must not refill it before that ends.
      if (!this.disposed) await this.stream.done().catch(() => undefined);
      if (e instanceof DisposedError) throw e;
      throw new Error(
        `${this.label}: batch #${info.batchId} of ${n} vectors failed: ${e instanceof Error ? e.message : String(e)}`,
        { cause: e },
      );
    } finally {
      this.#release(set);
    }
  };

  /** Staging set `set`'s packed inputs, for at least `items` items. */
  #input(set: number, items: number): StagedBuffer<'f32'> {
    return this.#staging.staged('in', 'f32', this.#spec.inputsPerItem * items, set);
  }

  /** Staging set `set`'s outputs, for at least `items` items. */
  #output(set: number, items: number): StagedBuffer<'f32'> {
    return this.#staging.staged('out', 'f32', this.dim * items, set);
  }

  #acquire(): Promise<number> {
    const set = this.#free.pop();
    if (set !== undefined) return Promise.resolve(set);
    return new Promise<number>((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  #release(set: number): void {
    if (this.disposed) return;
    const next = this.#waiting.shift();
    if (next) next.resolve(set);
    else this.#free.push(set);
  }

  /**
   * Frees the staging and the stream; call it once no batch is in flight (GpuBatcher.close()
   * does). A batch waiting for staging rejects with DisposedError; one in flight rejects once
   * its GPU work ends.
   */
  protected releaseNative(): void {
    // A batch waiting for staging has not touched the GPU: fail it rather than leave it pending.
    for (const w of this.#waiting.splice(0))
      w.reject(new DisposedError(`${this.label}: dispatcher was disposed while the batch waited for staging`));
    (this.#staging as BufferCache | undefined)?.dispose();
    this.#free.length = 0;
    (this.stream as Stream | undefined)?.dispose();
    (this.#kernels as BatchKernels | undefined)?.module.dispose();
  }
}

function grid(threads: number): number {
  return Math.max(1, Math.ceil(threads / BLOCK));
}

/** grad[i] = central finite differences of the batch objective (see kernels/batch.cu) at vector i. */
export function createGradientDispatcher(
  options: GradientDispatcherDescriptor,
): GpuBatchDispatcher<ArrayLike<number>, Float32Array> {
  const { dim } = options;
  const h = options.h ?? 5e-3;
  if (!(Number.isFinite(h) && h > 0))
    throw new RangeError(`gradient dispatcher: h must be a positive number, got ${h}`);
  return new VectorDispatcher<ArrayLike<number>>(
    {
      name: 'gradient',
      inputsPerItem: dim,
      validate: (x) => checkVector(x, dim, 'gradient input'),
      pack: (items, packed) => {
        for (let i = 0; i < items.length; i++) packed.set(items[i]!, i * dim);
      },
      launch: (k, stream, input, output, n) =>
        k.gradient_f32({ grid: grid(n * dim), block: BLOCK, stream }, input, output, dim, n, h),
    },
    options,
  );
}

function interpolation(
  name: 'lerp' | 'slerp',
  options: VectorDispatcherDescriptor,
): GpuBatchDispatcher<InterpolationItem, Float32Array> {
  const { dim } = options;
  return new VectorDispatcher<InterpolationItem>(
    {
      name,
      // Packed per batch as [a of every item | b of every item | t of every item].
      inputsPerItem: 2 * dim + 1,
      validate: (item) => {
        if (item === null || typeof item !== 'object') throw new TypeError(`${name} input must be { a, b, t }`);
        checkVector(item.a, dim, `${name} input a`);
        checkVector(item.b, dim, `${name} input b`);
        if (typeof item.t !== 'number' || !Number.isFinite(item.t))
          throw new TypeError(`${name} input t must be a finite number, got ${String(item.t)}`);
      },
      pack: (items, packed) => {
        const n = items.length;
        for (let i = 0; i < n; i++) {
          const item = items[i]!;
          packed.set(item.a, i * dim);
          packed.set(item.b, (n + i) * dim);
          packed[2 * n * dim + i] = item.t;
        }
      },
      launch: (k, stream, input, output, n) => {
        const a = input.view(0, n * dim);
        const b = input.view(n * dim, n * dim);
        const t = input.view(2 * n * dim, n);
        if (name === 'lerp') k.lerp_f32({ grid: grid(n * dim), block: BLOCK, stream }, a, b, t, output, dim, n);
        else k.slerp_f32({ grid: grid(n), block: BLOCK, stream }, a, b, t, output, dim, n);
      },
    },
    options,
  );
}

/** out = a + t (b - a), per vector. */
export function createLerpDispatcher(
  options: VectorDispatcherDescriptor,
): GpuBatchDispatcher<InterpolationItem, Float32Array> {
  return interpolation('lerp', options);
}

/** Spherical interpolation along the arc from a to b, per vector (lerp when they are almost parallel). */
export function createSlerpDispatcher(
  options: VectorDispatcherDescriptor,
): GpuBatchDispatcher<InterpolationItem, Float32Array> {
  return interpolation('slerp', options);
}
