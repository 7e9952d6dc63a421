/**
 * New work refused after a sticky error. Which error was the first, and what its message adds, is
 * process-wide state kept by ffi's checked-call layer (src/ffi/sticky.ts), which sees every status.
 */
import { CudaError } from '../ffi/errors.js';
import { RESTART_HINT } from '../ffi/sticky.js';

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
