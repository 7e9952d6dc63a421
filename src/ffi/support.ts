/** Types the generated bindings are written in. */

declare const handleBrand: unique symbol;
/**
 * An opaque CUDA handle (a koffi pointer, a bigint), branded by the C struct it points at:
 * a CUstream cannot be passed where a CUevent is expected. CUstream and cudaStream_t share
 * their brand (both point at CUstream_st), as in C.
 */
export type Handle<Tag extends string> = bigint & { readonly [handleBrand]: Tag };

/** Anything koffi passes as a raw pointer: an address, a buffer or typed array (passed in place), or null. */
export type Pointer = bigint | number | ArrayBuffer | ArrayBufferView | readonly unknown[] | null;

/** A one-element array the call writes its result into: `const out: Out<CUstream> = [null]`. */
export type Out<T> = [T | null] | (T | null)[];

/** Direction of a pointer argument: 0 in, 1 out (a single value), 2 in and out (arrays, buffers). */
export type Direction = 0 | 1 | 2;

/** [public name, ABI symbol, koffi result type, [name, koffi type, direction][], per-thread-stream symbol] */
export type FunctionDeclaration = readonly [
  name: string,
  symbol: string,
  result: string,
  params: readonly (readonly [name: string, type: string, direction: Direction])[],
  perThreadSymbol?: string,
];

/** The C result types that are a library's status: a function returning one has a checked form that throws on failure. */
export const STATUS_TYPES: readonly string[] = [
  'CUresult',
  'cudaError_t',
  'cufftResult',
  'nvrtcResult',
  'ncclResult_t',
];

/**
 * Calls whose "not ready" status (CUDA_ERROR_NOT_READY, cudaErrorNotReady) is an answer, not a
 * failure: their checked form returns true when the work is done, false while it is not, and
 * throws for any other status.
 */
export const READINESS_QUERIES = ['cuEventQuery', 'cuStreamQuery', 'cudaEventQuery', 'cudaStreamQuery'] as const;
