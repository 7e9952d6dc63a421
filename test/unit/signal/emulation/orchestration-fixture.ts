/**
 * The shared setup of the emulated orchestration tests (orchestration-emulated-*.test.ts): tolerances,
 * why they skip, and moving series in and out of the fake device buffers.
 */

import type { Precision } from '../../../../src/runtime/fft/precision.js';
import { scipy } from '../../../gpu/signal/scipy.js';
import { emulatedKernels, FakeDeviceBuffer } from './fake-runtime.js';

/** The precision of a case. */
type P = Precision;
/** Relative L2 tolerance by precision. */
export const TOL: Record<P, number> = { f32: 1e-5, f64: 1e-12 };
const emu = emulatedKernels();
/** Why these tests skip here (no g++, or no scipy), or empty. */
export const skip = !emu.so ? emu.reason : !scipy.ok ? scipy.reason : '';

// The fakes stand in for DeviceBuffer: the casts below are the test's, not the library's.
export type Buf = ReturnType<typeof FakeDeviceBuffer.alloc>;
/** A fake device buffer holding `x` in precision `p`. */
export const upload = (p: P, x: Float64Array): Buf => FakeDeviceBuffer.from(p, p === 'f32' ? Float32Array.from(x) : x);
/** The values the kernels see, as float64 (f32 inputs rounded). */
export const seen = (p: P, x: Float64Array): Float64Array =>
  p === 'f32' ? Float64Array.from(Float32Array.from(x)) : x;
/** A fake device buffer's contents as float64. */
export const host = (b: unknown): Float64Array => Float64Array.from((b as Buf).host as ArrayLike<number>);
/** A fake buffer where src/signal takes a DeviceBuffer. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const asDevice = (b: Buf): any => b;
