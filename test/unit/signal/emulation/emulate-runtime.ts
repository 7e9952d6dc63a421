/**
 * The one replacement of the runtime behind src/signal for the emulated orchestration tests
 * (*-orchestration.test.ts, orchestration-emulated-*.test.ts, complex-emulated.test.ts): device
 * buffers (of a fake context with its default stream), cuFFT plans and events become the CPU
 * stand-ins of fake-runtime.ts, and the signal and filter kernels are signal.cu compiled by g++. Import this module first in such a test file (`import './emulation/emulate-runtime.js';`):
 * the mocks are registered as it loads, before any module that imports the runtime.
 */
import { vi } from 'vitest';

vi.mock('../../../../src/runtime/memory/device-buffer.js', async () => ({
  DeviceBuffer: (await import('./fake-runtime.js')).FakeDeviceBuffer,
}));
vi.mock('../../../../src/runtime/fft/plan-cache.js', async () => ({
  FftPlanCache: (await import('./fake-runtime.js')).FakePlanCache,
}));
vi.mock('../../../../src/runtime/event.js', async () => ({
  Event: (await import('./fake-runtime.js')).FakeEvent,
}));
vi.mock('../../../../src/kernels/launchers.generated.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../../src/kernels/launchers.generated.js')>();
  const fake = await import('./fake-runtime.js');
  return {
    ...original,
    loadSignalKernels: () => fake.fakeSignalKernels(fake.emulatedKernels().so, original.SIGNAL_SIGNATURES),
    loadFilterKernels: () => fake.fakeSignalKernels(fake.emulatedKernels().so, original.FILTER_SIGNATURES),
    loadSosKernels: () => fake.fakeSignalKernels(fake.emulatedKernels().so, original.SOS_SIGNATURES),
  };
});
