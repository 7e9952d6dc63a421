/**
 * cuFFT plans. One plan per shape serves every stream of its context: each call names its stream
 * (`plan.forward(x, y, { stream })`), and the plan keeps one work area per stream, so transforms
 * of one plan on two streams may run at the same time without sharing scratch memory.
 *
 * Blocking: `FftPlan.create` plans on the host (cufftMakePlanMany, typically 0.1–10 ms, more for
 * large multi-dimensional plans); keep plans, or take them from an FftPlanCache. Executions only
 * enqueue.
 */
import { bestEffort, cufftChecked } from '../../ffi/checked.js';
import type { Context } from '../context.js';
import { resolveContext } from '../defaults.js';
import { DeviceBuffer } from '../memory/device-buffer.js';
import type { DType } from '../memory/dtype.js';
import { checkLabel, describeValue, expectResource, isLive, Resource } from '../resource.js';
import { resolveStream, Stream } from '../stream.js';
import {
  checkFftBuffers,
  describePlan,
  FFT_TYPES,
  fftGeometry,
  type FftDirection,
  type FftGeometry,
  type FftInput,
  type FftOutput,
  type FftPlanDescriptor,
  type FftType,
} from './geometry.js';

/** CUFFT_FORWARD and CUFFT_INVERSE. */
const FORWARD = -1;
const INVERSE = 1;

/** Options of one transform. */
export interface FftExecOptions {
  /** The stream to enqueue on; default the plan's stream (`plan.stream`), else the context's default stream. */
  stream?: Stream | undefined;
}

/**
 * A cuFFT plan: 1D, 2D or 3D, batched, with an optional advanced layout (strides, distances,
 * embeds).
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
  /** Bytes of scratch memory one execution needs (cufftMakePlanMany's work size); one such area per stream used. */
  readonly workAreaBytes: number;
  readonly context: Context;
  /** The stream of calls that name none, as the descriptor or setStream() gave it (undefined: the context's default stream). */
  #planStream: Stream | undefined;
  /** The stream cuFFT is set to now (undefined: none set yet). */
  #boundStream: Stream | undefined;
  /** One work area per stream (the context's default stream included), freed with the plan. */
  readonly #workAreas = new Map<Stream, DeviceBuffer<'u8'>>();

  private constructor(
    g: FftGeometry,
    handle: number,
    workAreaBytes: number,
    context: Context,
    label: string | undefined,
    stream: Stream | undefined,
  ) {
    super('FftPlan', label ?? `FftPlan ${describePlan(g)}`);
    this.handle = handle;
    this.type = g.type as T;
    this.shape = g.n;
    this.batch = g.batch;
    this.geometry = g;
    this.workAreaBytes = workAreaBytes;
    this.context = context;
    this.#planStream = stream;
    this.track(() => cufftChecked().cufftDestroy(handle));
  }

  /** Plans a transform (cufftMakePlanMany, work areas managed per stream). Blocks for milliseconds: keep plans, or use an FftPlanCache. */
  static create<T extends FftType>(d: FftPlanDescriptor<T>): FftPlan<T> {
    const g = fftGeometry(d);
    if (d.stream !== undefined) expectResource(d.stream, Stream, 'FftPlan.create stream');
    checkLabel(d.label, 'FftPlan.create');
    const context = resolveContext(d, d.stream);
    context.makeCurrent();
    const api = cufftChecked();
    const during = `planning ${d.label ? `"${d.label}" ` : ''}${describePlan(g)}`;
    const handle = api.cufftCreate(during);
    let plan: FftPlan<T>;
    try {
      api.cufftSetAutoAllocation(handle, 0, during);
      const n = Int32Array.from(g.n);
      const code = FFT_TYPES[g.type].code;
      const size = new BigUint64Array(1);
      if (g.advanced) {
        api.cufftMakePlanMany(
          handle,
          g.rank,
          n,
          Int32Array.from(g.inembed),
          g.istride,
          g.idist,
          Int32Array.from(g.onembed),
          g.ostride,
          g.odist,
          code,
          g.batch,
          size,
          during,
        );
      } else {
        api.cufftMakePlanMany(handle, g.rank, n, null, 1, 0, null, 1, 0, code, g.batch, size, during);
      }
      plan = new FftPlan<T>(g, handle, Number(size[0]), context, d.label, d.stream);
    } catch (e) {
      bestEffort(() => api.cufftDestroy(handle), undefined); // the planning error is the one to report
      throw e;
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

  /** The stream a call without `{ stream }` runs on; undefined: the context's default stream (`context.defaultStream`). */
  get stream(): Stream | undefined {
    return this.#planStream;
  }

  /** Sets the stream calls without `{ stream }` run on (null: the context's default stream). */
  setStream(stream: Stream | null): void {
    this.assertAlive();
    if (stream) {
      expectResource(stream, Stream, `${this.label} setStream(stream)`);
      if (stream.context !== this.context)
        throw new Error(
          `${this.label} belongs to ${this.context.label}; stream "${stream.label}" to ${stream.context.label}`,
        );
    }
    this.#planStream = stream ?? undefined;
  }

  /** The stream a call runs on: the one it names, else the plan's, else the context's default stream. */
  #callStream(options: FftExecOptions | undefined): Stream {
    return resolveStream(this.context, options?.stream ?? this.#planStream);
  }

  /**
   * Forward transform (e^(-2πi…)) from `input` into `output`; in place when `output` is omitted
   * (C2C, Z2Z). Enqueued on `options.stream`: await `stream.done()` before reading the result.
   */
  forward(
    input: DeviceBuffer<FftInput<T, 'forward'>>,
    output?: DeviceBuffer<FftOutput<T, 'forward'>>,
    options?: FftExecOptions,
  ): DeviceBuffer<FftOutput<T, 'forward'>> {
    checkExecOptions(options, this.label);
    const out = (output ?? input) as DeviceBuffer<DType>;
    this.#exec(input as DeviceBuffer<DType>, out, 'forward', this.#callStream(options));
    return out as DeviceBuffer<FftOutput<T, 'forward'>>;
  }

  /**
   * Inverse transform (e^(+2πi…)), not normalized: the result is N times the signal. In place when
   * `output` is omitted (C2C, Z2Z). C2R and Z2D may overwrite their input.
   */
  inverse(
    input: DeviceBuffer<FftInput<T, 'inverse'>>,
    output?: DeviceBuffer<FftOutput<T, 'inverse'>>,
    options?: FftExecOptions,
  ): DeviceBuffer<FftOutput<T, 'inverse'>> {
    checkExecOptions(options, this.label);
    const out = (output ?? input) as DeviceBuffer<DType>;
    this.#exec(input as DeviceBuffer<DType>, out, 'inverse', this.#callStream(options));
    return out as DeviceBuffer<FftOutput<T, 'inverse'>>;
  }

  /** Points cuFFT at `stream` and at that stream's work area, when the last execution used another stream. */
  #bind(stream: Stream): void {
    if (this.#boundStream === stream) return;
    const api = cufftChecked();
    const where = `${this.label} on stream "${stream.label}"`;
    let area = this.#workAreas.get(stream);
    if (!area && this.workAreaBytes > 0) {
      // Streams disposed since their last transform give their areas back (bounded: one area per live stream).
      for (const [s, a] of this.#workAreas) {
        if (s.disposed) {
          a.dispose();
          this.#workAreas.delete(s);
        }
      }
      // Allocated synchronously (not stream-ordered): the area lives as long as the plan and is used from its stream only.
      area = DeviceBuffer.alloc('u8', this.workAreaBytes, {
        context: this.context,
        label: `${this.label} work area (${stream.label})`,
      });
      this.#workAreas.set(stream, area);
    }
    api.cufftSetStream(this.handle, stream.use(), where);
    if (area) api.cufftSetWorkArea(this.handle, area.address, where);
    this.#boundStream = stream;
  }

  #exec(input: DeviceBuffer<DType>, output: DeviceBuffer<DType>, direction: FftDirection, stream: Stream): void {
    this.assertAlive();
    if (!isLive<DeviceBuffer>(input, 'DeviceBuffer'))
      expectResource<DeviceBuffer>(input, 'DeviceBuffer', `${this.label} ${direction} input`);
    if (output !== input && !isLive<DeviceBuffer>(output, 'DeviceBuffer'))
      expectResource<DeviceBuffer>(output, 'DeviceBuffer', `${this.label} ${direction} output`);
    if (!isLive<Stream>(stream, 'Stream')) expectResource(stream, Stream, `${this.label} ${direction} stream`);
    if (stream.context !== this.context)
      throw new Error(
        `${this.label} belongs to ${this.context.label}; stream "${stream.label}" to ${stream.context.label}`,
      );
    input.checkUsable(stream);
    if (output !== input) output.checkUsable(stream);
    if (input.context !== this.context)
      throw new Error(
        `${this.label}: input "${input.label}" belongs to ${input.context.label}, the plan to ${this.context.label}`,
      );
    if (output.context !== this.context)
      throw new Error(
        `${this.label}: output "${output.label}" belongs to ${output.context.label}, the plan to ${this.context.label}`,
      );
    checkFftBuffers(this.geometry, direction, input, output, this.label);
    stream.use();
    this.#bind(stream);
    const api = cufftChecked();
    const h = this.handle;
    // Device addresses go to the `float2 *`-style parameters as plain numbers (koffi passes them as the pointer value).
    const i = input.address;
    const o = output.address;
    switch (this.type as FftType) {
      case 'C2C':
        api.cufftExecC2C(h, i, o, direction === 'forward' ? FORWARD : INVERSE, execDuring, this, direction, stream);
        break;
      case 'Z2Z':
        api.cufftExecZ2Z(h, i, o, direction === 'forward' ? FORWARD : INVERSE, execDuring, this, direction, stream);
        break;
      case 'R2C':
        api.cufftExecR2C(h, i, o, execDuring, this, direction, stream);
        break;
      case 'D2Z':
        api.cufftExecD2Z(h, i, o, execDuring, this, direction, stream);
        break;
      case 'C2R':
        api.cufftExecC2R(h, i, o, execDuring, this, direction, stream);
        break;
      case 'Z2D':
        api.cufftExecZ2D(h, i, o, execDuring, this, direction, stream);
        break;
    }
    input.recordUse(stream);
    output.recordUse(stream);
  }

  protected releaseNative(): void {
    if (!this.context.disposed) this.context.makeCurrent();
    let first: unknown;
    try {
      cufftChecked().cufftDestroy(this.handle, this.label);
    } catch (e) {
      first = e;
    }
    // The work areas go after the plan; each is freed synchronously, after the work that used it.
    for (const area of this.#workAreas.values()) {
      try {
        area.dispose();
      } catch (e) {
        first ??= e;
      }
    }
    this.#workAreas.clear();
    if (first !== undefined) throw first;
  }
}

function checkExecOptions(options: unknown, label: string): void {
  if (options !== undefined && (typeof options !== 'object' || options === null))
    throw new TypeError(`${label}: options must be an object { stream? }, got ${describeValue(options)}`);
}

/** What a failed transform was doing, built only when it fails (src/ffi/checked-call.ts). */
const execDuring = (plan: { readonly label: string }, direction: FftDirection, stream: Stream): string =>
  `${plan.label} ${direction} on stream "${stream.label}"`;
