import {
  CUresult,
  CUresult_DESCRIPTIONS,
  cudaError_t,
  cudaError_t_DESCRIPTIONS,
  cufftResult,
  cufftResult_DESCRIPTIONS,
  ncclResult_t,
  nvrtcResult,
} from './generated/types.js';

/** A library whose status codes CudaError decodes: libcuda ('driver', CUresult), libcudart ('runtime', cudaError_t), cuFFT (cufftResult), NVRTC (nvrtcResult) or NCCL (ncclResult_t, thrown as NcclError). */
export type CudaLibraryName = 'driver' | 'runtime' | 'cufft' | 'nvrtc' | 'nccl';

/** What each ncclResult_t means (nccl.h has no description table). */
const NCCL_DESCRIPTIONS: Readonly<Record<number, string>> = {
  1: 'a call to a CUDA function failed',
  2: 'a call to the system failed (socket, memory, file descriptors, ...)',
  3: 'an internal check failed: a bug in NCCL or memory corruption',
  4: 'an argument has an invalid value',
  5: 'the call is invalid in its context (wrong rank, group, communicator state, ...)',
  6: 'a call failed on a remote peer (network error, peer process gone)',
  7: 'the operation is still in progress (non-blocking communicator)',
};

const ENUMS: Record<CudaLibraryName, Readonly<Record<string, number>>> = {
  driver: CUresult,
  runtime: cudaError_t,
  cufft: cufftResult,
  nvrtc: nvrtcResult,
  nccl: ncclResult_t,
};
const DESCRIPTIONS: Partial<Record<CudaLibraryName, Readonly<Record<number, string>>>> = {
  driver: CUresult_DESCRIPTIONS,
  runtime: cudaError_t_DESCRIPTIONS,
  cufft: cufftResult_DESCRIPTIONS,
  nccl: NCCL_DESCRIPTIONS,
};

const nameCache = new Map<CudaLibraryName, Map<number, string>>();
/** The enum name of a status code (`CUDA_ERROR_ILLEGAL_ADDRESS`), or `UNKNOWN_<code>`. */
export function statusName(library: CudaLibraryName, code: number): string {
  let names = nameCache.get(library);
  if (!names) {
    names = new Map();
    for (const [name, value] of Object.entries(ENUMS[library])) if (!names.has(value)) names.set(value, name);
    nameCache.set(library, names);
  }
  return names.get(code) ?? `UNKNOWN_${code}`;
}

/** What a status means, from the library's header (or NCCL's table above), or undefined. */
export function statusDescription(library: CudaLibraryName, code: number): string | undefined {
  return DESCRIPTIONS[library]?.[code];
}

/**
 * Errors after which the context is unusable: all in-flight work on it must fail, not wait. Exactly
 * the statuses whose driver documentation says the process is left in an inconsistent state and
 * must be relaunched (a stale handle's CONTEXT_IS_DESTROYED is not one of them).
 */
const STICKY = new Set<string>([
  'CUDA_ERROR_ILLEGAL_ADDRESS',
  'CUDA_ERROR_ILLEGAL_INSTRUCTION',
  'CUDA_ERROR_MISALIGNED_ADDRESS',
  'CUDA_ERROR_INVALID_ADDRESS_SPACE',
  'CUDA_ERROR_INVALID_PC',
  'CUDA_ERROR_LAUNCH_FAILED',
  'CUDA_ERROR_HARDWARE_STACK_ERROR',
  'CUDA_ERROR_ASSERT',
  'CUDA_ERROR_LAUNCH_TIMEOUT',
  'CUDA_ERROR_TENSOR_MEMORY_LEAK',
  'CUDA_ERROR_CONTAINED',
  'CUDA_ERROR_MPS_CLIENT_TERMINATED',
  'CUDA_ERROR_EXTERNAL_DEVICE',
  'cudaErrorIllegalAddress',
  'cudaErrorIllegalInstruction',
  'cudaErrorMisalignedAddress',
  'cudaErrorInvalidAddressSpace',
  'cudaErrorInvalidPc',
  'cudaErrorLaunchFailure',
  'cudaErrorHardwareStackError',
  'cudaErrorAssert',
  'cudaErrorLaunchTimeout',
  'cudaErrorTensorMemoryLeak',
  'cudaErrorContained',
  'cudaErrorMpsClientTerminated',
  'cudaErrorExternalDevice',
]);

/** What a CudaError's message adds to the call and status: what it was for, and the library's own wording of the error. */
export interface CudaErrorContext {
  /** What tscuda was doing: a job id, an object's label, ... */
  during?: string | undefined;
  /** A description from the library itself (cuGetErrorString), preferred over the header's. */
  description?: string | undefined;
}

/** A failed CUDA call: the numeric status, its enum name, what it means, the call and what it was for. */
export class CudaError extends Error {
  override readonly name: string = 'CudaError';
  readonly library: CudaLibraryName;
  readonly code: number;
  readonly status: string;
  readonly description: string;
  readonly call: string;
  readonly during: string | undefined;
  /** The context is broken (e.g. CUDA_ERROR_ILLEGAL_ADDRESS): every pending operation on it fails with this error. */
  readonly sticky: boolean;

  constructor(library: CudaLibraryName, code: number, call: string, context: CudaErrorContext = {}) {
    const status = statusName(library, code);
    const description = context.description ?? DESCRIPTIONS[library]?.[code] ?? '';
    super(
      `${call} failed: ${status} (${code})${description ? `: ${description}` : ''}${context.during ? ` [${context.during}]` : ''}`,
    );
    this.library = library;
    this.code = code;
    this.status = status;
    this.description = description;
    this.call = call;
    this.during = context.during;
    this.sticky = STICKY.has(status);
  }
}

/** No CUDA library could be loaded: says what was searched and what to install. */
export class CudaUnavailableError extends Error {
  override readonly name = 'CudaUnavailableError';
  constructor(
    readonly library: CudaLibraryName | 'nccl',
    readonly searched: readonly string[],
    readonly hint: string,
    readonly lastError?: string,
  ) {
    super(
      `${library} library not found (searched: ${searched.join(', ')}). ${hint}${lastError ? ` Last error: ${lastError}` : ''}`,
    );
  }
}
