/**
 * The errors the runtime's objects throw when the library says no, with no GPU: the raw driver and
 * cuFFT are replaced by fakes (fake-driver.ts) that answer success, filling out-parameters, except
 * for the calls a test makes fail. What is checked is the whole message, class and fields a user
 * sees (the call, the status, what it was doing, the context it ran in) and what a sticky status
 * does to the context and the process. Sticky state is process-wide, so the sticky case runs last.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { CudaError } from '../../../src/ffi/errors.js';
import { CUresult, cufftResult } from '../../../src/ffi/generated/types.js';
import { failures } from './fake-driver.js';

vi.mock('../../../src/ffi/api.js', async (importOriginal) => ({
  ...(await importOriginal<object>()),
  ...(await import('./fake-driver.js')).fakeApi(),
}));

const { Device, Stream, Event, FftPlan, ContextLostError } = await import('../../../src/runtime/index.js');
const { processLost } = await import('../../../src/ffi/sticky.js');

/** The error `fn` throws. */
function thrown(fn: () => unknown): CudaError {
  try {
    fn();
  } catch (e) {
    return e as CudaError;
  }
  throw new Error('expected a throw');
}

const CONTEXT = 'device 0 primary context';

describe('errors of runtime calls (fake driver and cuFFT)', () => {
  const device = Device.get(0);
  const stream = new Stream({ device, label: 's' });
  afterAll(() => failures.clear());

  it('a failed driver call names the call, the status and its meaning, what it was doing and the current context', () => {
    failures.set('cuStreamSynchronize', CUresult.CUDA_ERROR_INVALID_HANDLE);
    const e = thrown(() => stream.synchronize());
    failures.clear();
    expect(e).toBeInstanceOf(CudaError);
    expect(e.name).toBe('CudaError');
    expect(e).toMatchObject({
      library: 'driver',
      code: 400,
      status: 'CUDA_ERROR_INVALID_HANDLE',
      call: 'cuStreamSynchronize',
      sticky: false,
    });
    expect(e.during).toBe(`stream "s"; ${CONTEXT}`);
    expect(e.message).toBe(
      `cuStreamSynchronize failed: CUDA_ERROR_INVALID_HANDLE (400): ${e.description} [stream "s"; ${CONTEXT}]`,
    );
    expect(e.description).toMatch(/handle/);
  });

  it('a call given no `during` is named with the context alone', () => {
    failures.set('cuMemGetInfo', CUresult.CUDA_ERROR_INVALID_VALUE);
    const e = thrown(() => device.context.memoryInfo());
    failures.clear();
    expect(e.during).toBe(CONTEXT);
    expect(e.message).toMatch(
      new RegExp(`^cuMemGetInfo failed: CUDA_ERROR_INVALID_VALUE \\(1\\): .+ \\[${CONTEXT}\\]$`),
    );
  });

  it('the hot paths build the same message (event record, elapsed time)', () => {
    const start = new Event({ device, label: 'a', timing: true });
    const end = new Event({ device, label: 'b', timing: true });
    failures.set('cuEventRecord', CUresult.CUDA_ERROR_INVALID_VALUE);
    expect(thrown(() => end.record(stream)).message).toMatch(
      /^cuEventRecord failed: CUDA_ERROR_INVALID_VALUE \(1\): .+ \[event "b" on stream "s"; device 0 primary context\]$/,
    );
    failures.clear();
    failures.set('cuEventElapsedTime', CUresult.CUDA_ERROR_NOT_READY);
    expect(thrown(() => end.elapsedSince(start)).during).toBe(`"a" -> "b"; ${CONTEXT}`);
    failures.clear();
    expect(end.elapsedSince(start)).toBe(1.5);
  });

  it('a cuFFT error names the plan and is not given the context', () => {
    failures.set('cufftMakePlanMany', cufftResult.CUFFT_INVALID_SIZE);
    const e = thrown(() => FftPlan.create({ type: 'R2C', shape: [64], batch: 2, device, label: 'p' }));
    failures.clear();
    expect(e).toBeInstanceOf(CudaError);
    expect(e).toMatchObject({
      library: 'cufft',
      status: 'CUFFT_INVALID_SIZE',
      call: 'cufftMakePlanMany',
      sticky: false,
    });
    expect(e.message).toMatch(/^cufftMakePlanMany failed: CUFFT_INVALID_SIZE \(\d+\)(: .+)? \[planning "p" .+\]$/);
    expect(e.message).not.toContain(CONTEXT);
  });

  it('a sticky status adds the restart hint, fails that context (new work is refused) and is the process-wide first', async () => {
    expect(processLost()).toBeUndefined();
    failures.set('cuEventQuery', CUresult.CUDA_ERROR_NOT_READY);
    const pending = stream.done();
    failures.set('cuStreamSynchronize', CUresult.CUDA_ERROR_ILLEGAL_ADDRESS);
    const e = thrown(() => stream.synchronize());
    expect(e.sticky).toBe(true);
    expect(e.message).toMatch(
      /^cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS \(700\): .+ \[stream "s"; device 0 primary context\] — the CUDA context is lost for good .+ restart the process$/,
    );
    expect(processLost()).toBe(e);
    expect(device.context.stickyError).toBe(e);
    await expect(pending).rejects.toBe(e);
    await expect(device.context.lost).rejects.toBe(e);
    const refused = thrown(() => stream.synchronize());
    expect(refused).toBeInstanceOf(ContextLostError);
    expect(refused.cause).toBe(e);
  });
});
