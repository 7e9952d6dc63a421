/** Plan reuse: planning costs milliseconds, a cache hit a Map lookup. */
import type { Context } from '../context.js';
import { resolveContext } from '../defaults.js';
import type { DeviceBuffer } from '../memory/device-buffer.js';
import type { DType } from '../memory/dtype.js';
import { describeValue, expectResource } from '../resource.js';
import type { Stream } from '../stream.js';
import { leastRecentlyUsed, type Used } from '../least-recent.js';
import { positiveInteger } from '../value-checks.js';
import { fftPlanKey, type FftPlanDescriptor, type FftType } from './geometry.js';
import { FftPlan } from './plan.js';

/** Plans an FftPlanCache keeps by default; past it, the least recently used plan is freed (CuPy keeps 16, PyTorch up to 4096). */
export const DEFAULT_MAX_FFT_PLANS = 64;

/** Options of an FftPlanCache. */
export interface FftPlanCacheOptions {
  /** Most plans kept (each holds cuFFT's work area in GPU memory); past it the least recently used is freed. Default DEFAULT_MAX_FFT_PLANS. */
  maxPlans?: number | undefined;
}

/** A cached plan and when it was last handed out (the cache's own clock). */
interface Entry extends Used {
  readonly plan: FftPlan;
}

/**
 * Reuses plans, keyed by shape, type, batch, layout and context (not by stream or label): one plan
 * serves every stream, each call naming its own. It keeps at most `maxPlans` plans: a server that
 * sees many shapes would otherwise hold a cuFFT work area in GPU memory for every shape it ever
 * saw. A plan past the bound is freed when a new one is planned; plans are used at once, never
 * held by callers across another get(). `clear()` (and dispose) disposes every plan it made.
 */
export class FftPlanCache {
  readonly #plans = new Map<string, Entry>();
  /** 1-D basic plans by context (weakly: a disposed context's go with it) and `type:n:batch`, in front of #plans: their full key (geometry, layout, context id) costs microseconds, and a job asks several times. */
  #basic = new WeakMap<Context, Map<string, Entry>>();
  readonly #ids = new WeakMap<object, number>();
  #nextId = 1;
  #clock = 0;
  /** Most plans kept. */
  readonly maxPlans: number;
  hits = 0;
  misses = 0;
  /** Plans freed to stay within maxPlans. */
  evictions = 0;
  /**
   * Counts the times a plan this cache handed out went away (clear(), eviction, or a cached plan
   * found disposed): work captured into a CUDA graph refers to its plans' device memory, so a graph
   * made before a change of generation must not be replayed.
   */
  generation = 0;

  constructor(options: FftPlanCacheOptions = {}) {
    if (typeof options !== 'object' || options === null)
      throw new TypeError(`FftPlanCache options must be an object, got ${describeValue(options)}`);
    this.maxPlans = positiveInteger(options.maxPlans ?? DEFAULT_MAX_FFT_PLANS, 'FftPlanCache maxPlans');
  }

  #id(o: object | undefined): number {
    if (!o) return 0;
    let id = this.#ids.get(o);
    if (id === undefined) this.#ids.set(o, (id = this.#nextId++));
    return id;
  }

  /** The descriptor's cache key (shape, type, batch, layout, context; not the stream). */
  key(d: FftPlanDescriptor): string {
    return fftPlanKey(d, this.#id(resolveContext(d, d.stream)));
  }

  /** The cached plan for `d`, planned on the first request. Give each call its stream: `plan.forward(x, y, { stream })`. */
  get<T extends FftType>(d: FftPlanDescriptor<T>): FftPlan<T> {
    return this.#entry(d).plan as unknown as FftPlan<T>;
  }

  #entry(d: FftPlanDescriptor): Entry {
    const key = this.key(d);
    const cached = this.#plans.get(key);
    if (cached && !cached.plan.disposed && !cached.plan.context.disposed) {
      this.hits++;
      cached.used = ++this.#clock;
      return cached;
    }
    if (cached) {
      cached.plan.dispose();
      this.#plans.delete(key);
      this.#basic = new WeakMap();
      this.generation++;
    }
    this.misses++;
    // Cached plans carry no default stream: a plan shared by many streams is told its stream per call.
    const { stream: _stream, ...shared } = d;
    // Room first: the new plan's work area may need the memory the evicted one holds.
    if (this.#plans.size >= this.maxPlans) this.#evictLeastRecent();
    const plan = FftPlan.create({ ...shared, context: resolveContext(d, d.stream) });
    const entry: Entry = { plan: plan as unknown as FftPlan, used: ++this.#clock };
    this.#plans.set(key, entry);
    return entry;
  }

  /**
   * Frees the plan handed out longest ago. Its work areas go with it (cuMemFree, which waits for the
   * work still using them); the generation changes so graphs captured with it are captured again.
   */
  #evictLeastRecent(): void {
    const oldestKey = leastRecentlyUsed(this.#plans);
    if (oldestKey === undefined) return;
    const entry = this.#plans.get(oldestKey)!;
    this.#plans.delete(oldestKey);
    this.#basic = new WeakMap();
    this.evictions++;
    this.generation++;
    entry.plan.dispose();
  }

  /** The cached `batch` x `n`-point 1-D plan of `type` in `context` (get() with a basic layout), found without building get()'s key. */
  basic<T extends FftType>(context: Context, type: T, n: number, batch: number): FftPlan<T> {
    let byShape = this.#basic.get(context);
    const key = `${type}:${n}:${batch}`;
    const known = byShape?.get(key);
    if (known && !known.plan.disposed && !context.disposed) {
      this.hits++;
      known.used = ++this.#clock;
      return known.plan as unknown as FftPlan<T>;
    }
    const entry = this.#entry({ shape: [n], type, batch, context });
    // #entry may have replaced the front (an eviction): look it up again.
    byShape = this.#basic.get(context);
    if (!byShape) this.#basic.set(context, (byShape = new Map()));
    if (byShape.size >= 256) byShape.clear(); // a front, not the owner: bounded, refilled from #plans
    byShape.set(key, entry);
    return entry.plan as unknown as FftPlan<T>;
  }

  /** True when a live plan for `d` is cached. */
  has(d: FftPlanDescriptor): boolean {
    const entry = this.#plans.get(this.key(d));
    return !!entry && !entry.plan.disposed;
  }

  /** Plans held. */
  get size(): number {
    return this.#plans.size;
  }

  /** Disposes every cached plan and forgets them (hit/miss counts stay). */
  clear(): void {
    const plans = [...this.#plans.values()].map((entry) => entry.plan);
    this.#plans.clear();
    this.#basic = new WeakMap();
    if (plans.length > 0) this.generation++;
    let first: unknown;
    for (const p of plans) {
      try {
        p.dispose();
      } catch (e) {
        first ??= e;
      }
    }
    if (first !== undefined) throw first;
  }

  /** `using` support: clear(). */
  [Symbol.dispose](): void {
    this.clear();
  }
}

/** The plans `fft()` uses; `fftPlans.clear()` frees them. */
export const fftPlans = new FftPlanCache();

/** Options of the one-call `fft()`: direction, stream (default: the context's default stream), an output buffer (default: in place) and the batch count. */
export interface FftCallOptions {
  /** Inverse transform (unnormalized: N times the signal). Default forward. */
  inverse?: boolean | undefined;
  stream?: Stream | undefined;
  /** Write here instead of in place. */
  output?: DeviceBuffer<'c64'> | DeviceBuffer<'c128'> | undefined;
  /** Transforms of `x.length / batch` elements each (default 1). */
  batch?: number | undefined;
}

/**
 * One-call 1D complex FFT of a whole buffer (C2C for c64, Z2Z for c128), in place unless `output` is
 * given, with the plan taken from `fftPlans`. Unnormalized, like cuFFT.
 */
export function fft<B extends DeviceBuffer<'c64'> | DeviceBuffer<'c128'>>(x: B, options: FftCallOptions = {}): B {
  expectResource<DeviceBuffer>(x, 'DeviceBuffer', 'fft() input');
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`fft() options must be an object, got ${describeValue(options)}`);
  const dtype: DType = x.dtype;
  if (dtype !== 'c64' && dtype !== 'c128')
    throw new TypeError(`fft() needs a c64 or c128 buffer, got "${x.label}" of ${dtype}`);
  const type: FftType = dtype === 'c64' ? 'C2C' : 'Z2Z';
  const batch = options.batch ?? 1;
  if (!Number.isInteger(batch) || batch < 1 || x.length % batch !== 0)
    throw new RangeError(`fft(): ${x.length} elements do not split into ${batch} transforms`);
  const plan = fftPlans.get({ shape: [x.length / batch], type, batch, context: x.context });
  const out = (options.output ?? x) as DeviceBuffer<'c64'>;
  const exec = { stream: options.stream };
  if (options.inverse) (plan as FftPlan<'C2C'>).inverse(x as DeviceBuffer<'c64'>, out, exec);
  else (plan as FftPlan<'C2C'>).forward(x as DeviceBuffer<'c64'>, out, exec);
  return out as unknown as B;
}
