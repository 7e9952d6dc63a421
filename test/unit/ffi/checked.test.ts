/**
 * The checked-call layer (src/ffi/checked.ts) without a GPU: statusError is the one way a status
 * becomes an error, so a checked library's functions (`cu()` and the others) throw the error
 * statusError builds for the same failure, named after the context the call ran in, and a sticky
 * one fails that context. How the checked functions take their arguments is checked-calls.test.ts.
 * Sticky state is process-wide: this file has its own process and module graph (@vitest-isolate).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CallContext } from '../../../src/ffi/checked-call.js';
import { checkedLibrary, setCallContextSource, statusError } from '../../../src/ffi/checked.js';
import { CudaError } from '../../../src/ffi/errors.js';
import { CUresult, cufftResult } from '../../../src/ffi/generated/types.js';
import { processLost, RESTART_HINT } from '../../../src/ffi/sticky.js';
import type { FunctionDeclaration } from '../../../src/ffi/support.js';

/** A context that records what failed it, and how often the layer asked which context is current. */
function fakeContext(label: string): CallContext & { failed: CudaError[] } {
  const failed: CudaError[] = [];
  return { label, failed, fail: (e) => void failed.push(e) };
}

let asked = 0;
function makeCurrent(context: CallContext | null): void {
  setCallContextSource(() => {
    asked++;
    return context;
  });
}

afterEach(() => makeCurrent(null));

/** A one-function driver whose status the test sets, with one out-parameter. */
function fakeDriver(): {
  api: { cuCtxGetDevice(during?: string | ((n: number) => string), n?: number): number };
  setStatus(s: number): void;
} {
  let status = 0;
  const declarations: readonly FunctionDeclaration[] = [
    ['cuCtxGetDevice', 'cuCtxGetDevice', 'CUresult', [['device', 'int32 *', 1]]],
  ];
  const raw = {
    cuCtxGetDevice: (out: [number | null]): number => {
      out[0] = 3;
      return status;
    },
  };
  return { api: checkedLibrary('driver', raw, declarations), setStatus: (s) => void (status = s) };
}

describe('statusError, the one way from a status to an error', () => {
  it('names the current context after `during`, or alone without one', () => {
    makeCurrent(fakeContext('device 2 primary context'));
    const e = statusError('driver', CUresult.CUDA_ERROR_INVALID_VALUE, 'cuMemAlloc', 'allocating 64 bytes');
    expect(e.during).toBe('allocating 64 bytes; device 2 primary context');
    expect(e.message).toBe(
      `cuMemAlloc failed: CUDA_ERROR_INVALID_VALUE (1): ${e.description} [allocating 64 bytes; device 2 primary context]`,
    );
    expect(statusError('driver', CUresult.CUDA_ERROR_INVALID_VALUE, 'cuMemGetInfo').during).toBe(
      'device 2 primary context',
    );
  });

  it('uses the context it is given over the current one (the completion poller queries its own context)', () => {
    makeCurrent(fakeContext('device 0 primary context'));
    expect(
      statusError(
        'driver',
        CUresult.CUDA_ERROR_INVALID_HANDLE,
        'cuEventQuery',
        'completion of work',
        fakeContext('device 1'),
      ).during,
    ).toBe('completion of work; device 1');
    expect(
      statusError('driver', CUresult.CUDA_ERROR_INVALID_HANDLE, 'cuEventQuery', 'completion of work', null).during,
    ).toBe('completion of work');
  });

  it('leaves cuFFT, NVRTC and NCCL errors as they were: no context in them', () => {
    makeCurrent(fakeContext('device 0 primary context'));
    const e = statusError('cufft', cufftResult.CUFFT_INVALID_SIZE, 'cufftMakePlanMany', 'planning "p"');
    expect(e.message).toMatch(/^cufftMakePlanMany failed: CUFFT_INVALID_SIZE \(\d+\)(: .+)? \[planning "p"\]$/);
    expect(statusError('nvrtc', 6, 'nvrtcCompileProgram').during).toBeUndefined();
    expect(statusError('nccl', 4, 'ncclSend', 'rank 0').during).toBe('rank 0');
  });

  it('costs a checked call that succeeds one comparison: no context asked for, no `during` described', () => {
    const { api, setStatus } = fakeDriver();
    makeCurrent(fakeContext('device 0 primary context'));
    asked = 0;
    let described = 0;
    const during = (n: number): string => (described++, `hot path ${n}`);
    for (let i = 0; i < 1000; i++) api.cuCtxGetDevice(during, i);
    expect([asked, described]).toEqual([0, 0]);
    setStatus(CUresult.CUDA_ERROR_INVALID_VALUE);
    expect(() => api.cuCtxGetDevice(during, 7)).toThrow(/\[hot path 7; device 0 primary context\]$/);
    expect([asked, described]).toEqual([1, 1]);
  });
});

describe('a checked library (cu() and the others) throws what statusError builds', () => {
  it('returns the out-parameter on success and the same message as the runtime path on failure', () => {
    const { api, setStatus } = fakeDriver();
    makeCurrent(fakeContext('device 0 primary context'));
    expect(api.cuCtxGetDevice()).toBe(3);
    setStatus(CUresult.CUDA_ERROR_INVALID_CONTEXT);
    let thrown: unknown;
    try {
      api.cuCtxGetDevice();
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(CudaError);
    expect((thrown as CudaError).message).toBe(
      statusError('driver', CUresult.CUDA_ERROR_INVALID_CONTEXT, 'cuCtxGetDevice').message,
    );
    expect((thrown as CudaError).during).toBe('device 0 primary context');
  });

  it('a sticky status through the checked form fails the current context and is the process-wide first, with the restart hint', () => {
    const { api, setStatus } = fakeDriver();
    const context = fakeContext('device 0 primary context');
    makeCurrent(context);
    expect(processLost()).toBeUndefined();
    setStatus(CUresult.CUDA_ERROR_ILLEGAL_ADDRESS);
    expect(() => api.cuCtxGetDevice()).toThrow(CudaError);
    const [first] = context.failed;
    expect(first).toMatchObject({ status: 'CUDA_ERROR_ILLEGAL_ADDRESS', sticky: true, call: 'cuCtxGetDevice' });
    expect(first!.message.endsWith(` — ${RESTART_HINT}`)).toBe(true);
    expect(processLost()).toBe(first);
  });
});
