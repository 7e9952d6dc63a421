/**
 * Bad input to every public runtime entry point that needs a GPU to reach (the pure checks are in
 * test/unit/runtime/bad-input.test.ts). Each row: the call, the error class, and a pattern the
 * message must match. Every one is refused before its handle or value reaches the driver; the
 * cases that used to crash the process are also in the fault suite (test/gpu/fault/).
 */
import { describe, expect, it } from 'vitest';
import { Device } from '../../../src/runtime/device.js';
import { Event, EventPool } from '../../../src/runtime/event.js';
import { FftPlan } from '../../../src/runtime/fft/plan.js';
import { fft } from '../../../src/runtime/fft/plan-cache.js';
import { Graph } from '../../../src/runtime/graph.js';
import { allocPitched, copy2D } from '../../../src/runtime/memory/copy-2d.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { HostBuffer } from '../../../src/runtime/memory/host-buffer.js';
import { ManagedBuffer } from '../../../src/runtime/memory/managed-buffer.js';
import { MemoryPool } from '../../../src/runtime/memory/memory-pool.js';
import { Module } from '../../../src/runtime/module.js';
import { Program } from '../../../src/runtime/program.js';
import { DisposedError } from '../../../src/runtime/resource.js';
import { Stream } from '../../../src/runtime/stream.js';
import { type BasicKernels, loadBasicKernels } from '../../kernels/launchers.generated.js';
import { gpu } from '../gpu-available.js';
import { BASIC_FATBIN } from '../helpers.js';

type ErrorClass = new (...args: never[]) => Error;
type Row = [name: string, call: () => unknown, error: ErrorClass, message: RegExp];

/** Shared objects, made on first use (rows are built before the GPU check skips them). */
interface Fixtures {
  s: Stream;
  goneStream: Stream;
  buf: DeviceBuffer<'f32'>;
  gone: DeviceBuffer<'f32'>;
  host: HostBuffer<'f32'>;
  goneHost: HostBuffer<'f32'>;
  managed: ManagedBuffer<'f32'>;
  pool: MemoryPool;
  k: BasicKernels;
  timed: Event;
  untimed: Event;
  plan: FftPlan<'C2C'>;
  c64: DeviceBuffer<'c64'>;
  program: Program;
  goneProgram: Program;
  events: EventPool;
}
let made: Fixtures | undefined;
function fx(): Fixtures {
  if (made) return made;
  const goneStream = new Stream({ label: 'gone stream' });
  goneStream.dispose();
  const gone = DeviceBuffer.alloc('f32', 8, { label: 'gone buffer' });
  gone.dispose();
  const goneHost = HostBuffer.alloc('f32', 8, { label: 'gone host' });
  goneHost.dispose();
  const goneProgram = new Program({ source: 'extern "C" __global__ void k() {}', label: 'gone program' });
  goneProgram.dispose();
  const s = new Stream({ label: 's' });
  const timed = new Event({ timing: true, label: 'timed' }).record(s);
  s.synchronize();
  made = {
    s,
    goneStream,
    buf: DeviceBuffer.alloc('f32', 100, { label: 'buf' }),
    gone,
    host: HostBuffer.alloc('f32', 100, { label: 'host' }),
    goneHost,
    managed: ManagedBuffer.alloc('f32', 16, { label: 'managed' }),
    pool: new MemoryPool({ label: 'pool' }),
    k: loadBasicKernels(),
    timed,
    untimed: new Event({ label: 'untimed' }),
    plan: FftPlan.create({ shape: [64], type: 'C2C', label: 'plan64' }),
    c64: DeviceBuffer.alloc('c64', 64, { label: 'c64' }),
    program: new Program({ source: 'extern "C" __global__ void k() {}', label: 'prog' }),
    goneProgram,
    events: new EventPool({ label: 'events' }),
  };
  return made;
}
const plain = { handle: 1n, label: 'fake', disposed: false, context: undefined };

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
  // A Device or its ordinal (the one placement rule); anything else, or an ordinal the machine lacks, is refused.
  [
    'pool device string',
    () => new MemoryPool({ device: '0' as never }),
    TypeError,
    /MemoryPool device must be a Device or an ordinal/,
  ],
  ['pool device missing', () => new MemoryPool({ device: 4096 }), RangeError, /4096/],
  ['pool trim -1', () => fx().pool.trim(-1), RangeError, /trim\(keepBytes\) must be a non-negative integer/],
  ['pool trim fraction', () => fx().pool.trim(0.5), RangeError, /trim/],
  ['pool threshold setter', () => (fx().pool.releaseThreshold = 'all' as never), RangeError, /releaseThreshold/],
  // Stream / Event
  [
    'stream priority 1.5',
    () => new Stream({ priority: 1.5 }),
    TypeError,
    /priority must be 'high', 'normal', 'low' or an integer/,
  ],
  ['stream priority word', () => new Stream({ priority: 'urgent' as never }), TypeError, /priority/],
  ['stream descriptor', () => new Stream(5 as never), TypeError, /takes a descriptor object, got number/],
  ['stream nonBlocking', () => new Stream({ nonBlocking: 'yes' as never }), TypeError, /nonBlocking must be a boolean/],
  ['stream waitEvent plain', () => fx().s.waitEvent(plain as never), TypeError, /waitEvent\(event\) must be an Event/],
  ['stream waitEvent null', () => fx().s.waitEvent(null as never), TypeError, /must be an Event, got null/],
  ['stream record plain', () => fx().s.record(plain as never), TypeError, /record\(event\) must be an Event/],
  ['stream query disposed', () => fx().goneStream.query(), DisposedError, /Stream "gone stream" was disposed/],
  ['event record plain', () => fx().untimed.record(plain as never), TypeError, /record\(stream\) must be a Stream/],
  ['event record disposed', () => fx().untimed.record(fx().goneStream), DisposedError, /"gone stream" was disposed/],
  [
    'event elapsed plain',
    () => fx().timed.elapsedSince(plain as never),
    TypeError,
    /elapsedSince\(start\) must be an Event/,
  ],
  ['event elapsed untimed', () => fx().timed.elapsedSince(fx().untimed), TypeError, /timing: true/],
  ['event elapsedMs plain end', () => Event.elapsedMs(fx().timed, plain as never), TypeError, /end must be an Event/],
  [
    'event interprocess timing',
    () => new Event({ interprocess: true, timing: true }),
    TypeError,
    /interprocess events cannot record timing/,
  ],
  ['event descriptor', () => new Event('x' as never), TypeError, /takes a descriptor object/],
  ['event pool release plain', () => fx().events.release(plain as never), TypeError, /must be given an Event/],
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
  // Device
  ['device -1', () => Device.get(-1), RangeError, /non-negative integer, got -1/],
  ['device 1.5', () => Device.get(1.5), RangeError, /got 1\.5/],
  ['device 999', () => Device.get(999), RangeError, /device 999 does not exist/],
];

describe.skipIf(!gpu.available)(
  `bad input to the runtime's GPU entry points${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
    it('has a row per case', () => {
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
    it('accepts the same calls with good input afterwards (nothing above broke the context)', async () => {
      const { buf, s } = fx();
      const x = new Float32Array(100).map(() => Math.random() + 1);
      buf.write(x, { stream: s });
      const back = new Float32Array(100);
      buf.read(back, { stream: s });
      await s.done();
      expect(Array.from(back)).toEqual(Array.from(x));
    });
  },
);
