/**
 * Device-rooted factories, as cuda.core and WebGPU have them: `device.createStream()`,
 * `device.createEvent()`, `device.alloc()`, `device.allocHost()`, `device.createFftPlan()`,
 * `device.loadModule()`. Each is the constructor with `{ device: this }` filled in.
 *
 * They live here, added to Device's prototype, so device.ts does not import the classes that
 * import it (no import cycle); the runtime's index imports this file once.
 */
import { Device } from './device.js';
import { Event, type EventDescriptor } from './event.js';
import { FftPlan } from './fft/plan.js';
import type { FftPlanDescriptor, FftType } from './fft/geometry.js';
import { DeviceBuffer, type DeviceBufferDescriptor } from './memory/device-buffer.js';
import type { DType } from './memory/dtype.js';
import { HostBuffer, type HostBufferDescriptor } from './memory/host-buffer.js';
import { Module, type ModuleDescriptor } from './module.js';
import { Stream, type StreamDescriptor } from './stream.js';

declare module './device.js' {
  interface Device {
    /** A new stream on this device (`new Stream({ ...descriptor, device: this })`). */
    createStream(descriptor?: Omit<StreamDescriptor, 'device' | 'context'>): Stream;
    /** A new event on this device. */
    createEvent(descriptor?: Omit<EventDescriptor, 'device' | 'context'>): Event;
    /** Device memory of `length` elements on this device (stream-ordered when `stream` is given). */
    alloc<T extends DType>(dtype: T, length: number, descriptor?: Omit<DeviceBufferDescriptor, 'device' | 'context'>): DeviceBuffer<T>;
    /** Pinned host memory registered with this device's context. */
    allocHost<T extends DType>(dtype: T, length: number, descriptor?: Omit<HostBufferDescriptor, 'device' | 'context'>): HostBuffer<T>;
    /** A cuFFT plan on this device. */
    createFftPlan<T extends FftType>(descriptor: Omit<FftPlanDescriptor<T>, 'device' | 'context'>): FftPlan<T>;
    /** Loads a fatbin, cubin or PTX image into this device's context. */
    loadModule(descriptor: Omit<ModuleDescriptor, 'device' | 'context'>): Module;
  }
}

Device.prototype.createStream = function (this: Device, descriptor = {}) {
  return new Stream({ ...descriptor, device: this });
};
Device.prototype.createEvent = function (this: Device, descriptor = {}) {
  return new Event({ ...descriptor, device: this });
};
Device.prototype.alloc = function <T extends DType>(this: Device, dtype: T, length: number, descriptor: Omit<DeviceBufferDescriptor, 'device' | 'context'> = {}) {
  return DeviceBuffer.alloc(dtype, length, { ...descriptor, device: this });
};
Device.prototype.allocHost = function <T extends DType>(this: Device, dtype: T, length: number, descriptor: Omit<HostBufferDescriptor, 'device' | 'context'> = {}) {
  return HostBuffer.alloc(dtype, length, { ...descriptor, device: this });
};
Device.prototype.createFftPlan = function <T extends FftType>(this: Device, descriptor: Omit<FftPlanDescriptor<T>, 'device' | 'context'>) {
  return FftPlan.create<T>({ ...descriptor, device: this } as FftPlanDescriptor<T>);
};
Device.prototype.loadModule = function (this: Device, descriptor: Omit<ModuleDescriptor, 'device' | 'context'>) {
  return Module.load({ ...descriptor, device: this });
};
