/**
 * After a sticky error (process-wide state, so in a file and module graph of its own,
 * @vitest-isolate): disposal is quiet, new work gets ContextLostError telling the user to restart.
 * No GPU needed: a stand-in resource whose release fails as the driver's calls do once the context
 * is lost.
 */
import { describe, expect, it } from 'vitest';
import { CudaError } from '../../../src/ffi/errors.js';
import { CUresult } from '../../../src/ffi/generated/types.js';
import { noteSticky, processLost } from '../../../src/ffi/sticky.js';
import { ContextLostError } from '../../../src/runtime/lost.js';
import { Resource } from '../../../src/runtime/resource.js';

class Failing extends Resource {
  constructor() {
    super('Failing', 'f');
  }
  protected releaseNative(): void {
    throw new CudaError('driver', CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, 'cuStreamDestroy');
  }
}

describe('after a sticky error', () => {
  it('dispose() raises before and is quiet after (a using block unwinding after the fault)', () => {
    expect(processLost()).toBeUndefined();
    expect(() => new Failing().dispose()).toThrow(CudaError);
    const fault = new CudaError('driver', CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, 'cuEventQuery');
    noteSticky(fault);
    noteSticky(new CudaError('driver', CUresult.CUDA_ERROR_LAUNCH_FAILED, 'later')); // the first one wins
    expect(processLost()).toBe(fault);
    expect(() => new Failing().dispose()).not.toThrow();
    expect(() => {
      using f = new Failing();
      void f;
    }).not.toThrow();
  });
  it('refuses new work with ContextLostError: the sticky status, the first error as cause, and the restart', () => {
    const fault = processLost()!;
    const e = new ContextLostError(fault, 'stream "s" done()');
    expect(e).toBeInstanceOf(CudaError);
    expect(e.name).toBe('ContextLostError');
    expect(e.status).toBe('CUDA_ERROR_ILLEGAL_ADDRESS');
    expect(e.sticky).toBe(true);
    expect(e.cause).toBe(fault);
    expect(e.message).toMatch(
      /stream "s" done\(\): refused, the CUDA context is lost .* restart the process\. The first error was: cuEventQuery failed/,
    );
  });
});
