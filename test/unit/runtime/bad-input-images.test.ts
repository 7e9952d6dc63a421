/**
 * Bad input to dtype names, compile options, FFT descriptors and module image kinds
 * (no GPU; the GPU half is test/gpu/runtime/bad-input-*.test.ts). Each row: the call, the error
 * class, and a pattern the message must match (it names the problem).
 */
import { describe, expect, it } from 'vitest';
import { checkDType } from '../../../src/runtime/memory/dtype-check.js';
import { checkCompileOptions, compileFlags, parseArch } from '../../../src/runtime/program.js';
import { imageKind } from '../../../src/runtime/module.js';
import { fftGeometry } from '../../../src/runtime/fft/geometry.js';
import { itRefusesEachRow, type Row } from '../../setup/bad-input-rows.js';

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

const rows: Row[] = [...dtypeRows, ...compileRows, ...fftRows, ...imageRows];

describe('bad input to pure runtime validation: dtype names, compile options, FFT descriptors, module images', () => {
  it('has a row per case', () => {
    expect(rows.length).toBeGreaterThanOrEqual(42);
  });
  itRefusesEachRow(rows);
});

describe('what the same checks accept', () => {
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
