/**
 * Recognizing "no CUDA driver" (ffi/errors.ts's CudaUnavailableError) without importing its
 * module: that module comes with the FFI layer, which CUDA-free code (the server's error mapping,
 * the CLI's one-line answers) must not load. Matched by the class's name, as `instanceof` would
 * need the class.
 */

/** True when `error` is a CudaUnavailableError: no CUDA library (the driver) could be loaded. */
export function isCudaUnavailable(error: unknown): error is Error & { name: 'CudaUnavailableError' } {
  return error instanceof Error && error.name === 'CudaUnavailableError';
}

/** Why a server has no GPU when the driver is missing: its readiness reason and its 503 message. */
export function noDriverReason(error: Error): string {
  return `no CUDA driver: ${error.message}`;
}
