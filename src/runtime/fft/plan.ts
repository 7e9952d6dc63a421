import { CudaError, cufft } from '../../ffi/index.js';
import { cufftType } from '../../ffi/generated/types.js';
import type { Context } from '../context.js';
import type { DeviceBuffer } from '../memory/device-buffer.js';
import { resolveContext, type Placement } from '../defaults.js';
import { type DType, dtypeInfo } from '../memory/dtype.js';
import { Resource } from '../resource.js';
import type { Stream } from '../stream.js';

/**
 * cuFFT transform types: C2C/Z2Z complex↔complex (single/double), R2C/D2Z real→complex (forward
 * only), C2R/Z2D complex→real (inverse only).
 */
export type FftType = 'C2C' | 'R2C' | 'C2R' | 'Z2Z' | 'D2Z' | 'Z2D';
export type FftDirection = 'forward' | 'inverse';

/** Element types each plan type reads and writes, per direction (`never`: the direction does not exist). */
export interface FftDtypes {
  C2C: { forward: { input: 'c64'; output: 'c64' }; inverse: { input: 'c64'; output: 'c64' } };
  Z2Z: { forward: { input: 'c128'; output: 'c128' }; inverse: { input: 'c128'; output: 'c128' } };
  R2C: { forward: { input: 'f32'; output: 'c64' }; inverse: { input: never; output: never } };
  D2Z: { forward: { input: 'f64'; output: 'c128' }; inverse: { input: never; output: never } };
  C2R: { forward: { input: never; output: never }; inverse: { input: 'c64'; output: 'f32' } };
  Z2D: { forward: { input: never; output: never }; inverse: { input: 'c128'; output: 'f64' } };
}
export type FftInput<T extends FftType, D extends FftDirection> = FftDtypes[T][D]['input'];
export type FftOutput<T extends FftType, D extends FftDirection> = FftDtypes[T][D]['output'];

/**
 * cuFFT's advanced data layout (cufftPlanMany). Element `x` of transform `b` lives at
 * `b*dist + (x[0]*embed[1]*embed[2] + x[1]*embed[2] + x[2]) * stride` (embed[0] only sets the default
 * distance). Counts are elements of the side's own type: complex elements on a complex side, reals
 * on a real side. Giving any field selects the advanced layout; the rest default to a packed one:
 * embed = the side's logical shape, stride = 1, dist = stride × product(embed).
 */
export interface FftLayout {
  inembed?: readonly number[];
  istride?: number;
  idist?: number;
  onembed?: readonly number[];
  ostride?: number;
  odist?: number;
}

export interface FftPlanDescriptor<T extends FftType = FftType> extends FftLayout, Placement {
  /** Transform size per dimension, slowest-varying first (1 to 3 dimensions): [rows, cols] is row-major. */
  shape: readonly number[];
  type: T;
  /** Independent transforms done in one call (default 1). */
  batch?: number;
  /** Bind the plan to this stream (cufftSetStream); otherwise it runs on the context's legacy default stream. */
  stream?: Stream;
  label?: string;
}

interface TypeInfo {
  code: cufftType;
  forward: { input: DType; output: DType } | undefined;
  inverse: { input: DType; output: DType } | undefined;
  /** The input side holds n_last/2+1 complex elements in the last dimension (C2R, Z2D). */
  halfInput: boolean;
  /** The output side holds n_last/2+1 complex elements in the last dimension (R2C, D2Z). */
  halfOutput: boolean;
}

const TYPES: Readonly<Record<FftType, TypeInfo>> = {
  C2C: { code: cufftType.CUFFT_C2C, forward: { input: 'c64', output: 'c64' }, inverse: { input: 'c64', output: 'c64' }, halfInput: false, halfOutput: false },
  Z2Z: { code: cufftType.CUFFT_Z2Z, forward: { input: 'c128', output: 'c128' }, inverse: { input: 'c128', output: 'c128' }, halfInput: false, halfOutput: false },
  R2C: { code: cufftType.CUFFT_R2C, forward: { input: 'f32', output: 'c64' }, inverse: undefined, halfInput: false, halfOutput: true },
  D2Z: { code: cufftType.CUFFT_D2Z, forward: { input: 'f64', output: 'c128' }, inverse: undefined, halfInput: false, halfOutput: true },
  C2R: { code: cufftType.CUFFT_C2R, forward: undefined, inverse: { input: 'c64', output: 'f32' }, halfInput: true, halfOutput: false },
  Z2D: { code: cufftType.CUFFT_Z2D, forward: undefined, inverse: { input: 'c128', output: 'f64' }, halfInput: true, halfOutput: false },
};

/** CUFFT_FORWARD and CUFFT_INVERSE. */
const FORWARD = -1;
const INVERSE = 1;
const INT32_MAX = 2 ** 31 - 1;

function check(status: number, call: string, during: string): void {
  if (status !== 0) throw new CudaError('cufft', status, call, { during });
}

/** The resolved layout of a plan: what cufftPlanMany gets and how many elements each side touches. */
export interface FftGeometry {
  type: FftType;
  rank: number;
  n: readonly number[];
  batch: number;
  /** An FftLayout field was given: cufftPlanMany gets the embeds, strides and distances below. */
  advanced: boolean;
  inembed: readonly number[];
  istride: number;
  idist: number;
  onembed: readonly number[];
  ostride: number;
  odist: number;
  /** Elements the input buffer must hold (last index read + 1) when input and output differ. */
  inputElements: number;
  /** Elements the output buffer must hold (last index written + 1) when input and output differ. */
  outputElements: number;
  /**
   * In place (same address) real transforms with the basic layout use cuFFT's padded layout: the
   * real side's rows are 2·(n_last/2+1) reals long. These are the elements each side then needs.
   */
  inPlaceInputElements: number;
  inPlaceOutputElements: number;
}

const product = (xs: readonly number[]): number => xs.reduce((a, b) => a * b, 1);

function positiveInt(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > INT32_MAX) throw new RangeError(`FFT ${what} must be a positive 32-bit integer, got ${String(v)}`);
  return v;
}

/** Last element touched + 1, for one side of the layout. */
function sideExtent(logical: readonly number[], embed: readonly number[], stride: number, dist: number, batch: number): number {
  let last = 0;
  let pitch = 1;
  for (let k = logical.length - 1; k >= 0; k--) {
    last += (logical[k]! - 1) * pitch;
    pitch *= embed[k]!;
  }
  return (batch - 1) * dist + last * stride + 1;
}

/** Validates a plan descriptor (pure: no CUDA) and resolves its layout. Throws TypeError/RangeError naming the bad field. */
export function fftGeometry(d: FftPlanDescriptor): FftGeometry {
  if (typeof d !== 'object' || d === null) throw new TypeError('FftPlan needs a descriptor { shape, type }');
  const t = TYPES[d.type];
  if (!t || !Object.hasOwn(TYPES, d.type)) throw new TypeError(`FFT type must be one of ${Object.keys(TYPES).join(', ')}, got ${String(d.type)}`);
  if (!Array.isArray(d.shape) || d.shape.length < 1 || d.shape.length > 3) throw new RangeError(`FFT shape must have 1 to 3 dimensions, got ${JSON.stringify(d.shape)}`);
  const n = d.shape.map((x, i) => positiveInt(x, `shape[${i}]`));
  const batch = d.batch === undefined ? 1 : positiveInt(d.batch, 'batch');
  const rank = n.length;
  const half = n.map((x, i) => (i === rank - 1 ? Math.floor(x / 2) + 1 : x));
  const inLogical = t.halfInput ? half : n;
  const outLogical = t.halfOutput ? half : n;
  const advanced = d.inembed !== undefined || d.onembed !== undefined || d.istride !== undefined || d.ostride !== undefined || d.idist !== undefined || d.odist !== undefined;
  const embed = (v: readonly number[] | undefined, logical: readonly number[], what: string): number[] => {
    if (v === undefined) return [...logical];
    if (!Array.isArray(v) || v.length !== rank) throw new RangeError(`FFT ${what} must have one size per dimension (${rank}), got ${JSON.stringify(v)}`);
    return v.map((x, i) => {
      positiveInt(x, `${what}[${i}]`);
      if (x < logical[i]!) throw new RangeError(`FFT ${what}[${i}] = ${x} is smaller than the ${logical[i]} elements the transform has in that dimension`);
      return x;
    });
  };
  const inembed = embed(d.inembed, inLogical, 'inembed');
  const onembed = embed(d.onembed, outLogical, 'onembed');
  const istride = d.istride === undefined ? 1 : positiveInt(d.istride, 'istride');
  const ostride = d.ostride === undefined ? 1 : positiveInt(d.ostride, 'ostride');
  const idist = d.idist === undefined ? istride * product(inembed) : positiveInt(d.idist, 'idist');
  const odist = d.odist === undefined ? ostride * product(onembed) : positiveInt(d.odist, 'odist');
  if (advanced) {
    if (idist > INT32_MAX) throw new RangeError(`FFT idist ${idist} exceeds a 32-bit integer: give idist explicitly or a smaller layout`);
    if (odist > INT32_MAX) throw new RangeError(`FFT odist ${odist} exceeds a 32-bit integer: give odist explicitly or a smaller layout`);
  }
  const inputElements = sideExtent(inLogical, inembed, istride, idist, batch);
  const outputElements = sideExtent(outLogical, onembed, ostride, odist, batch);
  let inPlaceInputElements = inputElements;
  let inPlaceOutputElements = outputElements;
  if (!advanced && (t.halfInput || t.halfOutput)) {
    const complex = batch * product(half);
    const padded = 2 * complex; // reals: each row padded to 2·(n_last/2+1)
    inPlaceInputElements = t.halfInput ? complex : padded;
    inPlaceOutputElements = t.halfOutput ? complex : padded;
  }
  return { type: d.type, rank, n, batch, advanced, inembed, istride, idist, onembed, ostride, odist, inputElements, outputElements, inPlaceInputElements, inPlaceOutputElements };
}

/** What the buffer checks need of a buffer: DeviceBuffer has all of it. */
export interface FftBufferLike {
  readonly dtype: DType;
  readonly length: number;
  readonly address: number;
  readonly label: string;
}

/**
 * Checks that `input` and `output` suit a plan of geometry `g` run in `direction` (pure: no CUDA):
 * the direction exists, element types match, the buffers hold what the plan reads and writes, and
 * out-of-place buffers do not partly overlap. Throws TypeError or RangeError.
 */
export function checkFftBuffers(g: FftGeometry, direction: FftDirection, input: FftBufferLike, output: FftBufferLike, planLabel = `${g.type} plan`): void {
  const t = TYPES[g.type];
  const io = t[direction];
  if (!io) {
    throw new TypeError(
      t.forward
        ? `${planLabel}: a ${g.type} plan only transforms forward (real → complex); make a ${g.type === 'R2C' ? 'C2R' : 'Z2D'} plan for the inverse`
        : `${planLabel}: a ${g.type} plan only transforms inverse (complex → real); make a ${g.type === 'C2R' ? 'R2C' : 'D2Z'} plan for the forward transform`,
    );
  }
  if (input === output && io.input !== io.output) {
    throw new TypeError(`${planLabel}: ${g.type} turns ${io.input} into ${io.output}, so ${direction}() needs an output buffer of ${io.output} (in place: a ${io.output} buffer wrapping the same memory)`);
  }
  if (input.dtype !== io.input) throw new TypeError(`${planLabel}: ${direction} input "${input.label}" must hold ${io.input}, not ${input.dtype}`);
  if (output.dtype !== io.output) throw new TypeError(`${planLabel}: ${direction} output "${output.label}" must hold ${io.output}, not ${output.dtype}`);
  const inPlace = input.address === output.address;
  const needIn = inPlace ? g.inPlaceInputElements : g.inputElements;
  const needOut = inPlace ? g.inPlaceOutputElements : g.outputElements;
  const how = inPlace && needIn !== g.inputElements ? ' in place (padded real rows)' : '';
  if (input.length < needIn) throw new RangeError(`${planLabel}: input "${input.label}" holds ${input.length} ${input.dtype} elements, the plan reads ${needIn}${how}`);
  if (output.length < needOut) throw new RangeError(`${planLabel}: output "${output.label}" holds ${output.length} ${output.dtype} elements, the plan writes ${needOut}${how}`);
  if (!inPlace) {
    const inEnd = input.address + needIn * dtypeInfo(input.dtype).bytes;
    const outEnd = output.address + needOut * dtypeInfo(output.dtype).bytes;
    if (input.address < outEnd && output.address < inEnd) {
      throw new RangeError(`${planLabel}: input "${input.label}" and output "${output.label}" overlap without starting at the same address; cuFFT needs disjoint buffers or one in-place buffer`);
    }
  }
}

/**
 * The FftPlanCache key of a descriptor: type, shape, batch, the resolved layout, and the identities
 * of the stream and context (numbers the cache assigns). The label does not count.
 */
export function fftPlanKey(d: FftPlanDescriptor, streamId: number, contextId = 0): string {
  const g = fftGeometry(d);
  const layout = g.advanced ? [g.inembed, g.istride, g.idist, g.onembed, g.ostride, g.odist] : 'basic';
  return JSON.stringify([g.type, g.n, g.batch, layout, streamId, contextId]);
}

function describePlan(g: FftGeometry): string {
  return `${g.type} ${g.n.join('x')}${g.batch > 1 ? ` x${g.batch}` : ''}`;
}

/**
 * A cuFFT plan: 1D, 2D or 3D, batched, with an optional advanced layout (strides, distances,
 * embeds), bound to a stream.
 *
 * cuFFT does not normalize: `inverse(forward(x)) = N·x`, N the product of the shape (per
 * transform). Divide by N yourself where you need the round trip to be the identity.
 * Forward is e^(-2πi·jk/N), inverse e^(+2πi·jk/N). Complex-to-real transforms (C2R, Z2D) may
 * overwrite their input, also out of place.
 */
export class FftPlan<T extends FftType = FftType> extends Resource {
  /** The cufftHandle. */
  readonly handle: number;
  readonly type: T;
  readonly shape: readonly number[];
  readonly batch: number;
  readonly geometry: Readonly<FftGeometry>;
  /** Bytes of the work area cuFFT allocated for the plan (cufftGetSize). */
  readonly workAreaBytes: number;
  readonly context: Context;
  #stream: Stream | undefined;

  private constructor(g: FftGeometry, handle: number, workAreaBytes: number, context: Context, label: string | undefined) {
    super('FftPlan', label ?? `FftPlan ${describePlan(g)}`);
    this.handle = handle;
    this.type = g.type as T;
    this.shape = g.n;
    this.batch = g.batch;
    this.geometry = g;
    this.workAreaBytes = workAreaBytes;
    this.context = context;
    this.track(() => cufft().cufftDestroy(handle));
  }

  /** Plans a transform (cufftPlanMany). Planning takes milliseconds: keep plans, or use an FftPlanCache. */
  static create<T extends FftType>(d: FftPlanDescriptor<T>): FftPlan<T> {
    const g = fftGeometry(d);
    const context = resolveContext(d, d.stream);
    if (d.stream) d.stream.use();
    else context.makeCurrent();
    const api = cufft();
    const cell = new Int32Array(1);
    const during = `planning ${d.label ? `"${d.label}" ` : ''}${describePlan(g)}`;
    const n = Int32Array.from(g.n);
    const code = TYPES[g.type].code;
    if (g.advanced) {
      check(api.cufftPlanMany(cell, g.rank, n, Int32Array.from(g.inembed), g.istride, g.idist, Int32Array.from(g.onembed), g.ostride, g.odist, code, g.batch), 'cufftPlanMany', during);
    } else {
      check(api.cufftPlanMany(cell, g.rank, n, null, 1, 0, null, 1, 0, code, g.batch), 'cufftPlanMany', during);
    }
    const handle = cell[0]!;
    let plan: FftPlan<T>;
    try {
      const size: [number | bigint | null] = [null];
      check(api.cufftGetSize(handle, size), 'cufftGetSize', during);
      plan = new FftPlan<T>(g, handle, Number(size[0] ?? 0), context, d.label);
    } catch (e) {
      api.cufftDestroy(handle);
      throw e;
    }
    if (d.stream) {
      try {
        plan.setStream(d.stream);
      } catch (e) {
        plan.dispose();
        throw e;
      }
    }
    return plan;
  }

  /** Elements the input buffer must hold (out of place). */
  get inputElements(): number {
    return this.geometry.inputElements;
  }

  /** Elements the output buffer must hold (out of place). */
  get outputElements(): number {
    return this.geometry.outputElements;
  }

  /** The stream transforms are enqueued on; undefined: the context's legacy default stream. */
  get stream(): Stream | undefined {
    return this.#stream;
  }

  /** Binds the plan to `stream` (of the plan's context), or back to the legacy default stream with null. */
  setStream(stream: Stream | null): void {
    this.assertAlive();
    if (stream && stream.context !== this.context) throw new Error(`${this.label} belongs to ${this.context.label}; stream "${stream.label}" to ${stream.context.label}`);
    const handle = stream ? stream.use() : (this.context.makeCurrent(), null);
    check(cufft().cufftSetStream(this.handle, handle), 'cufftSetStream', `${this.label}${stream ? ` on stream "${stream.label}"` : ''}`);
    this.#stream = stream ?? undefined;
  }

  /**
   * Forward transform (e^(-2πi…)) from `input` into `output`; in place when `output` is omitted
   * (C2C, Z2Z). Enqueued on the plan's stream: await `stream.done()` before reading the result.
   */
  forward(input: DeviceBuffer<FftInput<T, 'forward'>>, output?: DeviceBuffer<FftOutput<T, 'forward'>>): DeviceBuffer<FftOutput<T, 'forward'>> {
    const out = (output ?? input) as DeviceBuffer<DType>;
    this.#exec(input as DeviceBuffer<DType>, out, 'forward');
    return out as DeviceBuffer<FftOutput<T, 'forward'>>;
  }

  /**
   * Inverse transform (e^(+2πi…)), not normalized: the result is N times the signal. In place when
   * `output` is omitted (C2C, Z2Z). C2R and Z2D may overwrite their input.
   */
  inverse(input: DeviceBuffer<FftInput<T, 'inverse'>>, output?: DeviceBuffer<FftOutput<T, 'inverse'>>): DeviceBuffer<FftOutput<T, 'inverse'>> {
    const out = (output ?? input) as DeviceBuffer<DType>;
    this.#exec(input as DeviceBuffer<DType>, out, 'inverse');
    return out as DeviceBuffer<FftOutput<T, 'inverse'>>;
  }

  #exec(input: DeviceBuffer<DType>, output: DeviceBuffer<DType>, direction: FftDirection): void {
    this.assertAlive();
    const stream = this.#stream;
    input.checkUsable(stream);
    if (output !== input) output.checkUsable(stream);
    if (input.context !== this.context) throw new Error(`${this.label}: input "${input.label}" belongs to ${input.context.label}, the plan to ${this.context.label}`);
    if (output.context !== this.context) throw new Error(`${this.label}: output "${output.label}" belongs to ${output.context.label}, the plan to ${this.context.label}`);
    checkFftBuffers(this.geometry, direction, input, output, this.label);
    if (stream) stream.use();
    else this.context.makeCurrent();
    const api = cufft();
    const h = this.handle;
    // Device addresses go to the `float2 *`-style parameters as plain numbers (koffi passes them as the pointer value).
    const i = input.address;
    const o = output.address;
    let status: number;
    let call: string;
    switch (this.type as FftType) {
      case 'C2C':
        call = 'cufftExecC2C';
        status = api.cufftExecC2C(h, i, o, direction === 'forward' ? FORWARD : INVERSE);
        break;
      case 'Z2Z':
        call = 'cufftExecZ2Z';
        status = api.cufftExecZ2Z(h, i, o, direction === 'forward' ? FORWARD : INVERSE);
        break;
      case 'R2C':
        call = 'cufftExecR2C';
        status = api.cufftExecR2C(h, i, o);
        break;
      case 'D2Z':
        call = 'cufftExecD2Z';
        status = api.cufftExecD2Z(h, i, o);
        break;
      case 'C2R':
        call = 'cufftExecC2R';
        status = api.cufftExecC2R(h, i, o);
        break;
      case 'Z2D':
        call = 'cufftExecZ2D';
        status = api.cufftExecZ2D(h, i, o);
        break;
    }
    if (status !== 0) throw new CudaError('cufft', status, call, { during: `${this.label} ${direction}${stream ? ` on stream "${stream.label}"` : ''}` });
  }

  protected releaseNative(): void {
    if (!this.context.disposed) this.context.makeCurrent();
    check(cufft().cufftDestroy(this.handle), 'cufftDestroy', this.label);
  }
}

/**
 * Reuses plans: planning costs milliseconds, a hit a Map lookup. Keyed by shape, type, batch,
 * layout, stream and context (not by label). A plan whose stream was disposed is replaced.
 * `clear()` (and dispose) disposes every plan it made.
 */
export class FftPlanCache {
  readonly #plans = new Map<string, FftPlan>();
  readonly #ids = new WeakMap<object, number>();
  #nextId = 1;
  hits = 0;
  misses = 0;

  #id(o: object | undefined): number {
    if (!o) return 0;
    let id = this.#ids.get(o);
    if (id === undefined) this.#ids.set(o, (id = this.#nextId++));
    return id;
  }

  /** The descriptor's cache key. */
  key(d: FftPlanDescriptor): string {
    return fftPlanKey(d, this.#id(d.stream), this.#id(resolveContext(d, d.stream)));
  }

  get<T extends FftType>(d: FftPlanDescriptor<T>): FftPlan<T> {
    const key = this.key(d);
    const cached = this.#plans.get(key);
    if (cached && !cached.disposed && !cached.stream?.disposed) {
      this.hits++;
      return cached as unknown as FftPlan<T>;
    }
    if (cached) {
      cached.dispose();
      this.#plans.delete(key);
    }
    this.misses++;
    const plan = FftPlan.create(d);
    this.#plans.set(key, plan as unknown as FftPlan);
    return plan;
  }

  has(d: FftPlanDescriptor): boolean {
    const p = this.#plans.get(this.key(d));
    return !!p && !p.disposed;
  }

  get size(): number {
    return this.#plans.size;
  }

  /** Disposes every cached plan and forgets them (hit/miss counts stay). */
  clear(): void {
    const plans = [...this.#plans.values()];
    this.#plans.clear();
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

  [Symbol.dispose](): void {
    this.clear();
  }
}

/** The plans `fft()` uses; `fftPlans.clear()` frees them. */
export const fftPlans = new FftPlanCache();

export interface FftCallOptions {
  /** Inverse transform (unnormalized: N times the signal). Default forward. */
  inverse?: boolean;
  stream?: Stream;
  /** Write here instead of in place. */
  output?: DeviceBuffer<'c64'> | DeviceBuffer<'c128'>;
  /** Transforms of `x.length / batch` elements each (default 1). */
  batch?: number;
}

/**
 * One-call 1D complex FFT of a whole buffer (C2C for c64, Z2Z for c128), in place unless `output` is
 * given, with the plan taken from `fftPlans`. Unnormalized, like cuFFT.
 */
export function fft<B extends DeviceBuffer<'c64'> | DeviceBuffer<'c128'>>(x: B, options: FftCallOptions = {}): B {
  const dtype: DType = x.dtype;
  if (dtype !== 'c64' && dtype !== 'c128') throw new TypeError(`fft() needs a c64 or c128 buffer, got "${x.label}" of ${dtype}`);
  const type: FftType = dtype === 'c64' ? 'C2C' : 'Z2Z';
  const batch = options.batch ?? 1;
  if (!Number.isInteger(batch) || batch < 1 || x.length % batch !== 0) throw new RangeError(`fft(): ${x.length} elements do not split into ${batch} transforms`);
  const plan = fftPlans.get({ shape: [x.length / batch], type, batch, ...(options.stream ? { stream: options.stream } : { context: x.context }) });
  const out = (options.output ?? x) as DeviceBuffer<'c64'>;
  if (options.inverse) (plan as FftPlan<'C2C'>).inverse(x as DeviceBuffer<'c64'>, out);
  else (plan as FftPlan<'C2C'>).forward(x as DeviceBuffer<'c64'>, out);
  return out as unknown as B;
}
