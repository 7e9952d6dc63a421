/**
 * How tscuda's dtypes and reduction names map onto NCCL's, checked before NCCL sees a call.
 * Pure: no library is loaded here.
 */
import { ncclDataType_t, ncclRedOp_t } from '../../ffi/generated/types.js';
import { DTYPES, type DType } from '../memory/dtype.js';
import { NcclDTypeError, NcclOpError } from './errors.js';

/** The reductions NCCL has built in. */
export type NcclReduceOp = 'sum' | 'prod' | 'max' | 'min' | 'avg';

/** Every reduction name, in NCCL's order. */
export const NCCL_REDUCE_OPS: readonly NcclReduceOp[] = ['sum', 'prod', 'max', 'min', 'avg'];

const OPS: Readonly<Record<NcclReduceOp, ncclRedOp_t>> = {
  sum: ncclRedOp_t.ncclSum,
  prod: ncclRedOp_t.ncclProd,
  max: ncclRedOp_t.ncclMax,
  min: ncclRedOp_t.ncclMin,
  avg: ncclRedOp_t.ncclAvg,
};

/** Real dtypes NCCL reduces natively. */
const NATIVE: Partial<Readonly<Record<DType, ncclDataType_t>>> = {
  i8: ncclDataType_t.ncclInt8,
  u8: ncclDataType_t.ncclUint8,
  i32: ncclDataType_t.ncclInt32,
  u32: ncclDataType_t.ncclUint32,
  i64: ncclDataType_t.ncclInt64,
  u64: ncclDataType_t.ncclUint64,
  f16: ncclDataType_t.ncclFloat16,
  bf16: ncclDataType_t.ncclBfloat16,
  f32: ncclDataType_t.ncclFloat32,
  f64: ncclDataType_t.ncclFloat64,
};

/** Interleaved complex dtypes: sum and avg reduce them component-wise as their real type. */
const COMPLEX: Partial<Readonly<Record<DType, ncclDataType_t>>> = {
  c64: ncclDataType_t.ncclFloat32,
  c128: ncclDataType_t.ncclFloat64,
};

/** What an NCCL call is given for `count` elements of a dtype: NCCL's datatype and how many of its elements that is. */
export interface NcclElementType {
  readonly datatype: ncclDataType_t;
  /** NCCL elements per tscuda element (2 for complex, the byte size for dtypes moved as bytes). */
  readonly scale: number;
}

/** Whether `op` names a built-in reduction. */
export function isReduceOp(op: unknown): op is NcclReduceOp {
  return typeof op === 'string' && Object.hasOwn(OPS, op);
}

/** NCCL's operator for a reduction name; NcclOpError for anything else. */
export function ncclOp(op: unknown, what: string): ncclRedOp_t {
  if (!isReduceOp(op))
    throw new NcclOpError(
      `${what}: unknown reduction ${typeof op === 'string' ? JSON.stringify(op) : String(op)}; expected one of ${NCCL_REDUCE_OPS.join(', ')}`,
    );
  return OPS[op];
}

function checkKnownDType(dtype: unknown, what: string): asserts dtype is DType {
  if (typeof dtype !== 'string' || !Object.hasOwn(DTYPES, dtype))
    throw new NcclDTypeError(
      `${what}: unknown dtype ${String(dtype)}; expected one of ${Object.keys(DTYPES).join(', ')}`,
    );
}

/**
 * The NCCL element type for moving data of `dtype` (broadcast, allGather, send/recv): the native
 * type where NCCL has one, else bytes (ncclUint8, scale = the element size): nothing is computed
 * on the values, so any dtype moves exactly.
 */
export function ncclMoveType(dtype: unknown, what: string): NcclElementType {
  checkKnownDType(dtype, what);
  const native = NATIVE[dtype];
  if (native !== undefined) return { datatype: native, scale: 1 };
  return { datatype: ncclDataType_t.ncclUint8, scale: DTYPES[dtype].bytes };
}

/**
 * The NCCL element type for reducing `dtype` with `op` (allReduce, reduce, reduceScatter).
 * Complex dtypes reduce as pairs of reals for sum and avg (component-wise is exact for them);
 * prod/max/min of complex numbers, and any reduction of i16/u16 (NCCL has no 16-bit integer
 * type), are NcclDTypeError, never a silent reinterpretation.
 */
export function ncclReduceType(
  dtype: unknown,
  op: unknown,
  what: string,
): NcclElementType & { readonly op: ncclRedOp_t } {
  const redOp = ncclOp(op, what);
  checkKnownDType(dtype, what);
  const native = NATIVE[dtype];
  if (native !== undefined) return { datatype: native, scale: 1, op: redOp };
  const complex = COMPLEX[dtype];
  if (complex !== undefined) {
    if (op === 'sum' || op === 'avg') return { datatype: complex, scale: 2, op: redOp };
    throw new NcclDTypeError(
      `${what}: ${String(op)} of complex ${dtype} values has no component-wise meaning; NCCL reduces ${dtype} only with sum or avg`,
    );
  }
  throw new NcclDTypeError(
    `${what}: NCCL cannot reduce ${dtype} (it has no 16-bit integer type); use i32, f16 or bf16, or move the data with broadcast/allGather/send`,
  );
}
