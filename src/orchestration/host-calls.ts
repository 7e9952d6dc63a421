/**
 * How the Coordinator calls user code: errors normalised to Error, promises detected, callbacks
 * isolated from the bookkeeping, and a host step in flight bounded by its timeout or signal.
 */
import { OperationTimeoutError } from './errors.js';
import type { Operation } from './operation.js';
import { clip } from '../runtime/value-checks.js';

/** `e` as an Error (a thrown string or value wrapped). */
export function toError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/** Whether `x` is a promise (or any thenable). */
export function isThenable(x: unknown): x is PromiseLike<unknown> {
  return typeof x === 'object' && x !== null && typeof (x as { then?: unknown }).then === 'function';
}

/**
 * Calls a user callback (onComplete, onStreamComplete) from the bookkeeping. Its error must
 * neither break the bookkeeping nor crash the process: it was re-thrown in a microtask, an
 * uncaughtException that ended the process over a logging callback. It is reported instead as a
 * process warning (code TSCUDA_CALLBACK_FAILED) naming the owner, the callback and its subject
 * (`coordinator: onComplete of operation "g"`), visible on stderr and to `process.on('warning')`.
 */
export function callSafely(
  callback: (error?: Error) => void,
  error: Error | undefined,
  owner: string,
  callbackName: 'onComplete' | 'onStreamComplete',
  name: string,
): void {
  try {
    callback(error);
  } catch (e) {
    try {
      // The name is put together only here: completions call this once per operation.
      const what = `${owner}: ${callbackName === 'onComplete' ? `onComplete of operation "${name}"` : `onStreamComplete callback of stream "${name}"`}`;
      const message = e instanceof Error ? e.message : String(e);
      const stack = e instanceof Error && typeof e.stack === 'string' ? e.stack : undefined;
      process.emitWarning(`${what} threw: ${clip(message)}`, {
        code: 'TSCUDA_CALLBACK_FAILED',
        ...(stack === undefined ? {} : { detail: stack }),
      });
    } catch {
      // A value whose message or String() throws cannot be described: the callback's failure is still not ours to raise.
    }
  }
}

/** The error a host step fails with when its signal aborts: the signal's reason, or an OperationTimeoutError saying so. */
export function abortError(label: string, op: Operation, signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error
    ? reason
    : new OperationTimeoutError(
        `${label}: host step "${op.name}" was aborted${reason === undefined ? '' : `: ${String(reason)}`}`,
        op.id,
        { cause: reason },
      );
}

/** Bounds a host step in flight: its timeout or its signal calls `fail` (its promise is then ignored); `op.cancelGuard` undoes both. */
export function guardHostStep(
  label: string,
  op: Operation,
  timeoutMs: number | undefined,
  signal: AbortSignal | undefined,
  fail: (error: Error) => void,
): void {
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(
          () =>
            fail(
              new OperationTimeoutError(
                `${label}: host step "${op.name}" did not settle within ${timeoutMs} ms`,
                op.id,
              ),
            ),
          timeoutMs,
        );
  const onAbort = signal === undefined ? undefined : (): void => fail(abortError(label, op, signal));
  if (onAbort) signal!.addEventListener('abort', onAbort, { once: true });
  op.cancelGuard = () => {
    if (timer !== undefined) clearTimeout(timer);
    if (onAbort) signal!.removeEventListener('abort', onAbort);
  };
}
