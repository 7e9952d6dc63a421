/**
 * The one path from a library status to an exception (docs/design.md, Errors): every layer above
 * calls `checkStatus` or `statusError`, never builds a CudaError from a status itself.
 */
import { nvrtc } from './api.js';
import { CudaError, type CudaLibraryName } from './errors.js';

/** NVRTC's own description of a status (its header has none), or undefined. The other libraries' come from their headers. */
function libraryDescription(library: CudaLibraryName, status: number): string | undefined {
  if (library !== 'nvrtc') return undefined;
  try {
    return nvrtc().nvrtcGetErrorString(status as never) ?? undefined;
  } catch {
    return undefined;
  }
}

/** The CudaError for a failed call: status, enum name, the library's own description, the call, what it was doing. */
export function statusError(library: CudaLibraryName, status: number, call: string, during?: string): CudaError {
  const description = libraryDescription(library, status);
  return new CudaError(library, status, call, { ...(during === undefined ? {} : { during }), ...(description === undefined ? {} : { description }) });
}

/** Throws the CudaError of a failed status; one comparison when it succeeded. */
export function checkStatus(library: CudaLibraryName, status: number, call: string, during?: string): void {
  if (status !== 0) throw statusError(library, status, call, during);
}
