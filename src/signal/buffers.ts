/**
 * The buffer types the signal operations take and return, in a file of their own so that the
 * operations and the workspace they share can both name them (no import cycle).
 */
import type { DeviceBuffer } from '../runtime/memory/device-buffer.js';

/** A real device buffer of one precision: f32 or f64 series. */
export type RealBuffer = DeviceBuffer<'f32'> | DeviceBuffer<'f64'>;
/** A complex device buffer: c64 (f32 real and imaginary parts) for f32 series, c128 (f64 parts) for f64 series. */
export type ComplexBuffer = DeviceBuffer<'c64'> | DeviceBuffer<'c128'>;
