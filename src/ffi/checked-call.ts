/**
 * The shape of a checked call (src/ffi/checked.ts): a library function's in-parameters, then what
 * the call was doing for its error's message. The generated `*CheckedFunctions` interfaces are
 * written in it.
 */
import type { CudaError } from './errors.js';

/**
 * The CUDA context a driver or runtime call ran in, as the layer above knows it (the runtime's
 * Context): its label ends the error's `during`, and a sticky error fails it.
 */
export interface CallContext {
  readonly label: string;
  /** A sticky error broke this context: its pending and later work must fail. */
  fail(error: CudaError): void;
}

/**
 * What a call made for a context other than the current one was doing, and that context: the
 * error names it and a sticky status fails it (the completion poller queries the events of its
 * own context, whichever is current). Made once per caller, not per call.
 */
export interface DuringInContext {
  readonly during: string;
  readonly context: CallContext;
}

/**
 * A checked library function: the raw call's in-parameters `P`, then what the call is doing for
 * its error's message (`during`), and it returns `R` (its out-parameters, or nothing) or throws
 * the library's error. `during` is a string already at hand, a DuringInContext, or a function
 * given the one to three values that follow it, run only when the call fails: a module-level
 * function such as `(event: Event, stream: Stream) => \`event "${event.label}" on stream "${stream.label}"\``
 * costs a call that succeeds nothing, where a template string would be built on every call.
 */
export interface CheckedCall<P extends readonly unknown[], R> {
  (...args: [...P, during?: string | DuringInContext]): R;
  <A>(...args: [...P, during: (a: A) => string, a: A]): R;
  <A, B>(...args: [...P, during: (a: A, b: B) => string, a: A, b: B]): R;
  <A, B, C>(...args: [...P, during: (a: A, b: B, c: C) => string, a: A, b: B, c: C]): R;
}
