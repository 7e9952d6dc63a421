/**
 * Bad input to kernel argument encoding (on a mocked parameter block), parameter layouts and device
 * addresses, and what the same checks accept
 * (no GPU; the GPU half is test/gpu/runtime/bad-input-*.test.ts). Each row: the call, the error
 * class, and a pattern the message must match (it names the problem).
 */
import { describe, expect, it } from 'vitest';
import {
  checkAddress,
  isKernelParamType,
  paramLayout,
  writeScalar,
  type KernelParamType,
} from '../../../src/runtime/kernel-args.js';
import { isDType } from '../../../src/runtime/memory/dtype-check.js';
import { checkTimeoutMs, MAX_TIMEOUT_MS } from '../../../src/runtime/timeout.js';
import { itRefusesEachRow, type Row } from '../../setup/bad-input-rows.js';

/** A mocked parameter block: the DataView a Kernel writes its arguments through. */
const block = new DataView(new ArrayBuffer(64));
const arg = (type: Exclude<KernelParamType, 'ptr'>, value: unknown) => () =>
  writeScalar(block, 8, type, value, `kernel "k" argument 3 (${type})`);

const scalarRows: Row[] = [
  // 8- and 16-bit integers
  ['i8 128', arg('i8', 128), RangeError, /argument 3 \(i8\): 128 is outside the i8 range -128\.\.127/],
  ['i8 -129', arg('i8', -129), RangeError, /-129 is outside the i8 range/],
  ['u8 256', arg('u8', 256), RangeError, /256 is outside the u8 range 0\.\.255/],
  ['u8 -1', arg('u8', -1), RangeError, /-1 is outside the u8 range/],
  ['i16 32768', arg('i16', 32768), RangeError, /32768 is outside the i16 range/],
  ['i16 -32769', arg('i16', -32769), RangeError, /outside the i16 range/],
  ['u16 65536', arg('u16', 65536), RangeError, /65536 is outside the u16 range 0\.\.65535/],
  ['u16 -1', arg('u16', -1), RangeError, /-1 is outside the u16 range/],
  // 32-bit integers
  ['i32 2^31', arg('i32', 2 ** 31), RangeError, /2147483648 is outside the i32 range -2147483648\.\.2147483647/],
  ['i32 -2^31-1', arg('i32', -(2 ** 31) - 1), RangeError, /outside the i32 range/],
  ['u32 2^32', arg('u32', 2 ** 32), RangeError, /4294967296 is outside the u32 range 0\.\.4294967295/],
  ['u32 -1', arg('u32', -1), RangeError, /-1 is outside the u32 range/],
  ['i32 NaN', arg('i32', Number.NaN), RangeError, /argument 3 \(i32\): NaN is not an integer/],
  ['i32 1.5', arg('i32', 1.5), RangeError, /1\.5 is not an integer/],
  ['i32 Infinity', arg('i32', Infinity), RangeError, /Infinity is not an integer/],
  ['u32 -Infinity', arg('u32', -Infinity), RangeError, /-Infinity is not an integer/],
  ['i8 0.1', arg('i8', 0.1), RangeError, /0\.1 is not an integer/],
  ['i32 bigint', arg('i32', 5n), TypeError, /expected an integer \(a number\), got 5n/],
  ['i32 string', arg('i32', '5'), TypeError, /expected an integer \(a number\), got "5"/],
  ['u16 undefined', arg('u16', undefined), TypeError, /got undefined/],
  ['u8 null', arg('u8', null), TypeError, /got null/],
  ['i16 object', arg('i16', { value: 1 }), TypeError, /got an object/],
  ['i32 boolean', arg('i32', true), TypeError, /got true/],
  // 64-bit integers
  [
    'u64 2^64',
    arg('u64', 2n ** 64n),
    RangeError,
    /18446744073709551616n is outside the u64 range 0\.\.18446744073709551615/,
  ],
  ['u64 -1n', arg('u64', -1n), RangeError, /-1n is outside the u64 range/],
  ['u64 -1', arg('u64', -1), RangeError, /-1 is negative; u64 holds/],
  ['i64 2^63', arg('i64', 2n ** 63n), RangeError, /9223372036854775808n is outside the i64 range/],
  ['i64 -2^63-1', arg('i64', -(2n ** 63n) - 1n), RangeError, /outside the i64 range/],
  ['i64 2^53 as number', arg('i64', 2 ** 53), RangeError, /beyond 2\^53 .* pass a bigint/],
  ['u64 2^60 as number', arg('u64', 2 ** 60), RangeError, /pass a bigint/],
  ['i64 NaN', arg('i64', Number.NaN), RangeError, /NaN is not an integer/],
  ['u64 0.5', arg('u64', 0.5), RangeError, /0\.5 is not an integer/],
  ['i64 string', arg('i64', '1'), TypeError, /expected an integer or a bigint, got "1"/],
  ['u64 undefined', arg('u64', undefined), TypeError, /expected an integer or a bigint, got undefined/],
  // floats
  ['f32 bigint', arg('f32', 1n), TypeError, /expected a number, got 1n/],
  ['f32 string', arg('f32', '1.0'), TypeError, /expected a number, got "1\.0"/],
  ['f64 undefined', arg('f64', undefined), TypeError, /expected a number, got undefined/],
  ['f64 null', arg('f64', null), TypeError, /expected a number, got null/],
  ['f32 1e39', arg('f32', 1e39), RangeError, /outside the f32 range/],
  ['f32 -1e39', arg('f32', -1e39), RangeError, /outside the f32 range/],
];

const layoutRows: Row[] = [
  [
    'param type toString',
    () => paramLayout(['toString'], 'k'),
    TypeError,
    /kernel "k": unknown parameter type "toString" at 0/,
  ],
  [
    'param type __proto__',
    () => paramLayout(['i32', '__proto__'], 'k'),
    TypeError,
    /unknown parameter type "__proto__" at 1/,
  ],
  [
    'param type float',
    () => paramLayout(['float'], 'k'),
    TypeError,
    /unknown parameter type "float".*expected one of ptr/,
  ],
  ['param type number', () => paramLayout([4], 'k'), TypeError, /unknown parameter type 4 at 0/],
  ['param type undefined', () => paramLayout([undefined], 'k'), TypeError, /unknown parameter type/],
  ['params not an array', () => paramLayout('i32,f32' as never, 'k'), TypeError, /params must be an array/],
];

const addressRows: Row[] = [
  [
    'address NaN',
    () => checkAddress(Number.NaN, 'DeviceBuffer.wrap address', false),
    RangeError,
    /wrap address: NaN is not a device address/,
  ],
  [
    'address negative',
    () => checkAddress(-4096, 'DeviceBuffer.wrap address', false),
    RangeError,
    /-4096 is not a device address/,
  ],
  [
    'address fraction',
    () => checkAddress(4096.5, 'DeviceBuffer.wrap address', false),
    RangeError,
    /4096\.5 is not a device address/,
  ],
  ['address 2^53', () => checkAddress(2 ** 53, 'DeviceBuffer.wrap address', false), RangeError, /not a device address/],
  [
    'address Infinity',
    () => checkAddress(Infinity, 'DeviceBuffer.wrap address', false),
    RangeError,
    /Infinity is not a device address/,
  ],
  ['address 0', () => checkAddress(0, 'DeviceBuffer.wrap address', false), RangeError, /address 0 is the null pointer/],
  [
    'address bigint',
    () => checkAddress(4096n, 'DeviceBuffer.wrap address', false),
    TypeError,
    /expected a device address \(a number\), got 4096n/,
  ],
  ['address string', () => checkAddress('0x1000', 'DeviceBuffer.wrap address', false), TypeError, /got "0x1000"/],
  [
    'ptr address object',
    () => checkAddress({ address: 5 }, 'kernel "k" argument 0 (ptr)', true),
    TypeError,
    /argument 0 \(ptr\): expected a device address/,
  ],
  [
    'ptr address -1',
    () => checkAddress(-1, 'kernel "k" argument 0 (ptr)', true),
    RangeError,
    /-1 is not a device address/,
  ],
];

const rows: Row[] = [...scalarRows, ...layoutRows, ...addressRows];

describe('bad input to pure runtime validation: kernel arguments, parameter layouts, device addresses', () => {
  it('has a row per case', () => {
    expect(rows.length).toBeGreaterThanOrEqual(56);
  });
  itRefusesEachRow(rows);
});

describe('what the kernel argument checks accept', () => {
  it('writes every integer type at its limits, little-endian, without wrapping', () => {
    const v = new DataView(new ArrayBuffer(16));
    const limits: [Exclude<KernelParamType, 'ptr'>, number | bigint, (o: number) => number | bigint][] = [
      ['i8', -128, (o) => v.getInt8(o)],
      ['u8', 255, (o) => v.getUint8(o)],
      ['i16', -32768, (o) => v.getInt16(o, true)],
      ['u16', 65535, (o) => v.getUint16(o, true)],
      ['i32', -(2 ** 31), (o) => v.getInt32(o, true)],
      ['u32', 2 ** 32 - 1, (o) => v.getUint32(o, true)],
      ['i64', -(2n ** 63n), (o) => v.getBigInt64(o, true)],
      ['i64', -5, (o) => v.getBigInt64(o, true)],
      ['u64', 2n ** 64n - 1n, (o) => v.getBigUint64(o, true)],
      ['u64', 2 ** 53 - 1, (o) => v.getBigUint64(o, true)],
    ];
    for (const [type, value, read] of limits) {
      writeScalar(v, 8, type, value, type);
      expect(BigInt(read(8))).toBe(BigInt(value));
    }
    writeScalar(v, 0, 'f32', Number.NaN, 'f32');
    expect(v.getFloat32(0, true)).toBeNaN();
    writeScalar(v, 0, 'f64', -Infinity, 'f64');
    expect(v.getFloat64(0, true)).toBe(-Infinity);
  });
  it('lays parameters out as C does and knows its types as own keys', () => {
    expect(Array.from(paramLayout(['i8', 'i32', 'u8', 'ptr', 'f32'], 'k').offsets)).toEqual([0, 4, 8, 16, 24]);
    expect(isKernelParamType('ptr')).toBe(true);
    expect(isKernelParamType('toString')).toBe(false);
    expect(isDType('c64')).toBe(true);
    expect(isDType('valueOf')).toBe(false);
    expect(checkAddress(0, 'ptr', true)).toBe(0);
    expect(checkTimeoutMs(MAX_TIMEOUT_MS, 't')).toBe(MAX_TIMEOUT_MS);
    expect(checkTimeoutMs(Infinity, 't', { infinite: true })).toBe(Infinity);
  });
});
