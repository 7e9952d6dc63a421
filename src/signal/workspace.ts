/**
 * What the signal operations keep between calls so that a warm call allocates no device memory:
 * the signal kernels (loaded once per context), cuFFT plans (one per shape, shared by every stream:
 * each call names its stream), window and band tables (immutable, per context), and scratch
 * buffers (per stream, grown when a bigger call arrives; work on one stream is ordered, so
 * consecutive calls may reuse them).
 */
import type { Context } from '../runtime/context.js';
import { FftPlanCache } from '../runtime/fft/plan-cache.js';
import type { FftPlan } from '../runtime/fft/plan.js';
import type { FftType } from '../runtime/fft/geometry.js';
import {
  COMPLEX_OF,
  complexToRealType,
  complexType,
  realToComplexType,
  type ComplexOf,
  type Precision,
} from '../runtime/fft/precision.js';
import type { LaunchConfig } from '../runtime/kernel.js';
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { DType } from '../runtime/memory/dtype.js';
import type { Stream } from '../runtime/stream.js';
import {
  loadFilterKernels,
  loadSignalKernels,
  loadSosKernels,
  type FilterKernels,
  type SignalKernels,
  type SosKernels,
} from '../kernels/launchers.generated.js';
import { getWindow, windowKey, type WindowSpec } from './window.js';
import { positiveInteger } from '../runtime/value-checks.js';
import type { Launch } from './launch.js';
import { DEFAULT_MAX_TABLE_BYTES, TableCache } from './table-cache.js';

export { COMPLEX_OF, type ComplexOf, type Precision };

type KernelBase = keyof SignalKernels & `${string}_f32` extends `${infer B}_f32` ? B : never;
/** The name of a generated signal launcher (every member of SignalKernels but its module and kernel table). */
type KernelName = Exclude<keyof SignalKernels, 'module' | 'kernels'> & string;

/** The parameters (after the launch config) of the generated launcher `N`. */
type Params<N extends keyof SignalKernels> = SignalKernels[N] extends (config: LaunchConfig, ...args: infer A) => void
  ? A
  : never;
/** One parameter that may come from either precision's variant: a buffer of either dtype, or the scalar both take. */
type Either<X, Y> = [X, Y] extends [DeviceBuffer<infer T1>, DeviceBuffer<infer T2>]
  ? DeviceBuffer<T1 | T2> | DeviceBuffer<T1> | DeviceBuffer<T2>
  : X | Y;
/** Two variants' parameter lists, position by position (a homomorphic map over A keeps it a tuple). */
type Zip<A extends readonly unknown[], C extends readonly unknown[]> = {
  [K in keyof A]: Either<A[K], K extends keyof C ? C[K] : never>;
};

/**
 * The launcher of signal kernel `B` at a precision chosen at run time: the generated parameter
 * list kept (arity, order, scalar types; a launch with a missing or swapped argument is a tsc
 * error), each buffer the f32 variant's dtype or the f64 variant's.
 */
export type PrecisionLaunch<B extends KernelBase> = (
  config: LaunchConfig,
  ...args: Zip<Params<`${B}_f32` & keyof SignalKernels>, Params<`${B}_f64` & keyof SignalKernels>>
) => void;

/** Per-context state: kernels, immutable tables. */
class ContextState {
  readonly kernels: SignalKernels;
  readonly launchers = new Map<string, Launch>();
  /** The filtering kernels (filter.cu), loaded on first use: most processes never filter. */
  filter: FilterKernels | undefined;
  readonly filterLaunchers = new Map<string, Launch>();
  /** sosfilt's parallel-in-time kernels (sos.cu), loaded on first use like filter. */
  sos: SosKernels | undefined;
  readonly sosLaunchers = new Map<string, Launch>();
  readonly tables: TableCache;
  constructor(
    readonly context: Context,
    maxTableBytes: number,
    onTableFreed: () => void,
  ) {
    this.kernels = loadSignalKernels({ context });
    this.tables = new TableCache(context, maxTableBytes, onTableFreed);
  }
}

/** Options of a SignalWorkspace. */
export interface SignalWorkspaceOptions {
  /** Bytes of tables (windows, band ranges, wavelet banks) kept per context; default DEFAULT_MAX_TABLE_BYTES (256 MiB). */
  maxTableBytes?: number | undefined;
  /** cuFFT plans kept; default DEFAULT_MAX_FFT_PLANS (64). */
  maxPlans?: number | undefined;
}

/**
 * The caches of the signal layer. One process-wide instance (`signalWorkspace`) serves every call;
 * `clear()` frees everything it holds (call it only when no signal work is in flight).
 */
export class SignalWorkspace {
  readonly #contexts = new Map<Context, ContextState>();
  /** Scratch per stream (a context's default stream included). */
  readonly #scratch = new Map<Stream, Map<string, DeviceBuffer<DType>>>();
  /** cuFFT plans, keyed without stream, at most `maxPlans` of them. */
  readonly plans: FftPlanCache;
  /** Bytes of tables kept per context. */
  readonly maxTableBytes: number;
  /** Tables, kernels or plans freed (clear(), a table rebuilt, a module reloaded). */
  #freed = 0;
  /** Scratch buffers of a stream freed by growing. */
  readonly #scratchFreed = new WeakMap<Stream, number>();

  /**
   * Changes whenever memory that work on `stream` may hold addresses of has gone away: its scratch
   * grown, a table rebuilt, kernels, tables or plans cleared. Work captured into a CUDA graph on a
   * stream holds raw addresses of that stream's scratch and of the tables, kernels and plans: a
   * graph captured under another generation must not be replayed (the engine's compute graphs
   * check it per job).
   */
  constructor(options: SignalWorkspaceOptions = {}) {
    this.maxTableBytes = positiveInteger(
      options.maxTableBytes ?? DEFAULT_MAX_TABLE_BYTES,
      'SignalWorkspace maxTableBytes',
    );
    this.plans = new FftPlanCache({ maxPlans: options.maxPlans });
  }

  generation(stream: Stream): number {
    return this.#freed + (this.#scratchFreed.get(stream) ?? 0) + this.plans.generation;
  }

  #state(context: Context): ContextState {
    let s = this.#contexts.get(context);
    if (!s || s.kernels.module.disposed) {
      if (s) this.#freed++; // its kernels went away with their module
      s = new ContextState(context, this.maxTableBytes, () => this.#freed++);
      this.#contexts.set(context, s);
    }
    return s;
  }

  /** The launcher `<base>_<precision>` in `context`, typed by its generated parameter list (see PrecisionLaunch). */
  kernel<B extends KernelBase>(context: Context, base: B, precision: Precision): PrecisionLaunch<B> {
    return this.#launcher(context, `${base}_${precision}`) as unknown as PrecisionLaunch<B>;
  }

  /**
   * The launcher of the signal kernel `name` in `context`: the 16-bit variants, whose name is built
   * from the sample dtype at run time (`detrend_window_i16_f32`, `frame_bf16_f64`, `narrow_f32_f16`).
   * Untyped past the name (a union of variants cannot be called typed); the kernel's parameter
   * block checks each argument's kind and the launcher each buffer's context.
   */
  kernelNamed(context: Context, name: KernelName): Launch {
    return this.#launcher(context, name);
  }

  /** The launcher of the filter kernel `name` (`sosfilt_f32`, `fir_f64`, ...) in `context`; untyped past the name, like kernelNamed. */
  filterKernel(context: Context, name: Exclude<keyof FilterKernels, 'module' | 'kernels'>): Launch {
    const state = this.#state(context);
    if (!state.filter || state.filter.module.disposed) {
      state.filter = loadFilterKernels({ context });
      state.filterLaunchers.clear();
    }
    let launch = state.filterLaunchers.get(name);
    if (!launch) {
      // The one untyped step, as in #launcher: the name is built from the precision at run time.
      launch = (state.filter[name] as unknown as Launch).bind(state.filter);
      state.filterLaunchers.set(name, launch);
    }
    return launch;
  }

  /** The launcher of sosfilt's parallel-in-time kernel `name` (`sos_scan_up_f32`, ...) in `context`; untyped past the name, like filterKernel. */
  sosKernel(context: Context, name: Exclude<keyof SosKernels, 'module' | 'kernels'>): Launch {
    const state = this.#state(context);
    if (!state.sos || state.sos.module.disposed) {
      state.sos = loadSosKernels({ context });
      state.sosLaunchers.clear();
    }
    let launch = state.sosLaunchers.get(name);
    if (!launch) {
      launch = (state.sos[name] as unknown as Launch).bind(state.sos);
      state.sosLaunchers.set(name, launch);
    }
    return launch;
  }

  #launcher(context: Context, name: KernelName): Launch {
    const state = this.#state(context);
    let launch = state.launchers.get(name);
    if (!launch) {
      // The one untyped step: the name is built at run time; kernel() gives back the launcher's own type.
      const generated = state.kernels[name] as unknown as Launch;
      launch = generated.bind(state.kernels);
      state.launchers.set(name, launch);
    }
    return launch;
  }

  /** A cached 1-D batched plan of `n`-point transforms. */
  plan<T extends FftType>(context: Context, type: T, n: number, batch: number): FftPlan<T> {
    return this.plans.basic(context, type, n, batch);
  }

  /**
   * `batch` forward real transforms of `n` points of precision `p` (R2C or D2Z, chosen by
   * realToComplexType) from `input` (real) into `output` (one-sided complex), on `stream`. The
   * plan checks both buffers' dtypes and sizes against its type.
   */
  realForward(
    context: Context,
    p: Precision,
    n: number,
    batch: number,
    input: DeviceBuffer<DType>,
    output: DeviceBuffer<DType>,
    stream: Stream,
  ): void {
    this.plan(context, realToComplexType(p), n, batch).forward(
      input as DeviceBuffer<Precision>,
      output as DeviceBuffer<ComplexOf<Precision>>,
      { stream },
    );
  }

  /** `batch` in-place complex transforms of `n` points over precision `p`'s complex type (C2C or Z2Z), `direction` forward or inverse (unnormalised). */
  complexInPlace(
    context: Context,
    p: Precision,
    n: number,
    batch: number,
    buffer: DeviceBuffer<DType>,
    direction: 'forward' | 'inverse',
    stream: Stream,
  ): void {
    const data = buffer as DeviceBuffer<ComplexOf<Precision>>;
    const plan = this.plan(context, complexType(p), n, batch);
    if (direction === 'forward') plan.forward(data, data, { stream });
    else plan.inverse(data, data, { stream });
  }

  /** The inverse of realForward: one-sided complex `input` back to `n` real points each (C2R or Z2D; unnormalised, and cuFFT overwrites `input`). */
  realInverse(
    context: Context,
    p: Precision,
    n: number,
    batch: number,
    input: DeviceBuffer<DType>,
    output: DeviceBuffer<DType>,
    stream: Stream,
  ): void {
    this.plan(context, complexToRealType(p), n, batch).inverse(
      input as DeviceBuffer<ComplexOf<Precision>>,
      output as DeviceBuffer<Precision>,
      { stream },
    );
  }

  /** The window `spec` of `n` points as a device table of `precision` (cached per context; see `table`). */
  window(context: Context, spec: WindowSpec, n: number, precision: Precision, stream: Stream): DeviceBuffer<Precision> {
    return this.table(context, `window:${windowKey(spec)}:${n}`, precision, stream, () => {
      const w = getWindow(spec, n);
      return precision === 'f32' ? Float32Array.from(w) : w;
    });
  }

  /**
   * An immutable table cached under `key` (per context), its host values made by `make` on first
   * use and uploaded on `stream` (other streams then wait for the upload; on the context's default
   * stream the upload is synchronous: write() returns once the bytes are on the device).
   */
  table<T extends 'i32' | 'f64' | 'f32'>(
    context: Context,
    key: string,
    dtype: T,
    stream: Stream,
    make: () => Int32Array | Float64Array | Float32Array,
  ): DeviceBuffer<T> {
    const cacheKey = `table:${dtype}:${key}`;
    // A ready table is one Map lookup, before this method's closures are made.
    const ready = this.#ready<T>(context, cacheKey, stream);
    if (ready) return ready;
    let values: Int32Array | Float64Array | Float32Array | undefined;
    const alloc = (): DeviceBuffer<T> => {
      values = make();
      return DeviceBuffer.alloc(dtype, values.length, { context, label: `signal table ${key.slice(0, 60)}` });
    };
    const upload = (b: DeviceBuffer<T>): void => {
      (b as DeviceBuffer<DType>).write(values as never, { stream });
    };
    return this.built(context, cacheKey, stream, alloc, upload);
  }

  /** The buffer built under `key` when `stream` may use it with nothing to wait for (built on `stream`, or its build long finished). */
  #ready<T extends DType>(context: Context, key: string, stream: Stream): DeviceBuffer<T> | undefined {
    return this.#state(context).tables.ready<T>(key, stream);
  }

  /**
   * A table cached under `key` (per context) that the GPU fills: `make` allocates it and `build`
   * enqueues its filling on `stream`, once (see TableCache: later users on other streams wait for
   * it; tables used longest ago are freed past maxTableBytes).
   */
  built<T extends DType>(
    context: Context,
    key: string,
    stream: Stream,
    make: () => DeviceBuffer<T>,
    build: (buffer: DeviceBuffer<T>) => void,
  ): DeviceBuffer<T> {
    return this.#state(context).tables.built(key, stream, make, build);
  }

  /** The tables of `context` (bytes held, evictions). */
  tables(context: Context): TableCache {
    return this.#state(context).tables;
  }

  /**
   * A scratch buffer of at least `length` elements for work on `stream` (the context's default
   * stream too), one per `purpose`: grown when too small (cuMemFree of the old one, which waits
   * for the work using it; not stream-ordered, since a stream-ordered free needs its stream alive).
   */
  scratch<T extends DType>(
    context: Context,
    stream: Stream,
    purpose: string,
    dtype: T,
    length: number,
  ): DeviceBuffer<T> {
    let map = this.#scratch.get(stream);
    const key = `${purpose}:${dtype}`;
    const have = map?.get(key);
    if (have && !have.disposed && have.length >= length) return have as DeviceBuffer<T>;
    this.#sweep();
    if (!map) {
      map = new Map();
      this.#scratch.set(stream, map);
    }
    if (have && !have.disposed) have.dispose();
    if (have) this.#scratchFreed.set(stream, (this.#scratchFreed.get(stream) ?? 0) + 1);
    // Grow by a quarter more than asked, so a slowly growing workload does not reallocate each call.
    const size = have ? Math.max(length, Math.ceil(have.length * 1.25)) : length;
    const label = `signal scratch ${purpose} (${stream.label})`;
    // Not stream-ordered: a stream-ordered free would need the stream alive when the buffer goes.
    const b = DeviceBuffer.alloc(dtype, size, { context, label });
    map.set(key, b as DeviceBuffer<DType>);
    return b;
  }

  /** Frees the scratch kept for `stream` (its work must be enqueued already; cuMemFree waits for it). Call before disposing the stream. */
  releaseStream(stream: Stream): void {
    const map = this.#scratch.get(stream);
    if (!map) return;
    this.#scratch.delete(stream);
    for (const b of map.values()) b.dispose();
    this.#scratchFreed.set(stream, (this.#scratchFreed.get(stream) ?? 0) + 1);
  }

  /** Frees the scratch of streams disposed since (their work was enqueued before; cuMemFree waits for it). */
  #sweep(): void {
    for (const [owner, map] of this.#scratch) {
      if (!owner.disposed) continue;
      for (const b of map.values()) b.dispose();
      this.#scratch.delete(owner);
    }
  }

  /** Frees every kernel module, table, scratch buffer and plan. No signal work may be in flight. */
  clear(): void {
    for (const map of this.#scratch.values()) for (const b of map.values()) b.dispose();
    this.#scratch.clear();
    for (const s of this.#contexts.values()) {
      s.tables.clear();
      s.kernels.module.dispose();
      s.filter?.module.dispose();
      s.sos?.module.dispose();
    }
    this.#contexts.clear();
    this.#freed++;
    this.plans.clear();
  }
}

/** The workspace every signal operation uses. */
export const signalWorkspace = new SignalWorkspace();

/** Frees the signal layer's cached kernels, plans, tables and scratch (no signal work may be in flight). */
export function clearSignalCaches(): void {
  signalWorkspace.clear();
}
