import { CudaError, cufft } from '../ffi/index.js';
import { cufftType } from '../ffi/generated/types.js';
import type { DeviceBuffer } from './device-buffer.js';
import type { DType } from './dtype.js';
import { Resource } from './resource.js';
import type { Stream } from './stream.js';

export type FftType = 'C2C' | 'R2C' | 'C2R' | 'Z2Z' | 'D2Z' | 'Z2D';

export interface FftLayout {
  inembed?: number[];
  istride?: number;
  idist?: number;
  onembed?: number[];
  ostride?: number;
  odist?: number;
}

export interface FftPlanDescriptor extends FftLayout {
  /** Transform size per dimension, slowest first (1 to 3 dimensions). */
  shape: number[];
  type: FftType;
  /** Independent transforms done in one call (default 1). */
  batch?: number;
  stream?: Stream;
  label?: string;
}

interface TypeInfo {
  code: number;
  input: DType;
  output: DType;
  /** Which directions exist: R2C is only forward, C2R only inverse. */
  forward: boolean;
  inverse: boolean;
  /** Real side's element count per transform is the full size; the complex side of R2C/C2R holds n_last/2+1. */
  realInput: boolean;
  realOutput: boolean;
}

const TYPES: Record<FftType, TypeInfo> = {
  C2C: { code: cufftType.CUFFT_C2C, input: 'c64', output: 'c64', forward: true, inverse: true, realInput: false, realOutput: false },
  Z2Z: { code: cufftType.CUFFT_Z2Z, input: 'c128', output: 'c128', forward: true, inverse: true, realInput: false, realOutput: false },
  R2C: { code: cufftType.CUFFT_R2C, input: 'f32', output: 'c64', forward: true, inverse: false, realInput: true, realOutput: false },
  D2Z: { code: cufftType.CUFFT_D2Z, input: 'f64', output: 'c128', forward: true, inverse: false, realInput: true, realOutput: false },
  C2R: { code: cufftType.CUFFT_C2R, input: 'c64', output: 'f32', forward: false, inverse: true, realInput: false, realOutput: true },
  Z2D: { code: cufftType.CUFFT_Z2D, input: 'c128', output: 'f64', forward: false, inverse: true, realInput: false, realOutput: true },
};

const FORWARD = -1;
const INVERSE = 1;

function check(status: number, call: string, during: string): void {
  if (status !== 0) throw new CudaError('cufft', status, call, { during });
}

/** Elements a side of the transform touches (the last index used + 1), from its layout. */
export function sideElements(shape: readonly number[], batch: number, complexHalf: boolean, embed: readonly number[] | undefined, stride: number, dist: number | undefined): number {
  const logical = shape.map((n, i) => (complexHalf && i === shape.length - 1 ? Math.floor(n / 2) + 1 : n));
  const dims = embed ?? logical;
  const perTransform = dims.reduce((a, b) => a * b, 1);
  const distance = dist ?? perTransform * stride;
  const lastInTransform = (dims.reduce((a, b) => a * b, 1) - 1) * stride;
  return (batch - 1) * distance + lastInTransform + 1;
}

export function validatePlan(d: FftPlanDescriptor): void {
  if (!TYPES[d.type]) throw new TypeError(`FFT type must be one of ${Object.keys(TYPES).join(', ')}, got ${String(d.type)}`);
  if (!Array.isArray(d.shape) || d.shape.length < 1 || d.shape.length > 3) throw new RangeError(`FFT shape must have 1 to 3 dimensions, got ${JSON.stringify(d.shape)}`);
  for (const n of d.shape) if (!Number.isInteger(n) || n < 1) throw new RangeError(`FFT sizes must be positive integers, got ${JSON.stringify(d.shape)}`);
  const batch = d.batch ?? 1;
  if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`FFT batch must be a positive integer, got ${batch}`);
  for (const k of ['istride', 'ostride', 'idist', 'odist'] as const) {
    const v = d[k];
    if (v !== undefined && (!Number.isInteger(v) || v < 1)) throw new RangeError(`FFT ${k} must be a positive integer, got ${v}`);
  }
  for (const k of ['inembed', 'onembed'] as const) {
    const v = d[k];
    if (v !== undefined && (v.length !== d.shape.length || v.some((x) => !Number.isInteger(x) || x < 1))) throw new RangeError(`FFT ${k} must have one positive size per dimension, got ${JSON.stringify(v)}`);
  }
}

/** A cuFFT plan. cuFFT does not normalize: inverse(forward(x)) = N·x, N the product of the shape. */
export class FftPlan extends Resource {
  readonly handle: number;
  readonly type: FftType;
  readonly shape: readonly number[];
  readonly batch: number;
  readonly workAreaBytes: number;
  readonly inputElements: number;
  readonly outputElements: number;
  #stream: Stream | undefined;

  private constructor(d: FftPlanDescriptor, handle: number, workAreaBytes: number) {
    super('FftPlan', d.label ?? `${d.type} ${d.shape.join('x')}${(d.batch ?? 1) > 1 ? ` x${d.batch}` : ''}`);
    this.handle = handle;
    this.type = d.type;
    this.shape = [...d.shape];
    this.batch = d.batch ?? 1;
    this.workAreaBytes = workAreaBytes;
    const t = TYPES[d.type];
    this.inputElements = sideElements(d.shape, this.batch, !t.realInput && t.realOutput, d.inembed, d.istride ?? 1, d.idist);
    this.outputElements = sideElements(d.shape, this.batch, t.realInput, d.onembed, d.ostride ?? 1, d.odist);
    this.track(() => cufft().cufftDestroy(handle));
    if (d.stream) this.setStream(d.stream);
  }

  static create(d: FftPlanDescriptor): FftPlan {
    validatePlan(d);
    (d.stream?.context ?? undefined)?.makeCurrent();
    const api = cufft();
    const cell: [number | null] = [0];
    const n = Int32Array.from(d.shape);
    const advanced = d.inembed !== undefined || d.onembed !== undefined || d.istride !== undefined || d.ostride !== undefined || d.idist !== undefined || d.odist !== undefined;
    const t = TYPES[d.type];
    const during = `planning ${d.type} ${d.shape.join('x')}`;
    if (advanced) {
      const inembed = Int32Array.from(d.inembed ?? d.shape);
      const onembed = Int32Array.from(d.onembed ?? d.shape);
      const idist = d.idist ?? sideElements(d.shape, 1, !t.realInput && t.realOutput, d.inembed, d.istride ?? 1, undefined);
      const odist = d.odist ?? sideElements(d.shape, 1, t.realInput, d.onembed, d.ostride ?? 1, undefined);
      check(api.cufftPlanMany(cell, d.shape.length, n, inembed, d.istride ?? 1, idist, onembed, d.ostride ?? 1, odist, t.code as never, d.batch ?? 1), 'cufftPlanMany', during);
    } else {
      check(api.cufftPlanMany(cell, d.shape.length, n, null, 1, 0, null, 1, 0, t.code as never, d.batch ?? 1), 'cufftPlanMany', during);
    }
    const handle = cell[0]!;
    const size: [number | bigint | null] = [0];
    check(api.cufftGetSize(handle, size), 'cufftGetSize', during);
    return new FftPlan(d, handle, Number(size[0]));
  }

  get stream(): Stream | undefined {
    return this.#stream;
  }

  setStream(stream: Stream): void {
    this.assertAlive();
    check(cufft().cufftSetStream(this.handle, stream.use()), 'cufftSetStream', this.label);
    this.#stream = stream;
  }

  #check(input: DeviceBuffer<DType>, output: DeviceBuffer<DType>, forward: boolean): TypeInfo {
    this.assertAlive();
    const t = TYPES[this.type];
    if (forward && !t.forward) throw new TypeError(`a ${this.type} plan only runs inverse()`);
    if (!forward && !t.inverse) throw new TypeError(`a ${this.type} plan only runs forward()`);
    input.checkUsable(this.#stream);
    output.checkUsable(this.#stream);
    if (input.dtype !== t.input) throw new TypeError(`${this.label}: input "${input.label}" must hold ${t.input}, not ${input.dtype}`);
    if (output.dtype !== t.output) throw new TypeError(`${this.label}: output "${output.label}" must hold ${t.output}, not ${output.dtype}`);
    if (input.length < this.inputElements) throw new RangeError(`${this.label}: input "${input.label}" holds ${input.length} elements, the plan reads ${this.inputElements}`);
    if (output.length < this.outputElements) throw new RangeError(`${this.label}: output "${output.label}" holds ${output.length} elements, the plan writes ${this.outputElements}`);
    return t;
  }

  /** Forward transform (e^{-2πi…}); in place when `output` is omitted. */
  forward(input: DeviceBuffer<DType>, output: DeviceBuffer<DType> = input): void {
    this.#exec(input, output, true);
  }

  /** Inverse transform (e^{+2πi…}), unnormalized; in place when `output` is omitted. */
  inverse(input: DeviceBuffer<DType>, output: DeviceBuffer<DType> = input): void {
    this.#exec(input, output, false);
  }

  #exec(input: DeviceBuffer<DType>, output: DeviceBuffer<DType>, forward: boolean): void {
    const t = this.#check(input, output, forward);
    (this.#stream?.context ?? input.context).makeCurrent();
    const api = cufft();
    const i = BigInt(input.address);
    const o = BigInt(output.address);
    const dir = forward ? FORWARD : INVERSE;
    const during = `${this.label} ${forward ? 'forward' : 'inverse'}`;
    switch (this.type) {
      case 'C2C': return check(api.cufftExecC2C(this.handle, i, o, dir), 'cufftExecC2C', during);
      case 'Z2Z': return check(api.cufftExecZ2Z(this.handle, i, o, dir), 'cufftExecZ2Z', during);
      case 'R2C': return check(api.cufftExecR2C(this.handle, i, o), 'cufftExecR2C', during);
      case 'D2Z': return check(api.cufftExecD2Z(this.handle, i, o), 'cufftExecD2Z', during);
      case 'C2R': return check(api.cufftExecC2R(this.handle, i, o), 'cufftExecC2R', during);
      case 'Z2D': return check(api.cufftExecZ2D(this.handle, i, o), 'cufftExecZ2D', during);
    }
    void t;
  }

  protected releaseNative(): void {
    check(cufft().cufftDestroy(this.handle), 'cufftDestroy', this.label);
  }
}

/** Reuses plans: planning costs milliseconds, a cache hit a Map lookup. Keyed by shape, type, batch, layout and stream. */
export class FftPlanCache {
  readonly #plans = new Map<string, FftPlan>();
  readonly #streamIds = new WeakMap<Stream, number>();
  #nextStreamId = 1;
  hits = 0;
  misses = 0;

  #key(d: FftPlanDescriptor): string {
    let sid = 0;
    if (d.stream) {
      sid = this.#streamIds.get(d.stream) ?? 0;
      if (sid === 0) this.#streamIds.set(d.stream, (sid = this.#nextStreamId++));
    }
    return JSON.stringify([d.type, d.shape, d.batch ?? 1, d.inembed, d.istride, d.idist, d.onembed, d.ostride, d.odist, sid]);
  }

  get(d: FftPlanDescriptor): FftPlan {
    const key = this.#key(d);
    const cached = this.#plans.get(key);
    if (cached && !cached.disposed) {
      this.hits++;
      return cached;
    }
    this.misses++;
    const plan = FftPlan.create(d);
    this.#plans.set(key, plan);
    return plan;
  }

  get size(): number {
    return this.#plans.size;
  }

  clear(): void {
    for (const p of this.#plans.values()) p.dispose();
    this.#plans.clear();
  }
}
