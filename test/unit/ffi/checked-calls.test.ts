/**
 * How a checked function (src/ffi/checked.ts, the shape of src/ffi/checked-call.ts) takes its
 * arguments, without a GPU: the raw function gets exactly its own arguments whatever their number,
 * `during` and its values only reach the error, readiness queries answer true or false, the
 * pointer form passes out-parameters in place, and bestEffort drops only a library's error.
 * Its sticky case sets the process's first sticky error: this file has a module graph of its own
 * (@vitest-isolate).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CallContext } from '../../../src/ffi/checked-call.js';
import { bestEffort, checkedLibrary, setCallContextSource } from '../../../src/ffi/checked.js';
import { CudaError } from '../../../src/ffi/errors.js';
import { CUresult, cudaError_t } from '../../../src/ffi/generated/types.js';
import type { FunctionDeclaration } from '../../../src/ffi/support.js';

type Call = (...args: unknown[]) => unknown;

/** A context that records what failed it. */
function fakeContext(label: string): CallContext & { failed: CudaError[] } {
  const failed: CudaError[] = [];
  return { label, failed, fail: (e) => void failed.push(e) };
}

afterEach(() => setCallContextSource(() => null));

/** A status function of `arity` in-parameters, declared and bound to a raw function that records what it got. */
function recording(arity: number, status: () => number = () => 0): { call: Call; got: unknown[][] } {
  const got: unknown[][] = [];
  const params = Array.from({ length: arity }, (_, i) => [`p${i}`, 'int32', 0] as const);
  const declarations: readonly FunctionDeclaration[] = [['cuFake', 'cuFake', 'CUresult', params]];
  const raw = {
    cuFake: (...args: unknown[]): number => {
      got.push(args);
      return status();
    },
  };
  return { call: checkedLibrary<Record<string, Call>>('driver', raw, declarations).cuFake!, got };
}

describe('a checked function without out-parameters', () => {
  it.each(Array.from({ length: 17 }, (_, arity) => arity))(
    'of %i parameters passes exactly its arguments to the raw function, whatever follows them',
    (arity) => {
      const { call, got } = recording(arity);
      const args = Array.from({ length: arity }, (_, i) => 100 + i);
      expect(call(...args)).toBeUndefined();
      expect(call(...args, 'what it does')).toBeUndefined();
      expect(call(...args, (a: number, b: number, c: number) => `${a}${b}${c}`, 1, 2, 3)).toBeUndefined();
      expect(got).toEqual([args, args, args]);
    },
  );

  it.each([0, 3, 12, 16])('of %i parameters throws with `during` described from the values after it', (arity) => {
    let status = 0;
    const { call } = recording(arity, () => status);
    const args = Array.from({ length: arity }, () => 0);
    status = CUresult.CUDA_ERROR_INVALID_VALUE;
    expect(() => call(...args)).toThrow(/^cuFake failed: CUDA_ERROR_INVALID_VALUE \(1\)[^[]*$/);
    expect(() => call(...args, 'planning')).toThrow(/ \[planning\]$/);
    expect(() => call(...args, (a: string) => `one ${a}`, 'x')).toThrow(/ \[one x\]$/);
    expect(() => call(...args, (a: string, b: number) => `two ${a} ${b}`, 'x', 2)).toThrow(/ \[two x 2\]$/);
    expect(() => call(...args, (a: string, b: number, c: boolean) => `three ${a} ${b} ${c}`, 'x', 2, true)).toThrow(
      / \[three x 2 true\]$/,
    );
  });

  it('names the current context after `during`, or the one a DuringInContext gives, which a sticky status then fails', () => {
    let status: number = CUresult.CUDA_ERROR_INVALID_HANDLE;
    const { call } = recording(1, () => status);
    const current = fakeContext('device 0');
    const other = fakeContext('device 1');
    setCallContextSource(() => current);
    expect(() => call(0, 'completion of work')).toThrow(/ \[completion of work; device 0\]$/);
    expect(() => call(0, { during: 'completion of work', context: other })).toThrow(
      / \[completion of work; device 1\]$/,
    );
    status = CUresult.CUDA_ERROR_ILLEGAL_ADDRESS;
    expect(() => call(0, { during: 'completion of work', context: other })).toThrow(CudaError);
    expect(current.failed).toEqual([]);
    expect(other.failed.map((e) => e.status)).toEqual(['CUDA_ERROR_ILLEGAL_ADDRESS']);
  });
});

describe('a readiness query', () => {
  it.each([
    [
      'driver',
      'cuEventQuery',
      CUresult.CUDA_ERROR_NOT_READY,
      CUresult.CUDA_ERROR_INVALID_HANDLE,
      'CUDA_ERROR_INVALID_HANDLE',
    ],
    [
      'runtime',
      'cudaStreamQuery',
      cudaError_t.cudaErrorNotReady,
      cudaError_t.cudaErrorInvalidResourceHandle,
      'cudaErrorInvalidResourceHandle',
    ],
  ] as const)(
    'of the %s (%s) is true when done, false while not ready, and throws for anything else',
    (library, name, notReady, bad, badName) => {
      let status = 0;
      const declarations: readonly FunctionDeclaration[] = [
        [name, name, library === 'driver' ? 'CUresult' : 'cudaError_t', [['h', 'void *', 0]]],
      ];
      const raw = { [name]: (): number => status };
      const query = checkedLibrary<Record<string, Call>>(library, raw, declarations)[name]!;
      expect(query(null)).toBe(true);
      status = notReady;
      expect(query(null, (n: string) => `event "${n}"`, 'e')).toBe(false);
      status = bad;
      expect(() => query(null, (n: string) => `event "${n}"`, 'e')).toThrow(
        expect.objectContaining({ status: badName, call: name, during: 'event "e"' }) as Error,
      );
    },
  );
});

describe('out-parameters', () => {
  const declarations: readonly FunctionDeclaration[] = [
    [
      'cuMemAlloc',
      'cuMemAlloc_v2',
      'CUresult',
      [
        ['dptr', 'uint64 *', 1],
        ['bytesize', 'uint64', 0],
      ],
    ],
    ['cuGetErrorText', 'cuGetErrorText', 'const char *', [['code', 'int32', 0]]],
  ];
  const raw = {
    cuMemAlloc: (dptr: BigUint64Array | [unknown], bytes: number): number => {
      dptr[0] = Array.isArray(dptr) ? 4096 + bytes : BigInt(4096 + bytes);
      return bytes > 1024 ? CUresult.CUDA_ERROR_OUT_OF_MEMORY : 0;
    },
    cuGetErrorText: (code: number): string => `raw ${code}`,
  };

  it('come back from the checked form, which takes only the in-parameters and then `during`', () => {
    const api = checkedLibrary<Record<string, Call>>('driver', raw, declarations);
    expect(api.cuMemAlloc!(16)).toBe(4112);
    expect(() => api.cuMemAlloc!(2048, (n: number) => `allocating ${n} bytes`, 2048)).toThrow(
      / \[allocating 2048 bytes\]$/,
    );
  });

  it('are written in place by the pointer form, which takes every parameter in order', () => {
    const api = checkedLibrary<Record<string, Call>>('driver', raw, declarations, { outParamsAsPointers: true });
    const cell = new BigUint64Array(1);
    expect(api.cuMemAlloc!(cell, 16, 'allocating')).toBeUndefined();
    expect(cell[0]).toBe(4112n);
    expect(() => api.cuMemAlloc!(cell, 2048, 'allocating')).toThrow(/CUDA_ERROR_OUT_OF_MEMORY.* \[allocating\]$/);
  });

  it('leave a function that returns no status as it is', () => {
    expect(checkedLibrary<Record<string, Call>>('driver', raw, declarations).cuGetErrorText).toBe(raw.cuGetErrorText);
  });
});

describe('bestEffort', () => {
  const failing = (): never => {
    throw new CudaError('driver', CUresult.CUDA_ERROR_INVALID_VALUE, 'cuEventDestroy');
  };

  it("returns what the calls return, the fallback for a library's error, and lets any other error through", () => {
    expect(bestEffort(() => 3, 0)).toBe(3);
    expect(bestEffort(failing, 'fallback')).toBe('fallback');
    expect(() =>
      bestEffort(() => {
        throw new TypeError('a bug');
      }, undefined),
    ).toThrow(TypeError);
  });
});
