// Bad input to the runtime's GPU entry points: device, host, managed and pooled memory, and 2-D copies (the table form: test/setup/bad-input-rows.ts).
import { Device } from '../../../src/runtime/device.js';
import { allocPitched, copy2D } from '../../../src/runtime/memory/copy-2d.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { HostBuffer } from '../../../src/runtime/memory/host-buffer.js';
import { ManagedBuffer } from '../../../src/runtime/memory/managed-buffer.js';
import { MemoryPool } from '../../../src/runtime/memory/memory-pool.js';
import { DisposedError } from '../../../src/runtime/resource.js';
import { Stream } from '../../../src/runtime/stream.js';
import type { Row } from '../../setup/bad-input-rows.js';
import { describeBadInput, fx, plain } from './bad-input-fixture.js';

const rows: Row[] = [
  // DeviceBuffer.alloc
  ['alloc dtype toString', () => DeviceBuffer.alloc('toString' as never, 4), TypeError, /unknown dtype "toString"/],
  ['alloc dtype float', () => DeviceBuffer.alloc('float' as never, 4), TypeError, /unknown dtype "float"/],
  [
    'alloc length 0',
    () => DeviceBuffer.alloc('f32', 0),
    RangeError,
    /DeviceBuffer length must be a positive integer, got 0/,
  ],
  ['alloc length -1', () => DeviceBuffer.alloc('f32', -1), RangeError, /positive integer, got -1/],
  ['alloc length 1.5', () => DeviceBuffer.alloc('f32', 1.5), RangeError, /got 1\.5/],
  ['alloc length NaN', () => DeviceBuffer.alloc('f32', Number.NaN), RangeError, /got NaN/],
  ['alloc length 2^53', () => DeviceBuffer.alloc('f32', 2 ** 53), RangeError, /positive integer/],
  [
    'alloc descriptor null',
    () => DeviceBuffer.alloc('f32', 4, null as never),
    TypeError,
    /takes a descriptor object, got null/,
  ],
  [
    'alloc stream plain',
    () => DeviceBuffer.alloc('f32', 4, { stream: plain as never }),
    TypeError,
    /alloc stream must be a Stream, got a plain Object/,
  ],
  [
    'alloc stream disposed',
    () => DeviceBuffer.alloc('f32', 4, { stream: fx().goneStream }),
    DisposedError,
    /Stream "gone stream" was disposed/,
  ],
  [
    'alloc pool plain',
    () => DeviceBuffer.alloc('f32', 4, { pool: plain as never }),
    TypeError,
    /alloc pool must be a MemoryPool/,
  ],
  ['alloc device 999', () => DeviceBuffer.alloc('f32', 4, { device: 999 }), RangeError, /device 999 does not exist/],
  [
    'alloc device -1',
    () => DeviceBuffer.alloc('f32', 4, { device: -1 }),
    RangeError,
    /ordinal must be a non-negative integer/,
  ],
  [
    'alloc device string',
    () => DeviceBuffer.alloc('f32', 4, { device: '0' as never }),
    TypeError,
    /device must be a Device or an ordinal, got string/,
  ],
  [
    'alloc device plain',
    () => DeviceBuffer.alloc('f32', 4, { device: { ordinal: 0 } as never }),
    TypeError,
    /got a plain Object/,
  ],
  [
    'alloc context plain',
    () => DeviceBuffer.alloc('f32', 4, { context: plain as never }),
    TypeError,
    /context must be a Context, got a plain Object/,
  ],
  [
    'alloc label number',
    () => DeviceBuffer.alloc('f32', 4, { label: 5 as never }),
    TypeError,
    /label must be a string, got number/,
  ],
  // DeviceBuffer.wrap
  ['wrap NaN', () => DeviceBuffer.wrap('f32', 4, Number.NaN), RangeError, /NaN is not a device address/],
  ['wrap negative', () => DeviceBuffer.wrap('f32', 4, -4096), RangeError, /-4096 is not a device address/],
  ['wrap fraction', () => DeviceBuffer.wrap('f32', 4, 4096.5), RangeError, /4096\.5 is not a device address/],
  ['wrap zero', () => DeviceBuffer.wrap('f32', 4, 0), RangeError, /null pointer/],
  [
    'wrap bigint',
    () => DeviceBuffer.wrap('f32', 4, 4096n as never),
    TypeError,
    /expected a device address \(a number\)/,
  ],
  [
    'wrap free not a function',
    () => DeviceBuffer.wrap('f32', 4, 4096, { free: 'cudaFree' as never }),
    TypeError,
    /free must be a function/,
  ],
  ['wrap dtype', () => DeviceBuffer.wrap('valueOf' as never, 4, 4096), TypeError, /unknown dtype "valueOf"/],
  // views
  ['view offset -1', () => fx().buf.view(-1, 4), RangeError, /view offset must be a non-negative integer/],
  ['view length 0', () => fx().buf.view(0, 0), RangeError, /view length must be a positive integer/],
  ['view past the end', () => fx().buf.view(90, 20), RangeError, /outside "buf"/],
  ['view of disposed', () => fx().gone.view(0, 4), DisposedError, /"gone buffer" was disposed/],
  // write / read / copyFrom / memset
  [
    'write plain object',
    () => fx().buf.write({ isHostBuffer: true, address: 5 } as never),
    TypeError,
    /expected a HostBuffer or a TypedArray, got a plain Object/,
  ],
  ['write wrong array', () => fx().buf.write(new Float64Array(100) as never), TypeError, /Float32Array/],
  [
    'write offset -1',
    () => fx().buf.write(new Float32Array(4), { offset: -1 }),
    RangeError,
    /write offset must be a non-negative integer/,
  ],
  [
    'write length past',
    () => fx().buf.write(new Float32Array(10), { offset: 95, length: 10 }),
    RangeError,
    /outside "buf"/,
  ],
  [
    'write options null',
    () => fx().buf.write(new Float32Array(4), null as never),
    TypeError,
    /options must be an object/,
  ],
  [
    'write stream plain',
    () => fx().buf.write(new Float32Array(4), { stream: plain as never }),
    TypeError,
    /stream for "buf" must be a Stream/,
  ],
  ['write disposed host', () => fx().buf.write(fx().goneHost), DisposedError, /"gone host" was disposed/],
  ['write to disposed', () => fx().gone.write(new Float32Array(8)), DisposedError, /"gone buffer" was disposed/],
  [
    'read plain target',
    () => fx().buf.read({ length: 100 } as never),
    TypeError,
    /expected a HostBuffer or a TypedArray/,
  ],
  [
    'read length past',
    () => fx().buf.read(new Float32Array(10), { otherOffset: 8, length: 5 }),
    RangeError,
    /outside the other side/,
  ],
  [
    'read stream disposed',
    () => fx().buf.read(new Float32Array(100), { stream: fx().goneStream }),
    DisposedError,
    /Stream "gone stream" was disposed/,
  ],
  [
    'copyFrom plain',
    () => fx().buf.copyFrom(plain as never),
    TypeError,
    /source must be a DeviceBuffer, got a plain Object/,
  ],
  ['copyFrom disposed', () => fx().buf.copyFrom(fx().gone), DisposedError, /"gone buffer" was disposed/],
  ['copyFrom dtype', () => fx().buf.copyFrom(fx().c64 as never), TypeError, /element types differ/],
  ['copyFrom overlap', () => fx().buf.view(0, 50).copyFrom(fx().buf.view(25, 50)), RangeError, /overlap/],
  ['copyFrom self', () => fx().buf.copyFrom(fx().buf), RangeError, /overlap/],
  ['memset 2^32', () => fx().buf.memset(2 ** 32), RangeError, /does not fit in 32 bits/],
  ['memset -1', () => fx().buf.memset(-1), RangeError, /does not fit/],
  ['memset width 12', () => fx().buf.memset(0, { width: 12 as never }), RangeError, /width must be 8, 16 or 32/],
  ['memset stream plain', () => fx().buf.memset(0, { stream: plain as never }), TypeError, /must be a Stream/],
  // HostBuffer / ManagedBuffer
  ['host dtype', () => HostBuffer.alloc('toString' as never, 4), TypeError, /unknown dtype "toString"/],
  ['host length 0', () => HostBuffer.alloc('f32', 0), RangeError, /HostBuffer length must be a positive integer/],
  ['host descriptor null', () => HostBuffer.alloc('f32', 4, null as never), TypeError, /takes a descriptor object/],
  ['host register plain', () => HostBuffer.register('f32', { length: 4 } as never), TypeError, /expected a TypedArray/],
  [
    'host register wrong array',
    () => HostBuffer.register('f32', new Int32Array(4) as never),
    TypeError,
    /Float32Array/,
  ],
  ['host array after dispose', () => fx().goneHost.array, DisposedError, /"gone host" was disposed/],
  ['managed dtype', () => ManagedBuffer.alloc('__proto__' as never, 4), TypeError, /unknown dtype "__proto__"/],
  ['managed advice', () => fx().managed.advise('fast' as never, 'host'), TypeError, /unknown advice "fast"/],
  [
    'managed target',
    () => fx().managed.advise('readMostly', 0 as never),
    TypeError,
    /target must be a Device or 'host'/,
  ],
  ['managed prefetch stream', () => fx().managed.prefetch('host', plain as never), TypeError, /must be a Stream/],
  // MemoryPool
  [
    'pool maxSize -1',
    () => new MemoryPool({ maxSize: -1 }),
    RangeError,
    /maxSize must be a non-negative integer number of bytes/,
  ],
  ['pool maxSize 1.5', () => new MemoryPool({ maxSize: 1.5 }), RangeError, /maxSize/],
  ['pool threshold NaN', () => new MemoryPool({ releaseThreshold: Number.NaN }), RangeError, /releaseThreshold/],
  // 2-D copies
  ['copy2D null', () => copy2D(null as never), TypeError, /copy2D takes a descriptor object/],
  [
    'copy2D src plain',
    () =>
      copy2D({ src: plain as never, srcPitchBytes: 16, dst: fx().buf, dstPitchBytes: 16, widthBytes: 16, height: 2 }),
    TypeError,
    /copy2D src must be a DeviceBuffer or a HostBuffer/,
  ],
  [
    'copy2D dst disposed',
    () => copy2D({ src: fx().buf, srcPitchBytes: 16, dst: fx().gone, dstPitchBytes: 16, widthBytes: 16, height: 2 }),
    DisposedError,
    /"gone buffer" was disposed/,
  ],
  [
    'copy2D pitch',
    () => copy2D({ src: fx().host, srcPitchBytes: 4, dst: fx().buf, dstPitchBytes: 16, widthBytes: 16, height: 2 }),
    RangeError,
    /source pitch 4 is smaller than the row width 16/,
  ],
  [
    'copy2D height 0',
    () => copy2D({ src: fx().host, srcPitchBytes: 16, dst: fx().buf, dstPitchBytes: 16, widthBytes: 16, height: 0 }),
    RangeError,
    /copy2D height must be a positive integer/,
  ],
  [
    'copy2D too big',
    () => copy2D({ src: fx().host, srcPitchBytes: 400, dst: fx().buf, dstPitchBytes: 16, widthBytes: 16, height: 2 }),
    RangeError,
    /source "host" holds 400 bytes, the copy needs 416/,
  ],
  [
    'copy2D stream plain',
    () =>
      copy2D({
        src: fx().host,
        srcPitchBytes: 16,
        dst: fx().buf,
        dstPitchBytes: 16,
        widthBytes: 16,
        height: 2,
        stream: plain as never,
      }),
    TypeError,
    /copy2D stream must be a Stream/,
  ],
  [
    'copy2D overlap',
    () =>
      copy2D({
        src: fx().buf,
        srcPitchBytes: 16,
        dst: fx().buf.view(2, 50),
        dstPitchBytes: 16,
        widthBytes: 16,
        height: 4,
      }),
    RangeError,
    /overlap/,
  ],
  ['allocPitched dtype', () => allocPitched('toString' as never, 4, 4), TypeError, /unknown dtype "toString"/],
  ['allocPitched width 0', () => allocPitched('f32', 0, 4), RangeError, /pitched width must be a positive integer/],
];

describeBadInput('device, host, managed and pooled memory, and 2-D copies', rows, 71);
