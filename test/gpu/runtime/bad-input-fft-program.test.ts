// Bad input to the runtime's GPU entry points: FFT plans and NVRTC programs (the table form: test/setup/bad-input-rows.ts).
import { Device } from '../../../src/runtime/device.js';
import { FftPlan } from '../../../src/runtime/fft/plan.js';
import { fft } from '../../../src/runtime/fft/plan-cache.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Program } from '../../../src/runtime/program.js';
import { DisposedError } from '../../../src/runtime/resource.js';
import { Stream } from '../../../src/runtime/stream.js';
import type { Row } from '../../setup/bad-input-rows.js';
import { describeBadInput, fx, plain } from './bad-input-fixture.js';

const rows: Row[] = [
  // FFT
  [
    'fft stream plain',
    () => FftPlan.create({ shape: [8], type: 'C2C', stream: plain as never }),
    TypeError,
    /FftPlan\.create stream must be a Stream/,
  ],
  ['fft forward plain', () => fx().plan.forward(plain as never), TypeError, /forward input must be a DeviceBuffer/],
  ['fft forward disposed', () => fx().plan.forward(fx().gone as never), DisposedError, /"gone buffer" was disposed/],
  [
    'fft options null',
    () => fx().plan.forward(fx().c64, fx().c64, null as never),
    TypeError,
    /options must be an object/,
  ],
  [
    'fft options stream plain',
    () => fx().plan.forward(fx().c64, undefined, { stream: plain as never }),
    TypeError,
    /stream must be a Stream/,
  ],
  ['fft() plain', () => fft(plain as never), TypeError, /fft\(\) input must be a DeviceBuffer/],
  ['fft() batch', () => fft(fx().c64, { batch: 3 }), RangeError, /do not split into 3 transforms/],
  // Program
  ['program null', () => new Program(null as never), TypeError, /Program takes a descriptor/],
  ['program empty source', () => new Program({ source: '   ' }), TypeError, /needs CUDA source text/],
  [
    'program headers array',
    () => new Program({ source: 'x', headers: ['a.cuh'] as never }),
    TypeError,
    /headers must be an object/,
  ],
  [
    'program header number',
    () => new Program({ source: 'x', headers: { 'a.cuh': 5 as never } }),
    TypeError,
    /header "a\.cuh" must be source text/,
  ],
  ['program name empty', () => new Program({ source: 'x', name: '' }), TypeError, /name must be a non-empty string/],
  [
    'compile arch number',
    () => fx().program.compile({ arch: 90 as never }),
    TypeError,
    /compile arch must be a string/,
  ],
  ['compile arch word', () => fx().program.compile({ arch: 'hopper' }), TypeError, /arch must look like 'sm_90'/],
  [
    'compile options string',
    () => fx().program.compile({ options: '-O3' as never }),
    TypeError,
    /options\.options must be an array/,
  ],
  [
    'compile -arch flag',
    () => fx().program.compile({ options: ['-arch=sm_80'] }),
    TypeError,
    /give the architecture as compile/,
  ],
  [
    'compile device number',
    () => fx().program.compile({ device: 0 as never }),
    TypeError,
    /compile device must be a Device/,
  ],
  ['compile after dispose', () => fx().goneProgram.compile(), DisposedError, /Program "gone program" was disposed/],
  [
    'kernel after dispose',
    () => fx().goneProgram.kernel('k', []),
    DisposedError,
    /Program "gone program" was disposed/,
  ],
];

describeBadInput('FFT plans and NVRTC programs', rows, 19);
