/**
 * Sticky errors, process-wide. After CUDA_ERROR_ILLEGAL_ADDRESS (and the other statuses the driver
 * documents as sticky, `CudaError.sticky`) the driver refuses every call in the process, including
 * retaining a new primary context (measured on an H100). The first one is remembered here: the
 * runtime's disposal turns quiet, new work fails fast with ContextLostError, and the only recovery
 * is a new process.
 */
import type { CudaError } from './errors.js';

let first: CudaError | undefined;

/** What a sticky error's message adds: the user must restart the process. */
export const RESTART_HINT =
  'the CUDA context is lost for good (a sticky error): the driver refuses all further work in this process; restart the process';

/** Remembers the first sticky error of the process (later ones are echoes of it). */
export function noteSticky(error: CudaError): void {
  first ??= error;
}

/** The first sticky error this process saw, if any. */
export function processLost(): CudaError | undefined {
  return first;
}

/** True for a CudaError (or anything carrying `sticky: true`, also as a cause) that broke its context. */
export function isStickyError(error: unknown): boolean {
  let e: unknown = error;
  for (let depth = 0; depth < 8 && typeof e === 'object' && e !== null; depth++) {
    if ((e as { sticky?: unknown }).sticky === true) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
