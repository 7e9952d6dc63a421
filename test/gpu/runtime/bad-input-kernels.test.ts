// Bad input to the runtime's GPU entry points: kernels, modules and graphs (the table form: test/setup/bad-input-rows.ts).
import { Graph } from '../../../src/runtime/graph.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Module } from '../../../src/runtime/module.js';
import { DisposedError } from '../../../src/runtime/resource.js';
import { Stream } from '../../../src/runtime/stream.js';
import { BASIC_FATBIN } from '../helpers.js';
import type { Row } from '../../setup/bad-input-rows.js';
import { describeBadInput, fx, plain } from './bad-input-fixture.js';

const rows: Row[] = [
  // Kernel
  [
    'launch config null',
    () => fx().k.kernels.empty.launch(null as never),
    TypeError,
    /launch config must be an object/,
  ],
  ['launch grid 0', () => fx().k.empty({ grid: 0, block: 1 }), RangeError, /grid dimensions must be positive integers/],
  [
    'launch grid string',
    () => fx().k.empty({ grid: 'big' as never, block: 1 }),
    TypeError,
    /grid must be a number or an array/,
  ],
  ['launch block 2048', () => fx().k.empty({ grid: 1, block: 2048 }), RangeError, /exceeds/],
  [
    'launch block 4-D',
    () => fx().k.empty({ grid: 1, block: [1, 1, 1, 1] as never }),
    TypeError,
    /array of 1 to 3 numbers/,
  ],
  [
    'launch shared -1',
    () => fx().k.empty({ grid: 1, block: 1, sharedMemBytes: -1 }),
    RangeError,
    /dynamic shared memory -1 is outside/,
  ],
  [
    'launch shared over limit',
    () => fx().k.empty({ grid: 1, block: 1, sharedMemBytes: 10 ** 7 }),
    RangeError,
    /dynamic shared memory 10000000 is outside/,
  ],
  [
    'launch shared needs opt-in',
    () => fx().k.empty({ grid: 1, block: 1, sharedMemBytes: 100_000 }),
    RangeError,
    /setMaxDynamicSharedMemory\(100000\) first/,
  ],
  [
    'launch stream plain',
    () => fx().k.empty({ grid: 1, block: 1, stream: plain as never }),
    TypeError,
    /launch stream must be a Stream/,
  ],
  [
    'launch stream disposed',
    () => fx().k.empty({ grid: 1, block: 1, stream: fx().goneStream }),
    DisposedError,
    /"gone stream" was disposed/,
  ],
  [
    'launch arity',
    () =>
      (fx().k.kernels.fill_f32 as { launch(c: unknown, ...a: unknown[]): void }).launch(
        { grid: 1, block: 1 },
        fx().buf,
      ),
    TypeError,
    /takes 3 argument/,
  ],
  [
    'arg i32 3e9',
    () => fx().k.fill_f32({ grid: 1, block: 1 }, fx().buf, 1, 3e9),
    RangeError,
    /argument 2 \(i32\): 3000000000 is outside the i32 range/,
  ],
  [
    'arg i32 NaN',
    () => fx().k.fill_f32({ grid: 1, block: 1 }, fx().buf, 1, Number.NaN),
    RangeError,
    /argument 2 \(i32\): NaN is not an integer/,
  ],
  [
    'arg f32 string',
    () => fx().k.fill_f32({ grid: 1, block: 1 }, fx().buf, '1' as never, 4),
    TypeError,
    /argument 1 \(f32\): expected a number/,
  ],
  [
    'arg ptr plain',
    () => fx().k.fill_f32({ grid: 1, block: 1 }, { address: 5 } as never, 1, 4),
    TypeError,
    /argument 0 \(ptr\): expected a DeviceBuffer or a device address/,
  ],
  [
    'arg ptr NaN',
    () => fx().k.fill_f32({ grid: 1, block: 1 }, Number.NaN as never, 1, 4),
    RangeError,
    /argument 0 \(ptr\): NaN is not a device address/,
  ],
  [
    'arg ptr disposed',
    () => fx().k.fill_f32({ grid: 1, block: 1 }, fx().gone, 1, 4),
    DisposedError,
    /argument 0: .*"gone buffer" was disposed/,
  ],
  [
    'arg u64 2^64',
    () => fx().k.spin_ns({ grid: 1, block: 1 }, 2n ** 64n),
    RangeError,
    /argument 0 \(u64\): 18446744073709551616n is outside/,
  ],
  ['arg u64 negative', () => fx().k.spin_ns({ grid: 1, block: 1 }, -5n), RangeError, /-5n is outside the u64 range/],
  ['setArg index 99', () => fx().k.kernels.fill_f32.setArg(99, 1), RangeError, /has no argument 99/],
  [
    'setMaxDynamicSharedMemory 10^7',
    () => fx().k.kernels.empty.setMaxDynamicSharedMemory(10 ** 7),
    RangeError,
    /dynamic shared memory 10000000 is outside/,
  ],
  [
    'occupancy block 0',
    () => fx().k.kernels.empty.maxActiveBlocksPerMultiprocessor(0),
    RangeError,
    /block size 0 is outside/,
  ],
  ['suggestedLaunch shared -1', () => fx().k.kernels.empty.suggestedLaunch(-1), RangeError, /dynamic shared memory -1/],
  // Module
  ['module load null', () => Module.load(null as never), TypeError, /takes a descriptor object/],
  ['module load neither', () => Module.load({}), TypeError, /exactly one of `path` or `data`/],
  ['module load both', () => Module.load({ path: BASIC_FATBIN, data: 'x' }), TypeError, /exactly one of/],
  ['module path number', () => Module.load({ path: 5 as never }), TypeError, /path must be a string/],
  ['module data number', () => Module.load({ data: 5 as never }), TypeError, /data must be a Uint8Array/],
  [
    'module data junk',
    () => Module.load({ data: new Uint8Array([9, 9, 9, 9, 9]), label: 'junk' }),
    TypeError,
    /junk is not a cubin \(ELF\), fatbin or PTX/,
  ],
  [
    'module data text',
    () => Module.load({ data: 'int main() {}', label: 'c source' }),
    TypeError,
    /c source is not a cubin/,
  ],
  ['module data empty', () => Module.load({ data: new Uint8Array(0) }), RangeError, /is empty/],
  [
    'module missing file',
    () => Module.load({ path: '/nonexistent/tscuda.fatbin' }),
    Error,
    /cannot read module image \/nonexistent/,
  ],
  ['module kernel empty name', () => fx().k.module.kernel('', []), TypeError, /kernel name must be a non-empty string/],
  [
    'module kernel param toString',
    () => fx().k.module.kernel('empty', ['toString'] as never),
    TypeError,
    /unknown parameter type "toString"/,
  ],
  [
    'module kernel params string',
    () => fx().k.module.kernel('empty', 'ptr' as never),
    TypeError,
    /params must be an array/,
  ],
  // Graph
  [
    'capture plain stream',
    () => Graph.capture(plain as never, () => {}),
    TypeError,
    /Graph\.capture stream must be a Stream/,
  ],
  [
    'capture disposed stream',
    () => Graph.capture(fx().goneStream, () => {}),
    DisposedError,
    /"gone stream" was disposed/,
  ],
  [
    'capture mode',
    () => Graph.capture(fx().s, () => {}, { mode: 'toString' as never }),
    TypeError,
    /unknown capture mode "toString"/,
  ],
  ['capture enqueue', () => Graph.capture(fx().s, 'work' as never), TypeError, /enqueue must be a function/],
];

describeBadInput('kernels, modules and graphs', rows, 39);
