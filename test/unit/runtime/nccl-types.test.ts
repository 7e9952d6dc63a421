import { describe, expect, it } from 'vitest';
import { ncclDataType_t, ncclRedOp_t } from '../../../src/ffi/generated/types.js';
import { NcclDTypeError, NcclOpError } from '../../../src/runtime/nccl/errors.js';
import { isReduceOp, ncclMoveType, ncclOp, ncclReduceType, NCCL_REDUCE_OPS } from '../../../src/runtime/nccl/types.js';
import { DTYPES, type DType } from '../../../src/runtime/memory/dtype.js';

describe('NCCL reduction operators', () => {
  it('maps every name onto the header value', () => {
    expect(NCCL_REDUCE_OPS.map((op) => ncclOp(op, 't'))).toEqual([
      ncclRedOp_t.ncclSum,
      ncclRedOp_t.ncclProd,
      ncclRedOp_t.ncclMax,
      ncclRedOp_t.ncclMin,
      ncclRedOp_t.ncclAvg,
    ]);
  });

  it('rejects unknown operators by name, before NCCL sees them', () => {
    for (const bad of ['Sum', 'mean', '', 'toString', '__proto__', 0, null, undefined]) {
      expect(isReduceOp(bad)).toBe(false);
      expect(() => ncclOp(bad, 'comm allReduce')).toThrow(NcclOpError);
    }
    expect(() => ncclOp('mean', 'comm allReduce')).toThrow(
      /comm allReduce: unknown reduction "mean"; expected one of sum, prod, max, min, avg/,
    );
  });
});

describe('NCCL element types', () => {
  const native: [DType, number][] = [
    ['i8', ncclDataType_t.ncclInt8],
    ['u8', ncclDataType_t.ncclUint8],
    ['i32', ncclDataType_t.ncclInt32],
    ['u32', ncclDataType_t.ncclUint32],
    ['i64', ncclDataType_t.ncclInt64],
    ['u64', ncclDataType_t.ncclUint64],
    ['f16', ncclDataType_t.ncclFloat16],
    ['bf16', ncclDataType_t.ncclBfloat16],
    ['f32', ncclDataType_t.ncclFloat32],
    ['f64', ncclDataType_t.ncclFloat64],
  ];

  it('reduces the native dtypes as themselves with every operator', () => {
    for (const [dtype, datatype] of native)
      for (const op of NCCL_REDUCE_OPS)
        expect(ncclReduceType(dtype, op, 't')).toEqual({ datatype, scale: 1, op: ncclOp(op, 't') });
  });

  it('reduces complex dtypes component-wise, for sum and avg only', () => {
    expect(ncclReduceType('c64', 'sum', 't')).toEqual({
      datatype: ncclDataType_t.ncclFloat32,
      scale: 2,
      op: ncclRedOp_t.ncclSum,
    });
    expect(ncclReduceType('c128', 'avg', 't')).toEqual({
      datatype: ncclDataType_t.ncclFloat64,
      scale: 2,
      op: ncclRedOp_t.ncclAvg,
    });
    for (const op of ['prod', 'max', 'min'])
      expect(() => ncclReduceType('c64', op, 'rank 0 allReduce')).toThrow(NcclDTypeError);
    expect(() => ncclReduceType('c64', 'max', 'rank 0 allReduce')).toThrow(/rank 0 allReduce: max of complex c64/);
  });

  it('refuses to reduce 16-bit integers (NCCL has no such type)', () => {
    expect(() => ncclReduceType('i16', 'sum', 'x')).toThrow(NcclDTypeError);
    expect(() => ncclReduceType('u16', 'max', 'x')).toThrow(/cannot reduce u16/);
  });

  it('checks the operator before the dtype, and rejects unknown dtypes', () => {
    expect(() => ncclReduceType('i16', 'bogus', 'x')).toThrow(NcclOpError);
    expect(() => ncclReduceType('f128', 'sum', 'x')).toThrow(NcclDTypeError);
    expect(() => ncclMoveType('toString', 'x')).toThrow(/unknown dtype toString/);
  });

  it('moves every dtype exactly: natively, else as bytes', () => {
    for (const [dtype, datatype] of native) expect(ncclMoveType(dtype, 't')).toEqual({ datatype, scale: 1 });
    for (const dtype of ['i16', 'u16', 'c64', 'c128'] as const)
      expect(ncclMoveType(dtype, 't')).toEqual({ datatype: ncclDataType_t.ncclUint8, scale: DTYPES[dtype].bytes });
    // every dtype tscuda has is covered
    for (const dtype of Object.keys(DTYPES)) expect(() => ncclMoveType(dtype, 't')).not.toThrow();
  });
});
