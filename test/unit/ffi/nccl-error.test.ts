/**
 * NCCL through the one error and checked-call path of src/ffi (no GPU, no NCCL needed): NcclError
 * is a CudaError of library 'nccl', and the checked form of a status-returning NCCL function
 * throws it from checked.ts, not from a copy of that wrapper.
 */
import { describe, expect, it } from 'vitest';
import { checkedLibrary, statusError } from '../../../src/ffi/checked.js';
import { CudaError } from '../../../src/ffi/errors.js';
import { NcclError } from '../../../src/ffi/nccl.js';
import type { FunctionDeclaration } from '../../../src/ffi/support.js';
import { Communicator } from '../../../src/runtime/nccl/communicator.js';

describe('NcclError', () => {
  it('is a CudaError carrying the NCCL result code, its name, what it means and NCCL last-error message', () => {
    const e = new NcclError(5, 'ncclCommInitRank', { lastError: ' rank 3 joined twice ', during: 'rank 3 of 4' });
    expect(e).toBeInstanceOf(CudaError);
    expect(e).toBeInstanceOf(NcclError);
    expect(e.name).toBe('NcclError');
    expect(e.library).toBe('nccl');
    expect(e.code).toBe(5);
    expect(e.status).toBe('ncclInvalidUsage');
    expect(e.call).toBe('ncclCommInitRank');
    expect(e.during).toBe('rank 3 of 4');
    expect(e.lastError).toBe('rank 3 joined twice');
    expect(e.sticky).toBe(false);
    expect(e.message).toBe(
      'ncclCommInitRank failed: ncclInvalidUsage (5): the call is invalid in its context (wrong rank, group, communicator state, ...) — NCCL: rank 3 joined twice [rank 3 of 4]',
    );
  });

  it('is what the one status path gives for library nccl', () => {
    const e = statusError('nccl', 2, 'ncclCommInitAll', 'devices 0, 1');
    expect(e).toBeInstanceOf(NcclError);
    expect(e.status).toBe('ncclSystemError');
    expect(e.message).toBe(
      'ncclCommInitAll failed: ncclSystemError (2): a call to the system failed (socket, memory, file descriptors, ...) [devices 0, 1]',
    );
  });

  it('is thrown by the checked form built by checked.ts, out-parameters returned', () => {
    const declarations: readonly FunctionDeclaration[] = [
      [
        'ncclCommCount',
        'ncclCommCount',
        'ncclResult_t',
        [
          ['comm', 'void *', 0],
          ['count', 'int32 *', 1],
        ],
      ],
      ['ncclGetErrorString', 'ncclGetErrorString', 'const char *', [['result', 'ncclResult_t', 0]]],
    ];
    let status = 0;
    const raw = {
      ncclCommCount: (_comm: unknown, out: [number | null]): number => {
        out[0] = 7;
        return status;
      },
      ncclGetErrorString: (): string => 'not checked',
    };
    const api = checkedLibrary<{
      ncclCommCount(comm: unknown, during?: string): number;
      ncclGetErrorString(r: number): string;
    }>('nccl', raw, declarations);
    expect(api.ncclCommCount(null)).toBe(7);
    expect(api.ncclGetErrorString(0)).toBe('not checked');
    status = 4;
    expect(() => api.ncclCommCount(null)).toThrow(NcclError);
    expect(() => api.ncclCommCount(null, 'rank 0')).toThrow(
      /^ncclCommCount failed: ncclInvalidArgument \(4\).* \[rank 0\]$/,
    );
  });
});

describe('Communicator methods check their receiver before NCCL sees a handle', () => {
  const fake = { handle: 1n, rank: 0, size: 1, label: 'fake' };
  it.each([
    'allReduce',
    'broadcast',
    'reduce',
    'allGather',
    'reduceScatter',
    'send',
    'recv',
    'describe',
    'asyncError',
    'abort',
  ] as const)('%s on a plain object is a TypeError', (method) => {
    const fn = Communicator.prototype[method] as (...args: unknown[]) => unknown;
    expect(() => fn.call(fake, {}, {}, {})).toThrow(TypeError);
    expect(() => fn.call(fake, {}, {}, {})).toThrow(
      new RegExp(`Communicator ${method}: the receiver must be a Communicator, got a plain Object`),
    );
  });
});
