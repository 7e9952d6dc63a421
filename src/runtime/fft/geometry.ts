/**
 * The pure half of cuFFT plans: transform types, layouts, validation of descriptors and buffers,
 * cache keys. No CUDA here, so all of it is unit-tested without a GPU.
 */
import { cufftType } from '../../ffi/generated/types.js';
import type { Placement } from '../defaults.js';
import { type DType, dtypeInfo } from '../memory/dtype.js';
import type { Stream } from '../stream.js';

/**
 * cuFFT transform types: C2C/Z2Z complex↔complex (single/double), R2C/D2Z real→complex (forward
 * only), C2R/Z2D complex→real (inverse only).
 */
export type FftType = 'C2C' | 'R2C' | 'C2R' | 'Z2Z' | 'D2Z' | 'Z2D';
/** Which way a plan runs: 'forward' (signal → spectrum) or 'inverse' (spectrum → signal, unnormalized: N times the signal). R2C/D2Z plans only run forward, C2R/Z2D only inverse. */
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
/** The element dtype a plan of type `T` reads in direction `D` (`never` where that direction does not exist): `FftInput<'R2C', 'forward'>` is 'f32'. */
export type FftInput<T extends FftType, D extends FftDirection> = FftDtypes[T][D]['input'];
/** The element dtype a plan of type `T` writes in direction `D` (`never` where that direction does not exist): `FftOutput<'R2C', 'forward'>` is 'c64'. */
export type FftOutput<T extends FftType, D extends FftDirection> = FftDtypes[T][D]['output'];

/**
 * cuFFT's advanced data layout (cufftPlanMany). Element `x` of transform `b` lives at
 * `b*dist + (x[0]*embed[1]*embed[2] + x[1]*embed[2] + x[2]) * stride` (embed[0] only sets the default
 * distance). Counts are elements of the side's own type: complex elements on a complex side, reals
 * on a real side. Giving any field selects the advanced layout; the rest default to a packed one:
 * embed = the side's logical shape, stride = 1, dist = stride × product(embed).
 */
export interface FftLayout {
  inembed?: readonly number[] | undefined;
  istride?: number | undefined;
  idist?: number | undefined;
  onembed?: readonly number[] | undefined;
  ostride?: number | undefined;
  odist?: number | undefined;
}

export interface FftPlanDescriptor<T extends FftType = FftType> extends FftLayout, Placement {
  /** Transform size per dimension, slowest-varying first (1 to 3 dimensions): [rows, cols] is row-major. */
  shape: readonly number[];
  type: T;
  /** Independent transforms done in one call (default 1). */
  batch?: number | undefined;
  /**
   * The stream transforms run on when a call names none (and whose context the plan lives in).
   * Each call may name its own: `plan.forward(x, y, { stream })`.
   */
  stream?: Stream | undefined;
  label?: string | undefined;
}

/** What one cuFFT plan type reads and writes. */
export interface FftTypeInfo {
  code: cufftType;
  forward: { input: DType; output: DType } | undefined;
  inverse: { input: DType; output: DType } | undefined;
  /** The input side holds n_last/2+1 complex elements in the last dimension (C2R, Z2D). */
  halfInput: boolean;
  /** The output side holds n_last/2+1 complex elements in the last dimension (R2C, D2Z). */
  halfOutput: boolean;
}

/** cuFFT's type code and the element types of each plan type. */
export const FFT_TYPES: Readonly<Record<FftType, FftTypeInfo>> = {
  C2C: {
    code: cufftType.CUFFT_C2C,
    forward: { input: 'c64', output: 'c64' },
    inverse: { input: 'c64', output: 'c64' },
    halfInput: false,
    halfOutput: false,
  },
  Z2Z: {
    code: cufftType.CUFFT_Z2Z,
    forward: { input: 'c128', output: 'c128' },
    inverse: { input: 'c128', output: 'c128' },
    halfInput: false,
    halfOutput: false,
  },
  R2C: {
    code: cufftType.CUFFT_R2C,
    forward: { input: 'f32', output: 'c64' },
    inverse: undefined,
    halfInput: false,
    halfOutput: true,
  },
  D2Z: {
    code: cufftType.CUFFT_D2Z,
    forward: { input: 'f64', output: 'c128' },
    inverse: undefined,
    halfInput: false,
    halfOutput: true,
  },
  C2R: {
    code: cufftType.CUFFT_C2R,
    forward: undefined,
    inverse: { input: 'c64', output: 'f32' },
    halfInput: true,
    halfOutput: false,
  },
  Z2D: {
    code: cufftType.CUFFT_Z2D,
    forward: undefined,
    inverse: { input: 'c128', output: 'f64' },
    halfInput: true,
    halfOutput: false,
  },
};

const INT32_MAX = 2 ** 31 - 1;

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
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > INT32_MAX)
    throw new RangeError(`FFT ${what} must be a positive 32-bit integer, got ${String(v)}`);
  return v;
}

/** Last element touched + 1, for one side of the layout. */
function sideExtent(
  logical: readonly number[],
  embed: readonly number[],
  stride: number,
  dist: number,
  batch: number,
): number {
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
  const t = FFT_TYPES[d.type];
  if (!t || !Object.hasOwn(FFT_TYPES, d.type))
    throw new TypeError(`FFT type must be one of ${Object.keys(FFT_TYPES).join(', ')}, got ${String(d.type)}`);
  if (!Array.isArray(d.shape) || d.shape.length < 1 || d.shape.length > 3)
    throw new RangeError(`FFT shape must have 1 to 3 dimensions, got ${JSON.stringify(d.shape)}`);
  const n = d.shape.map((x, i) => positiveInt(x, `shape[${i}]`));
  const batch = d.batch === undefined ? 1 : positiveInt(d.batch, 'batch');
  const rank = n.length;
  const half = n.map((x, i) => (i === rank - 1 ? Math.floor(x / 2) + 1 : x));
  const inLogical = t.halfInput ? half : n;
  const outLogical = t.halfOutput ? half : n;
  const advanced =
    d.inembed !== undefined ||
    d.onembed !== undefined ||
    d.istride !== undefined ||
    d.ostride !== undefined ||
    d.idist !== undefined ||
    d.odist !== undefined;
  const embed = (v: readonly number[] | undefined, logical: readonly number[], what: string): number[] => {
    if (v === undefined) return [...logical];
    if (!Array.isArray(v) || v.length !== rank)
      throw new RangeError(`FFT ${what} must have one size per dimension (${rank}), got ${JSON.stringify(v)}`);
    return v.map((x, i) => {
      positiveInt(x, `${what}[${i}]`);
      if (x < logical[i]!)
        throw new RangeError(
          `FFT ${what}[${i}] = ${x} is smaller than the ${logical[i]} elements the transform has in that dimension`,
        );
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
    if (idist > INT32_MAX)
      throw new RangeError(`FFT idist ${idist} exceeds a 32-bit integer: give idist explicitly or a smaller layout`);
    if (odist > INT32_MAX)
      throw new RangeError(`FFT odist ${odist} exceeds a 32-bit integer: give odist explicitly or a smaller layout`);
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
  return {
    type: d.type,
    rank,
    n,
    batch,
    advanced,
    inembed,
    istride,
    idist,
    onembed,
    ostride,
    odist,
    inputElements,
    outputElements,
    inPlaceInputElements,
    inPlaceOutputElements,
  };
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
export function checkFftBuffers(
  g: FftGeometry,
  direction: FftDirection,
  input: FftBufferLike,
  output: FftBufferLike,
  planLabel = `${g.type} plan`,
): void {
  const t = FFT_TYPES[g.type];
  const io = t[direction];
  if (!io) {
    throw new TypeError(
      t.forward
        ? `${planLabel}: a ${g.type} plan only transforms forward (real → complex); make a ${g.type === 'R2C' ? 'C2R' : 'Z2D'} plan for the inverse`
        : `${planLabel}: a ${g.type} plan only transforms inverse (complex → real); make a ${g.type === 'C2R' ? 'R2C' : 'D2Z'} plan for the forward transform`,
    );
  }
  if (input === output && io.input !== io.output) {
    throw new TypeError(
      `${planLabel}: ${g.type} turns ${io.input} into ${io.output}, so ${direction}() needs an output buffer of ${io.output} (in place: a ${io.output} buffer wrapping the same memory)`,
    );
  }
  if (input.dtype !== io.input)
    throw new TypeError(`${planLabel}: ${direction} input "${input.label}" must hold ${io.input}, not ${input.dtype}`);
  if (output.dtype !== io.output)
    throw new TypeError(
      `${planLabel}: ${direction} output "${output.label}" must hold ${io.output}, not ${output.dtype}`,
    );
  const inPlace = input.address === output.address;
  const needIn = inPlace ? g.inPlaceInputElements : g.inputElements;
  const needOut = inPlace ? g.inPlaceOutputElements : g.outputElements;
  const how = inPlace && needIn !== g.inputElements ? ' in place (padded real rows)' : '';
  if (input.length < needIn)
    throw new RangeError(
      `${planLabel}: input "${input.label}" holds ${input.length} ${input.dtype} elements, the plan reads ${needIn}${how}`,
    );
  if (output.length < needOut)
    throw new RangeError(
      `${planLabel}: output "${output.label}" holds ${output.length} ${output.dtype} elements, the plan writes ${needOut}${how}`,
    );
  if (!inPlace) {
    const inEnd = input.address + needIn * dtypeInfo(input.dtype).bytes;
    const outEnd = output.address + needOut * dtypeInfo(output.dtype).bytes;
    if (input.address < outEnd && output.address < inEnd) {
      throw new RangeError(
        `${planLabel}: input "${input.label}" and output "${output.label}" overlap without starting at the same address; cuFFT needs disjoint buffers or one in-place buffer`,
      );
    }
  }
}

/**
 * The FftPlanCache key of a descriptor: type, shape, batch, the resolved layout and the identity of
 * the context (a number the cache assigns). Neither the stream nor the label counts: one plan per
 * shape serves every stream of its context, each call naming its stream.
 */
export function fftPlanKey(d: FftPlanDescriptor, contextId = 0): string {
  const g = fftGeometry(d);
  const layout = g.advanced ? [g.inembed, g.istride, g.idist, g.onembed, g.ostride, g.odist] : 'basic';
  return JSON.stringify([g.type, g.n, g.batch, layout, contextId]);
}

/** 'R2C 1024 x64': a plan's type, shape and batch, for labels and messages. */
export function describePlan(g: FftGeometry): string {
  return `${g.type} ${g.n.join('x')}${g.batch > 1 ? ` x${g.batch}` : ''}`;
}
