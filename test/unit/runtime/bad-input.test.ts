/**
 * Bad input to the runtime's pure validation (no GPU): kernel argument encoding on a mocked
 * parameter block, parameter layouts, dtype names, device addresses, compile options, module
 * image kinds, FFT descriptors, argument brands. Each row: the call, the error class, and a
 * pattern the message must match (it names the problem). The GPU half is
 * test/gpu/runtime/bad-input.test.ts.
 */
import koffi from 'koffi';
import { CudaError } from '../../../src/ffi/errors.js';
import { CUresult } from '../../../src/ffi/generated/types.js';
import { describe, expect, it } from 'vitest';
import {
  checkAddress,
  isKernelParamType,
  paramLayout,
  writeScalar,
  type KernelParamType,
} from '../../../src/runtime/kernel-args.js';
import { checkDType, isDType } from '../../../src/runtime/memory/dtype-check.js';
import { HostPages } from '../../../src/runtime/memory/host-pages.js';
import { checkCompileOptions, compileFlags, parseArch } from '../../../src/runtime/program.js';
import { imageKind } from '../../../src/runtime/module.js';
import { fftGeometry } from '../../../src/runtime/fft/geometry.js';
import { DisposedError, expectResource, Resource } from '../../../src/runtime/resource.js';
import { checkTimeoutMs, MAX_TIMEOUT_MS } from '../../../src/runtime/timeout.js';

type ErrorClass = new (...args: never[]) => Error;
type Row = [name: string, call: () => unknown, error: ErrorClass, message: RegExp];

/** A mocked parameter block: the DataView a Kernel writes its arguments through. */
const block = new DataView(new ArrayBuffer(64));
const arg = (type: Exclude<KernelParamType, 'ptr'>, value: unknown) => () =>
  writeScalar(block, 8, type, value, `kernel "k" argument 3 (${type})`);

/** A stand-in resource (the real ones need a GPU): the brand checks are Resource's own. */
class Thing extends Resource {
  released = 0;
  constructor(label?: string) {
    super('Thing', label);
  }
  protected releaseNative(): void {
    this.released++;
  }
}
class Other extends Resource {
  constructor() {
    super('Other', undefined);
  }
  protected releaseNative(): void {}
}
const disposedThing = new Thing('gone');
disposedThing.dispose();

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

const dtypeRows: Row[] = [
  [
    'dtype toString',
    () => checkDType('toString', 'DeviceBuffer.alloc'),
    TypeError,
    /DeviceBuffer\.alloc: unknown dtype "toString"; expected one of f32/,
  ],
  ['dtype __proto__', () => checkDType('__proto__', 'HostBuffer.alloc'), TypeError, /unknown dtype "__proto__"/],
  ['dtype constructor', () => checkDType('constructor', 'x'), TypeError, /unknown dtype "constructor"/],
  ['dtype hasOwnProperty', () => checkDType('hasOwnProperty', 'x'), TypeError, /unknown dtype "hasOwnProperty"/],
  ['dtype float32', () => checkDType('float32', 'x'), TypeError, /unknown dtype "float32"/],
  ['dtype F32', () => checkDType('F32', 'x'), TypeError, /unknown dtype "F32"/],
  ['dtype empty', () => checkDType('', 'x'), TypeError, /unknown dtype ""/],
  ['dtype number', () => checkDType(4, 'x'), TypeError, /unknown dtype 4/],
  ['dtype undefined', () => checkDType(undefined, 'x'), TypeError, /unknown dtype undefined/],
  ['dtype object', () => checkDType({}, 'x'), TypeError, /unknown dtype/],
];

const compileRows: Row[] = [
  ['arch 90', () => parseArch('90'), TypeError, /arch must look like 'sm_90'/],
  ['arch sm90', () => parseArch('sm90'), TypeError, /arch must look like/],
  ['arch compute', () => parseArch('compute_'), TypeError, /arch must look like/],
  ['arch number', () => compileFlags(90 as never), TypeError, /arch must be a string like 'sm_90'/],
  [
    'flags not array',
    () => compileFlags('sm_90', '-O3' as never),
    TypeError,
    /compile options must be an array of NVRTC flags/,
  ],
  ['flag number', () => compileFlags('sm_90', [3] as never), TypeError, /NVRTC options must be strings, got 3/],
  ['flag NUL', () => compileFlags('sm_90', ['-DX=1\0']), TypeError, /contains a NUL character/],
  [
    'flag -arch',
    () => compileFlags('sm_90', ['-arch=sm_80']),
    TypeError,
    /give the architecture as compile\(\{ arch \}\)/,
  ],
  [
    'flag --gpu-architecture',
    () => compileFlags('sm_90', ['--gpu-architecture=sm_80']),
    TypeError,
    /not as the option/,
  ],
  ['options null', () => checkCompileOptions(null), TypeError, /compile options must be an object, got null/],
  ['options string', () => checkCompileOptions('sm_90'), TypeError, /compile options must be an object, got string/],
  ['options arch number', () => checkCompileOptions({ arch: 90 }), TypeError, /compile arch must be a string/],
  [
    'options device number',
    () => checkCompileOptions({ device: 0 }),
    TypeError,
    /compile device must be a Device, got number/,
  ],
  [
    'options device plain',
    () => checkCompileOptions({ device: { ordinal: 0, handle: 0 } }),
    TypeError,
    /compile device must be a Device, got a plain Object/,
  ],
  [
    'options.options string',
    () => checkCompileOptions({ options: '-O3' }),
    TypeError,
    /options\.options must be an array/,
  ],
  [
    'nameExpressions string',
    () => checkCompileOptions({ nameExpressions: 'k<float>' }),
    TypeError,
    /nameExpressions must be an array/,
  ],
  ['cache string', () => checkCompileOptions({ cache: 'no' }), TypeError, /compile cache must be a boolean/],
];

const fftRows: Row[] = [
  ['fft null', () => fftGeometry(null as never), TypeError, /FftPlan needs a descriptor/],
  [
    'fft type toString',
    () => fftGeometry({ shape: [8], type: 'toString' as never }),
    TypeError,
    /FFT type must be one of/,
  ],
  [
    'fft type R2R',
    () => fftGeometry({ shape: [8], type: 'R2R' as never }),
    TypeError,
    /FFT type must be one of .*got R2R/,
  ],
  ['fft shape empty', () => fftGeometry({ shape: [], type: 'C2C' }), RangeError, /1 to 3 dimensions/],
  ['fft shape 4-D', () => fftGeometry({ shape: [2, 2, 2, 2], type: 'C2C' }), RangeError, /1 to 3 dimensions/],
  [
    'fft shape 0',
    () => fftGeometry({ shape: [0], type: 'C2C' }),
    RangeError,
    /shape\[0\] must be a positive 32-bit integer/,
  ],
  ['fft shape fraction', () => fftGeometry({ shape: [8.5], type: 'C2C' }), RangeError, /shape\[0\]/],
  ['fft shape 2^31', () => fftGeometry({ shape: [2 ** 31], type: 'C2C' }), RangeError, /32-bit/],
  ['fft batch 0', () => fftGeometry({ shape: [8], type: 'C2C', batch: 0 }), RangeError, /batch must be a positive/],
  ['fft batch NaN', () => fftGeometry({ shape: [8], type: 'C2C', batch: Number.NaN }), RangeError, /batch/],
];

const imageRows: Row[] = [
  [
    'image text',
    () => expectImage(new TextEncoder().encode('hello world')),
    TypeError,
    /not a cubin \(ELF\), fatbin or PTX: it starts with bytes 68 65 6c 6c/,
  ],
  ['image zeros', () => expectImage(new Uint8Array(64)), TypeError, /starts with bytes 00 00 00 00/],
  ['image JSON', () => expectImage(new TextEncoder().encode('{"version": 1}')), TypeError, /not a cubin/],
  ['image PTX without target', () => expectImage(new TextEncoder().encode('.version 8.0\n')), TypeError, /not a cubin/],
  ['image ELF truncated', () => expectImage(new Uint8Array([0x7f, 0x45, 0x4c])), TypeError, /not a cubin/],
];

/** Module.load's check, without loading: imageKind undefined is what makes Module.load throw. */
function expectImage(image: Uint8Array): void {
  if (imageKind(image) === undefined)
    throw new TypeError(
      `module image is not a cubin (ELF), fatbin or PTX: it starts with bytes ${Array.from(image.subarray(0, 4), (b) => b.toString(16).padStart(2, '0')).join(' ')}`,
    );
}

const brandRows: Row[] = [
  [
    'plain object for a resource',
    () => expectResource({ handle: 1n, label: 'fake', disposed: false }, Thing, 'stream'),
    TypeError,
    /stream must be a Thing, got a plain Object/,
  ],
  ['null for a resource', () => expectResource(null, Thing, 'stream'), TypeError, /stream must be a Thing, got null/],
  ['number for a resource', () => expectResource(5, Thing, 'event'), TypeError, /event must be a Thing, got number/],
  [
    'undefined for a resource',
    () => expectResource(undefined, 'Thing', 'event'),
    TypeError,
    /event must be a Thing, got undefined/,
  ],
  [
    'wrong family',
    () => expectResource(new Other(), 'Thing', 'buffer'),
    TypeError,
    /buffer must be a Thing, got Other "Other#\d+"/,
  ],
  [
    'object with a forged kind',
    () => expectResource({ kind: 'Thing', disposed: false }, 'Thing', 'x'),
    TypeError,
    /must be a Thing, got a plain Object/,
  ],
  [
    'prototype-forged object',
    () => expectResource(Object.create(Thing.prototype), 'Thing', 'x'),
    TypeError,
    /must be a Thing/,
  ],
  [
    'disposed resource by class',
    () => expectResource(disposedThing, Thing, 'stream'),
    DisposedError,
    /Thing "gone" was disposed and cannot be used/,
  ],
  [
    'disposed resource by family',
    () => expectResource(disposedThing, 'Thing', 'stream'),
    DisposedError,
    /Thing "gone" was disposed/,
  ],
  ['label not a string', () => new Thing(42 as never), TypeError, /Thing label must be a string, got number/],
];

const timeoutRows: Row[] = [
  [
    'timeout 2^31',
    () => checkTimeoutMs(2 ** 31, 'waitForAny timeoutMs'),
    RangeError,
    /waitForAny timeoutMs must be 0\.\.2147483647 ms \(the most a Node timer holds\), got 2147483648/,
  ],
  ['timeout 30 days', () => checkTimeoutMs(30 * 86_400_000, 'timeoutMs'), RangeError, /got 2592000000/],
  ['timeout -1', () => checkTimeoutMs(-1, 'timeoutMs'), RangeError, /got -1/],
  ['timeout NaN', () => checkTimeoutMs(Number.NaN, 'timeoutMs'), RangeError, /got NaN/],
  ['timeout Infinity not allowed', () => checkTimeoutMs(Infinity, 'timeoutMs'), RangeError, /got Infinity/],
  [
    'timeout string',
    () => checkTimeoutMs('100', 'timeoutMs'),
    TypeError,
    /must be a number of milliseconds, got string/,
  ],
  ['timeout bigint', () => checkTimeoutMs(100n, 'timeoutMs'), TypeError, /got bigint/],
];

const rows: Row[] = [
  ...timeoutRows,
  ...scalarRows,
  ...layoutRows,
  ...addressRows,
  ...dtypeRows,
  ...compileRows,
  ...fftRows,
  ...imageRows,
  ...brandRows,
];

describe('bad input to pure runtime validation', () => {
  it('has a row per case (the GPU half holds the rest)', () => {
    expect(rows.length).toBeGreaterThanOrEqual(100);
  });
  it.each(rows)('%s', (_name, call, error, message) => {
    let thrown: unknown;
    try {
      call();
    } catch (e) {
      thrown = e;
    }
    expect(thrown, 'it must throw').toBeInstanceOf(error);
    expect((thrown as Error).message).toMatch(message);
  });
});

describe('what the same checks accept', () => {
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
  it('recognizes cubins, fatbins and PTX', () => {
    expect(imageKind(new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2]))).toBe('cubin');
    expect(imageKind(new Uint8Array([0x50, 0xed, 0x55, 0xba, 1]))).toBe('fatbin');
    expect(
      imageKind(
        new TextEncoder().encode(
          '//\n// Generated by NVIDIA NVVM Compiler\n//\n\n.version 8.5\n.target sm_90\n.address_size 64\n',
        ),
      ),
    ).toBe('ptx');
  });
});

describe('sticky statuses', () => {
  it('counts only the statuses the driver documents as sticky (a stale handle is not a lost context)', () => {
    expect(new CudaError('driver', CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, 'cuEventQuery').sticky).toBe(true);
    expect(new CudaError('driver', CUresult.CUDA_ERROR_CONTEXT_IS_DESTROYED, 'cuEventQuery').sticky).toBe(false);
    expect(new CudaError('driver', CUresult.CUDA_ERROR_INVALID_HANDLE, 'cuEventQuery').sticky).toBe(false);
    expect(new CudaError('driver', CUresult.CUDA_ERROR_CONTAINED, 'cuEventQuery').sticky).toBe(true);
    expect(new CudaError('driver', CUresult.CUDA_ERROR_LAUNCH_FAILED, 'cuEventQuery').sticky).toBe(true);
  });
});

describe('Resource', () => {
  it('disposes once: a second dispose() is a no-op', () => {
    const t = new Thing();
    t.dispose();
    t.dispose();
    t[Symbol.dispose]();
    expect(t.released).toBe(1);
    expect(() => t.checkAlive()).toThrow(DisposedError);
  });
});

describe('host pages (the memory behind HostBuffer.array)', () => {
  it('are freed only when the owner and every array are gone', () => {
    const ptr = koffi.alloc('uint8', 256) as bigint;
    let freed = 0;
    const pages = new HostPages(Number(ptr), 256, () => {
      freed++;
      koffi.free(ptr);
    });
    const a = new Float32Array(pages.buffer());
    expect(pages.buffer()).toBe(a.buffer); // one array buffer while it lives
    expect(pages.holds).toBe(2);
    pages.drop(); // the owner is disposed: the array still holds the pages
    expect(freed).toBe(0);
    a[3] = 7; // still the caller's, never freed memory
    expect(a[3]).toBe(7);
    pages.drop(); // what the array's FinalizationRegistry does once it is collected
    expect(freed).toBe(1);
    expect(pages.released).toBe(true);
    pages.drop();
    expect(freed).toBe(1);
    expect(() => pages.buffer()).toThrow(/already released/);
  });
  it('free at once when no array was handed out', () => {
    let freed = 0;
    const pages = new HostPages(4096, 64, () => freed++);
    pages.drop();
    expect(freed).toBe(1);
  });
});
