/**
 * src/kernels/signal.cu compiled for the CPU (g++, with include/cuda_runtime.h standing in for
 * CUDA), loaded through koffi, with float64 DFTs in place of cuFFT: the CUDA-free tests drive the
 * kernels through it the way src/signal drives them on the GPU.
 */
import koffi from 'koffi';
import { FILTER_SIGNATURES, SIGNAL_SIGNATURES, SOS_SIGNATURES } from '../../../../src/kernels/launchers.generated.js';
import { boundaryCode, detrendCode, type SpectralGeometry } from '../../../../src/signal/geometry.js';
import { emu } from './build.js';

export { emu };

/** The precisions the kernels come in. */
export type P = 'f32' | 'f64';
/** A host array of precision P. */
export type Arr = Float32Array | Float64Array;

const C_TYPES: Record<string, string> = {
  ptr: 'void *',
  i32: 'int',
  f64: 'double',
  f32: 'float',
  u32: 'unsigned int',
  i64: 'int64_t',
};
let kernels: Record<string, (...args: unknown[]) => void> = {};
let setBlock: (block: number, grid: number) => void = () => {};
let setThreads: (threads: number) => void = () => {};
let cooperative: Record<string, (...args: unknown[]) => void> = {};
let setCooperative: (threads: number, sharedBytes: number) => void = () => {};
let barrierDiverged: () => number = () => 0;

/** Runs kernel `name` over an emulated grid of `grid` blocks of one thread. */
export function launch(name: string, ...args: unknown[]): void {
  launchBlocks(3, 1, name, ...args);
}

/** Runs kernel `name` over `grid` emulated blocks of `threads` threads (threads > 1: the COOPERATIVE_BLOCK kernels of sos.cu). */
export function launchBlocks(grid: number, threads: number, name: string, ...args: unknown[]): void {
  setThreads(threads);
  for (let b = 0; b < grid; b++) {
    setBlock(b, grid);
    kernels[name]!(...args);
  }
}

/**
 * Runs block-cooperative kernel `name` (harness.cpp's emu_<name>: dynamic shared memory, __syncthreads)
 * over `grid` blocks of `threads` threads each, every thread of a block emulated as a fiber; throws
 * where a barrier diverged (some threads of a block reached it, others ended).
 */
export function launchCooperative(
  name: string,
  grid: number,
  threads: number,
  sharedBytes: number,
  ...args: unknown[]
): void {
  const kernel = cooperative[name];
  if (kernel === undefined) throw new Error(`${name} has no cooperative emulation (harness.cpp COOPERATIVE)`);
  setCooperative(threads, sharedBytes);
  barrierDiverged();
  for (let b = 0; b < grid; b++) {
    setBlock(b, grid);
    kernel(...args);
  }
  if (barrierDiverged()) throw new Error(`${name}: a __syncthreads was reached by some threads of a block only`);
}

export const arr = (p: P, n: number): Arr => (p === 'f32' ? new Float32Array(n) : new Float64Array(n)).fill(Number.NaN);
export const typed = (p: P, v: ArrayLike<number>): Arr => (p === 'f32' ? Float32Array.from(v) : Float64Array.from(v));

/** Rows of real samples -> one-sided spectra (interleaved), float64 DFT, stored in precision p. */
export function rfftRows(p: P, x: Arr, rows: number, n: number): Arr {
  const h = Math.floor(n / 2) + 1;
  const out = arr(p, 2 * rows * h);
  for (let r = 0; r < rows; r++)
    for (let k = 0; k < h; k++) {
      let re = 0;
      let im = 0;
      for (let t = 0; t < n; t++) {
        const a = (-2 * Math.PI * ((k * t) % n)) / n;
        re += x[r * n + t]! * Math.cos(a);
        im += x[r * n + t]! * Math.sin(a);
      }
      out[2 * (r * h + k)] = re;
      out[2 * (r * h + k) + 1] = im;
    }
  return out;
}

/** Complex rows (interleaved) -> DFT (sign -1 forward, +1 inverse, unnormalised like cuFFT), in place semantics. */
export function cdftRows(p: P, x: Arr, rows: number, n: number, sign: number): Arr {
  const out = arr(p, 2 * rows * n);
  for (let r = 0; r < rows; r++)
    for (let k = 0; k < n; k++) {
      let re = 0;
      let im = 0;
      for (let t = 0; t < n; t++) {
        const a = (sign * 2 * Math.PI * ((k * t) % n)) / n;
        const xr = x[2 * (r * n + t)]!;
        const xi = x[2 * (r * n + t) + 1]!;
        re += xr * Math.cos(a) - xi * Math.sin(a);
        im += xr * Math.sin(a) + xi * Math.cos(a);
      }
      out[2 * (r * n + k)] = re;
      out[2 * (r * n + k) + 1] = im;
    }
  return out;
}

/** C2R of rows of n/2+1 bins (Hermitian, DC/Nyquist imaginary parts ignored), unnormalised. */
export function irfftRows(p: P, s: Arr, rows: number, n: number): Arr {
  const h = Math.floor(n / 2) + 1;
  const out = arr(p, rows * n);
  for (let r = 0; r < rows; r++)
    for (let t = 0; t < n; t++) {
      let acc = 0;
      for (let k = 0; k < n; k++) {
        const kk = k < h ? k : n - k;
        const re = s[2 * (r * h + kk)]!;
        let im = k < h ? s[2 * (r * h + kk) + 1]! : -s[2 * (r * h + kk) + 1]!;
        if (k === 0 || 2 * k === n) im = 0;
        const a = (2 * Math.PI * ((k * t) % n)) / n;
        acc += re * Math.cos(a) - im * Math.sin(a);
      }
      out[r * n + t] = acc;
    }
  return out;
}

/** What stft.ts's framesSpectra enqueues. */
export function framesSpectra(p: P, x: Arr, batch: number, g: SpectralGeometry): Arr {
  const rows = batch * g.frames;
  const frames = arr(p, rows * g.nfft);
  launch(
    `frame_${p}`,
    x,
    frames,
    typed(p, g.window),
    g.length,
    batch,
    g.nperseg,
    g.nfft,
    g.hop,
    g.frames,
    g.extension,
    boundaryCode(g.boundary),
    detrendCode(g.detrend),
  );
  return rfftRows(p, frames, rows, g.nfft);
}

/** Loads the compiled kernels (call once, in beforeAll, when `emu.so` is set). */
export function loadEmulatedKernels(): void {
  const lib = koffi.load(emu.so);
  setBlock = lib.func('void emu_block(unsigned int block, unsigned int grid)') as (b: number, g: number) => void;
  setThreads = lib.func('void emu_block_threads(unsigned int threads)') as (t: number) => void;
  setCooperative = lib.func('void emu_cooperative(unsigned int threads, unsigned int shared_bytes)') as (
    t: number,
    s: number,
  ) => void;
  barrierDiverged = lib.func('int emu_barrier_diverged()') as () => number;
  kernels = {};
  cooperative = {};
  for (const [name, params] of [
    ...Object.entries(SIGNAL_SIGNATURES),
    ...Object.entries(FILTER_SIGNATURES),
    ...Object.entries(SOS_SIGNATURES),
  ]) {
    const args = params.map((t, i) => `${C_TYPES[t]} a${i}`).join(', ');
    kernels[name] = lib.func(`void ${name}(${args})`) as (...args: unknown[]) => void;
    const emulated = cooperativeSymbol(lib, name, args);
    if (emulated !== undefined) cooperative[name] = emulated;
  }
}

/** harness.cpp's emu_<name>, the block-cooperative emulation of kernel `name`, where it has one. */
function cooperativeSymbol(
  lib: ReturnType<typeof koffi.load>,
  name: string,
  args: string,
): ((...args: unknown[]) => void) | undefined {
  try {
    return lib.func(`void emu_${name}(${args})`) as (...args: unknown[]) => void;
  } catch {
    return undefined; // koffi throws for a symbol the library lacks: a kernel of one thread per block
  }
}
