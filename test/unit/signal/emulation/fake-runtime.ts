/**
 * CPU stand-ins for the runtime pieces src/signal uses, so its real orchestration (argument order,
 * sizes, scratch, plans) runs without a GPU: device buffers are host typed arrays, cuFFT is a
 * float64 DFT (with the real plan geometry and buffer checks), and the signal kernels are
 * src/kernels/signal.cu compiled by g++ (see include/cuda_runtime.h), run once per emulated block.
 */
import koffi from 'koffi';
import { emu } from './build.js';
import { checkFftBuffers, fftGeometry, type FftPlanDescriptor } from '../../../../src/runtime/fft/geometry.js';

/** The CPU-compiled kernels (emulator.ts's build, shared by every emulation test file): `so` empty and `reason` set where g++ is missing. */
export function emulatedKernels(): { so: string; reason: string } {
  return emu;
}

type Host = Float32Array | Float64Array | Int32Array | Int16Array | Int8Array | Uint8Array;
const COMPONENTS: Record<string, number> = { c64: 2, c128: 2 };
let nextAddress = 1 << 20;

/**
 * The fake context every fake buffer belongs to, with its default stream (what the signal
 * operations resolve a missing `{ stream }` to): work "on" it runs at once, so it is always done.
 */
export const FAKE_CONTEXT = {
  label: 'emulated context',
  disposed: false,
  synchronize(): void {},
  defaultStream: {
    label: 'emulated default stream',
    isDefault: true,
    disposed: false,
    done: async (): Promise<void> => {},
    waitEvent(): void {},
  },
};

/** Event over the fake stream: the work it follows ran when it was enqueued, so it is complete at once. */
export class FakeEvent {
  record(): this {
    return this;
  }
  query(): boolean {
    return true;
  }
  synchronize(): void {}
  dispose(): void {}
}

function hostFor(dtype: string, length: number): Host {
  const n = length * (COMPONENTS[dtype] ?? 1);
  switch (dtype) {
    case 'f32':
    case 'c64':
      return new Float32Array(n).fill(Number.NaN);
    case 'f64':
    case 'c128':
      return new Float64Array(n).fill(Number.NaN);
    case 'i32':
      return new Int32Array(n);
    case 'i16':
      return new Int16Array(n);
    case 'i8':
      return new Int8Array(n);
    default:
      return new Uint8Array(n);
  }
}

/** A "device" buffer over a host typed array (NaN-filled when allocated, like poisoned memory). */
export class FakeDeviceBuffer {
  static allocations = 0;
  readonly host: Host;
  readonly address: number;
  readonly context = FAKE_CONTEXT;
  disposed = false;
  constructor(
    readonly dtype: string,
    readonly length: number,
    readonly label: string,
    shared?: Host,
  ) {
    this.host = shared ?? hostFor(dtype, length);
    this.address = nextAddress;
    nextAddress += length * 16 + 4096;
  }
  /** DeviceBuffer.view: elements offset..offset+length sharing this buffer's host array. */
  view(offset: number, length = this.length - offset): FakeDeviceBuffer {
    this.checkAlive();
    if (offset < 0 || length < 1 || offset + length > this.length)
      throw new RangeError(`fake view [${offset}, ${offset + length}) is outside "${this.label}" (${this.length})`);
    const c = COMPONENTS[this.dtype] ?? 1;
    const host = this.host.subarray(offset * c, (offset + length) * c);
    return new FakeDeviceBuffer(this.dtype, length, `${this.label}[${offset}:${offset + length}]`, host);
  }
  static alloc(dtype: string, length: number, d: { label?: string } = {}): FakeDeviceBuffer {
    FakeDeviceBuffer.allocations++;
    return new FakeDeviceBuffer(dtype, length, d.label ?? 'fake');
  }
  static from(dtype: string, data: ArrayLike<number>, d: { label?: string } = {}): FakeDeviceBuffer {
    const b = FakeDeviceBuffer.alloc(dtype, data.length / (COMPONENTS[dtype] ?? 1), d);
    b.host.set(data as ArrayLike<number>);
    return b;
  }
  checkAlive(): void {
    if (this.disposed) throw new Error(`fake buffer "${this.label}" was disposed`);
  }
  checkUsable(): void {
    this.checkAlive();
  }
  read<T extends Host>(target?: T): T {
    this.checkAlive();
    const t = (target ?? hostFor(this.dtype, this.length)) as T;
    t.set(this.host as never);
    return t;
  }
  write(data: ArrayLike<number>): this {
    this.host.set(data as never);
    return this;
  }
  memset(value: number): this {
    this.host.fill(value);
    return this;
  }
  dispose(): void {
    this.disposed = true;
  }
  [Symbol.dispose](): void {
    this.dispose();
  }
}

/** DFT of `rows` rows: real/complex in, real/complex out, unnormalised (cuFFT's conventions). */
function dft(type: string, inverse: boolean, n: number, rows: number, input: Host, output: Host): void {
  const h = Math.floor(n / 2) + 1;
  const realIn = type === 'R2C' || type === 'D2Z';
  const realOut = type === 'C2R' || type === 'Z2D';
  const sign = inverse ? 1 : -1;
  const cos = new Float64Array(n);
  const sin = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    cos[k] = Math.cos((2 * Math.PI * k) / n);
    sin[k] = sign * Math.sin((2 * Math.PI * k) / n);
  }
  const outBins = realOut ? n : realIn ? h : n;
  const tmp = new Float64Array(2 * rows * outBins);
  for (let r = 0; r < rows; r++) {
    // the full complex input row
    const re = new Float64Array(n);
    const im = new Float64Array(n);
    for (let t = 0; t < n; t++) {
      if (realIn) re[t] = input[r * n + t]!;
      else if (realOut) {
        const k = t < h ? t : n - t;
        re[t] = input[2 * (r * h + k)]!;
        im[t] = t < h ? input[2 * (r * h + k) + 1]! : -input[2 * (r * h + k) + 1]!;
        if (t === 0 || 2 * t === n) im[t] = 0;
      } else {
        re[t] = input[2 * (r * n + t)]!;
        im[t] = input[2 * (r * n + t) + 1]!;
      }
    }
    for (let k = 0; k < outBins; k++) {
      let sr = 0;
      let si = 0;
      let idx = 0;
      for (let t = 0; t < n; t++) {
        sr += re[t]! * cos[idx]! - im[t]! * sin[idx]!;
        si += re[t]! * sin[idx]! + im[t]! * cos[idx]!;
        idx += k;
        if (idx >= n) idx -= n;
      }
      tmp[2 * (r * outBins + k)] = sr;
      tmp[2 * (r * outBins + k) + 1] = si;
    }
  }
  if (realOut) for (let i = 0; i < rows * n; i++) output[i] = tmp[2 * i]!;
  else output.set(tmp as never);
}

/** FftPlanCache over the DFT above, with the real plan geometry and buffer checks. */
export class FakePlanCache {
  hits = 0;
  misses = 0;
  generation = 0;
  readonly #seen = new Set<string>();
  get(d: FftPlanDescriptor): {
    forward: (i: FakeDeviceBuffer, o?: FakeDeviceBuffer) => void;
    inverse: (i: FakeDeviceBuffer, o?: FakeDeviceBuffer) => void;
  } {
    const g = fftGeometry(d);
    const key = JSON.stringify([g.type, g.n, g.batch]);
    if (this.#seen.has(key)) this.hits++;
    else {
      this.misses++;
      this.#seen.add(key);
    }
    const run = (direction: 'forward' | 'inverse') => (i: FakeDeviceBuffer, o?: FakeDeviceBuffer) => {
      const out = o ?? i;
      i.checkAlive();
      out.checkAlive();
      checkFftBuffers(g, direction, i as never, out as never, `fake ${g.type}`);
      dft(g.type, direction === 'inverse', g.n[0]!, g.batch, i.host, out.host);
    };
    return { forward: run('forward'), inverse: run('inverse') };
  }
  /** FftPlanCache.basic: the 1-D plan of `type`, `n` points, `batch` transforms. */
  basic(context: unknown, type: FftPlanDescriptor['type'], n: number, batch: number): ReturnType<FakePlanCache['get']> {
    return this.get({ shape: [n], type, batch, context } as FftPlanDescriptor);
  }
  clear(): void {
    this.#seen.clear();
  }
}

/**
 * loadSignalKernels over the CPU-compiled kernels: each launch runs the kernel once per emulated
 * block (one thread each, or the launch's block size as threads for sos.cu's COOPERATIVE_BLOCK
 * kernels), or, for a fiber-emulated kernel (harness.cpp's emu_<name>), every thread of each
 * emulated block with the launch's block size and dynamic shared memory.
 */
export function fakeSignalKernels(so: string, signatures: Record<string, readonly string[]>): Record<string, unknown> {
  const lib = koffi.load(so);
  const setBlock = lib.func('void emu_block(unsigned int block, unsigned int grid)') as (b: number, g: number) => void;
  const setThreads = lib.func('void emu_block_threads(unsigned int threads)') as (t: number) => void;
  const setCooperative = lib.func('void emu_cooperative(unsigned int threads, unsigned int shared_bytes)') as (
    t: number,
    s: number,
  ) => void;
  const barrierDiverged = lib.func('int emu_barrier_diverged()') as () => number;
  const C: Record<string, string> = { ptr: 'void *', i32: 'int', f64: 'double', f32: 'float', u32: 'unsigned int' };
  const out: Record<string, unknown> = { module: { disposed: false, dispose() {} }, kernels: {} };
  for (const [name, params] of Object.entries(signatures)) {
    const args = params.map((t, i) => `${C[t]} a${i}`).join(', ');
    const single = lib.func(`void ${name}(${args})`) as (...a: unknown[]) => void;
    let blockwide: ((...a: unknown[]) => void) | undefined;
    try {
      blockwide = lib.func(`void emu_${name}(${args})`) as (...a: unknown[]) => void;
    } catch {
      blockwide = undefined; // no emu_<name>: a kernel of grid-stride loops, one thread per block suffices
    }
    out[name] = (config: { grid: number; block?: number; sharedMemBytes?: number }, ...args: unknown[]) => {
      if (args.length !== params.length)
        throw new TypeError(`${name}: ${args.length} arguments, expected ${params.length}`);
      const native = args.map((a, i) => {
        if (params[i] === 'ptr') {
          if (!(a instanceof FakeDeviceBuffer)) throw new TypeError(`${name} argument ${i} must be a buffer`);
          a.checkAlive();
          return a.host;
        }
        if (typeof a !== 'number' || !Number.isFinite(a))
          throw new TypeError(`${name} argument ${i} must be a finite number, got ${String(a)}`);
        if (params[i] === 'i32' && !Number.isInteger(a))
          throw new TypeError(`${name} argument ${i} must be an integer, got ${a}`);
        return a;
      });
      // Fewer emulated blocks than the real grid (each is one thread, or the launch's block size for the
      // kernels whose threads work together): the grid-stride loops cover the rest.
      const grid = Math.min(config.grid, 3);
      setThreads(config.block ?? 1);
      if (blockwide !== undefined) {
        if (config.block === undefined) throw new TypeError(`${name}: a block-cooperative launch needs its block size`);
        setCooperative(config.block, config.sharedMemBytes ?? 0);
        barrierDiverged();
      }
      for (let b = 0; b < grid; b++) {
        setBlock(b, grid);
        (blockwide ?? single)(...native);
      }
      if (blockwide !== undefined && barrierDiverged())
        throw new Error(`${name}: a __syncthreads was reached by some threads of a block only`);
    };
  }
  return out;
}
