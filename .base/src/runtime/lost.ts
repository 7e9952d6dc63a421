/**
 * Sticky errors. After CUDA_ERROR_ILLEGAL_ADDRESS (and the other statuses the driver documents as
 * sticky) the driver refuses every call in the process, including retaining a new primary context
 * (measured on an H100). The first one is remembered here, process-wide: disposal turns quiet,
 * new work fails fast with ContextLostError, and the only recovery is a new process.
 */
import { CudaError } from '../ffi/errors.js';

let first: CudaError | undefined;

/** What a sticky error's message adds: the user must restart the process. */
export const RESTART_HINT = 'the CUDA context is lost for good (a sticky error): the driver refuses all further work in this process; restart the process';

/** Remembers the first sticky error of the process (later ones are echoes of it). */
export function noteSticky(error: CudaError): void {
  first ??= error;
}

/** The first sticky error this process saw, if any. */
export function processLost(): CudaError | undefined {
  return first;
}

/**
 * New work refused because an earlier sticky error broke the context: a CudaError with the
 * sticky status (`status`, `code`, `sticky: true`) whose `cause` is that first error.
 */
export class ContextLostError extends CudaError {
  override readonly name: string = 'ContextLostError';

  constructor(sticky: CudaError, where: string) {
    super(sticky.library, sticky.code, sticky.call, { during: where, description: sticky.description });
    this.message = `${where}: refused, ${RESTART_HINT}. The first error was: ${sticky.message}`;
    this.cause = sticky;
  }
}
