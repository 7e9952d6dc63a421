/**
 * The checked-call layer (cudarc's `result` over `sys`): the one way a library status becomes an
 * exception (docs/design.md, Errors), for every library (driver, runtime, cuFFT, NVRTC, NCCL) and
 * every caller. `statusError` builds the error; `cu()`, `cudart()`, `cufftChecked()`,
 * `nvrtcChecked()`, `ncclChecked()` (and `cuOutPointers()`) are the libraries whose functions
 * throw it and return their out-parameters. The layers above call only these checked forms.
 */
import { cufft, driver, driverOutPointers, nvrtc, runtime } from './api.js';
import type { CallContext, CheckedCall, DuringInContext } from './checked-call.js';
import { CudaError, type CudaLibraryName } from './errors.js';
import { CUFFT_FUNCTIONS, type CufftCheckedFunctions } from './generated/cufft.js';
import { DRIVER_FUNCTIONS, type DriverCheckedFunctions, type DriverFunctions } from './generated/driver.js';
import { NCCL_FUNCTIONS, type NcclCheckedFunctions } from './generated/nccl.js';
import { NVRTC_FUNCTIONS, type NvrtcCheckedFunctions } from './generated/nvrtc.js';
import { RUNTIME_FUNCTIONS, type RuntimeCheckedFunctions } from './generated/runtime.js';
import { CUresult, cudaError_t } from './generated/types.js';
import { nccl, NcclError, ncclLastError } from './nccl.js';
import { noteSticky, RESTART_HINT } from './sticky.js';
import { READINESS_QUERIES, STATUS_TYPES, type FunctionDeclaration, type Out, type Pointer } from './support.js';

let currentContext: () => CallContext | null = () => null;

/** The runtime says which context is current on this thread (ffi knows no Context), so an error names the context it happened in. */
export function setCallContextSource(source: () => CallContext | null): void {
  currentContext = source;
}

/** The library's own wording of a status where its header has none to offer (NVRTC) or words it better (cudaGetErrorString). */
function libraryDescription(library: CudaLibraryName, status: number): string | undefined {
  try {
    if (library === 'nvrtc') return nvrtc().nvrtcGetErrorString(status as never) ?? undefined;
    if (library === 'runtime') return runtime().cudaGetErrorString(status as never) ?? undefined;
  } catch {
    // The library cannot say (not loaded, unknown code): the header's description or none.
  }
  return undefined;
}

/**
 * The CudaError of a failed call: status, enum name, the library's description, the call and what
 * it was doing. NCCL's is an NcclError with NCCL's last-error message. A driver or runtime call
 * also names the context it ran in (`context`, or the current one when not given); a sticky
 * status adds the restart hint, becomes the process's first sticky error and fails that context.
 * The checked functions below throw it; a caller holding a status that no call of its own
 * returned (NCCL's asynchronous error) makes its error here too.
 */
export function statusError(library: 'nccl', status: number, call: string, during?: string): NcclError;
export function statusError(
  library: CudaLibraryName,
  status: number,
  call: string,
  during?: string,
  context?: CallContext | null,
): CudaError;
export function statusError(
  library: CudaLibraryName,
  status: number,
  call: string,
  during?: string,
  context?: CallContext | null,
): CudaError {
  if (library === 'nccl') return new NcclError(status, call, { lastError: ncclLastError(), during });
  if (library !== 'driver' && library !== 'runtime')
    return new CudaError(library, status, call, { during, description: libraryDescription(library, status) });
  const owner = context === undefined ? currentContext() : context;
  const where = owner ? (during === undefined ? owner.label : `${during}; ${owner.label}`) : during;
  const error = new CudaError(library, status, call, {
    during: where,
    description: libraryDescription(library, status),
  });
  if (error.sticky) {
    error.message += ` — ${RESTART_HINT}`;
    noteSticky(error);
    owner?.fail(error);
  }
  return error;
}

/**
 * Runs checked calls whose failure must not become the caller's error: teardown while another
 * error unwinds, a query whose failure only means a fallback. Returns what `calls` returns, or
 * `fallback` when it threw a library's error (dropped, though a sticky one has still failed its
 * context); any other exception is a bug and propagates. For cold paths: the caller makes a closure.
 */
export function bestEffort<T>(calls: () => T, fallback: T): T {
  try {
    return calls();
  } catch (e) {
    if (e instanceof CudaError) return fallback;
    throw e;
  }
}

/** The error of a checked call that failed, with its `during` (CheckedCall) resolved: only now is a describer run. */
function failure(
  library: CudaLibraryName,
  status: number,
  call: string,
  during: unknown,
  a: unknown,
  b: unknown,
  c: unknown,
): CudaError {
  if (typeof during === 'function') return statusError(library, status, call, during(a, b, c) as string);
  if (typeof during === 'object' && during !== null) {
    const site = during as DuringInContext;
    return statusError(library, status, call, site.during, site.context);
  }
  return statusError(library, status, call, during as string | undefined);
}

type Raw = (...args: unknown[]) => unknown;
type Wrapped = (...args: unknown[]) => unknown;

/**
 * A function without out-parameters (or with them bound as pointers): its arguments, then
 * `during` and up to three values for it. One wrapper per arity up to 12 passes them on as they
 * are, so a call allocates nothing; the two longer driver functions (tensor-map encoders) take
 * the general path.
 */
function positional(library: CudaLibraryName, name: string, fn: Raw, arity: number): Wrapped {
  const check = (s: unknown, d: unknown, a: unknown, b: unknown, c: unknown): void => {
    if (s !== 0) throw failure(library, s as number, name, d, a, b, c);
  };
  type F = (...x: unknown[]) => void;
  switch (arity) {
    case 0:
      return ((d, a, b, c) => check(fn(), d, a, b, c)) as F;
    case 1:
      return ((x0, d, a, b, c) => check(fn(x0), d, a, b, c)) as F;
    case 2:
      return ((x0, x1, d, a, b, c) => check(fn(x0, x1), d, a, b, c)) as F;
    case 3:
      return ((x0, x1, x2, d, a, b, c) => check(fn(x0, x1, x2), d, a, b, c)) as F;
    case 4:
      return ((x0, x1, x2, x3, d, a, b, c) => check(fn(x0, x1, x2, x3), d, a, b, c)) as F;
    case 5:
      return ((x0, x1, x2, x3, x4, d, a, b, c) => check(fn(x0, x1, x2, x3, x4), d, a, b, c)) as F;
    case 6:
      return ((x0, x1, x2, x3, x4, x5, d, a, b, c) => check(fn(x0, x1, x2, x3, x4, x5), d, a, b, c)) as F;
    case 7:
      return ((x0, x1, x2, x3, x4, x5, x6, d, a, b, c) => check(fn(x0, x1, x2, x3, x4, x5, x6), d, a, b, c)) as F;
    case 8:
      return ((x0, x1, x2, x3, x4, x5, x6, x7, d, a, b, c) =>
        check(fn(x0, x1, x2, x3, x4, x5, x6, x7), d, a, b, c)) as F;
    case 9:
      return ((x0, x1, x2, x3, x4, x5, x6, x7, x8, d, a, b, c) =>
        check(fn(x0, x1, x2, x3, x4, x5, x6, x7, x8), d, a, b, c)) as F;
    case 10:
      return ((x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, d, a, b, c) =>
        check(fn(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9), d, a, b, c)) as F;
    case 11:
      return ((x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, d, a, b, c) =>
        check(fn(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10), d, a, b, c)) as F;
    case 12:
      return ((x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, d, a, b, c) =>
        check(fn(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11), d, a, b, c)) as F;
    default:
      return (...given: unknown[]) => {
        const [d, a, b, c] = given.slice(arity);
        check(fn(...given.slice(0, arity)), d, a, b, c);
      };
  }
}

const QUERIES: ReadonlySet<string> = new Set(READINESS_QUERIES);

/** A readiness query (one handle): true when done, false while not ready, the library's error otherwise. */
function readiness(library: CudaLibraryName, name: string, fn: Raw): Wrapped {
  const notReady = library === 'runtime' ? cudaError_t.cudaErrorNotReady : CUresult.CUDA_ERROR_NOT_READY;
  return (handle, d, a, b, c) => {
    const s = fn(handle);
    if (s === 0) return true;
    if (s === notReady) return false;
    throw failure(library, s as number, name, d, a, b, c);
  };
}

/**
 * A function with out-parameters: its in-parameters, then `during` and its values; it makes a cell
 * per out-parameter and returns the value (one), an object by parameter name (several). For code
 * off the hot paths: a call allocates its cells.
 */
function returningOuts(
  library: CudaLibraryName,
  name: string,
  fn: Raw,
  params: FunctionDeclaration[3],
  outs: readonly number[],
): Wrapped {
  const outNames = outs.map((i) => params[i]![0]);
  const outIsStruct = outs.map(
    (i) => /^[A-Za-z_]\w* \*$/.test(params[i]![1]) && !/^(u?int\d+|float|double|char|bool) \*$/.test(params[i]![1]),
  );
  const arity = params.length;
  const ins = arity - outs.length;
  return (...given: unknown[]) => {
    const args = new Array<unknown>(arity);
    const cells: unknown[] = [];
    let next = 0;
    for (let i = 0, o = 0; i < arity; i++) {
      if (o < outs.length && outs[o] === i) {
        const cell = outIsStruct[o] ? {} : [null];
        cells.push(cell);
        args[i] = cell;
        o++;
      } else args[i] = given[next++];
    }
    const status = fn(...args);
    if (status !== 0)
      throw failure(library, status as number, name, given[ins], given[ins + 1], given[ins + 2], given[ins + 3]);
    const values = cells.map((c) => (Array.isArray(c) ? c[0] : c));
    if (values.length === 0) return undefined;
    if (values.length === 1) return values[0];
    const obj: Record<string, unknown> = {};
    outNames.forEach((n, i) => (obj[n] = values[i]));
    return obj;
  };
}

/** How checkedLibrary takes out-parameters: returned (cells made per call), or as the pointers a binding with `outParamsAsPointers` takes. */
export interface CheckedLibraryOptions {
  /** `raw` was bound with `outParamsAsPointers` (bind.ts): every parameter is passed as given, none returned. */
  outParamsAsPointers?: boolean | undefined;
}

/**
 * A library whose status-returning functions throw statusError's error (readiness queries return
 * a boolean) and return their out-parameters (none: undefined; one: the value; several: an object
 * by parameter name), each taking what it is doing after its in-parameters (CheckedCall). Each
 * function is wrapped on first use; one without out-parameters allocates nothing per call.
 */
export function checkedLibrary<T extends object>(
  library: CudaLibraryName,
  raw: object,
  declarations: readonly FunctionDeclaration[],
  options: CheckedLibraryOptions = {},
): T {
  const api = {} as Record<string, unknown>;
  const fns = raw as Record<string, Raw>;
  for (const [name, , result, params] of declarations) {
    const outs = options.outParamsAsPointers
      ? []
      : params.map(([, , direction], i) => (direction === 1 ? i : -1)).filter((i) => i >= 0);
    Object.defineProperty(api, name, {
      enumerable: true,
      configurable: true,
      get() {
        const fn = fns[name]!;
        let wrapped: Wrapped;
        if (!STATUS_TYPES.includes(result)) wrapped = fn;
        else if (QUERIES.has(name)) wrapped = readiness(library, name, fn);
        else if (outs.length === 0) wrapped = positional(library, name, fn, params.length);
        else wrapped = returningOuts(library, name, fn, params, outs);
        Object.defineProperty(api, name, { value: wrapped, enumerable: true });
        return wrapped;
      },
    });
  }
  return api as T;
}

function lazy<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

/** A raw parameter list with its out-parameters taken as plain pointers (a one-element TypedArray the call writes). */
type PointerOuts<P extends readonly unknown[]> = { [K in keyof P]: P[K] extends Out<unknown> ? Pointer : P[K] };

/** The driver's checked functions with out-parameters as pointers: every parameter in order, then `during`. */
export type DriverPointerOutFunctions = {
  [K in keyof DriverFunctions]: DriverFunctions[K] extends (...args: infer P) => number
    ? CheckedCall<PointerOuts<P>, K extends (typeof READINESS_QUERIES)[number] ? boolean : void>
    : never;
};

/** Checked driver API: a failed CUresult throws CudaError, out-parameters are returned (`cu().cuStreamCreate(0)` is a CUstream). */
export const cu = lazy(() => checkedLibrary<DriverCheckedFunctions>('driver', driver(), DRIVER_FUNCTIONS));
/**
 * Checked driver API over `driverOutPointers()`: out-parameters are one-element TypedArrays (or
 * arrays of the length the call fills) passed in place, so an allocation on a hot path costs no
 * cell, and a call that fills an array the header declares as one value (cuGraphGetNodes) can.
 */
export const cuOutPointers = lazy(() =>
  checkedLibrary<DriverPointerOutFunctions>('driver', driverOutPointers(), DRIVER_FUNCTIONS, {
    outParamsAsPointers: true,
  }),
);
/** Checked runtime API: a failed cudaError_t throws CudaError (with cudaGetErrorString's text), out-parameters are returned. */
export const cudart = lazy(() => checkedLibrary<RuntimeCheckedFunctions>('runtime', runtime(), RUNTIME_FUNCTIONS));
/** Checked cuFFT: a failed cufftResult throws CudaError, out-parameters are returned (`cufftChecked().cufftCreate()` is the plan handle). */
export const cufftChecked = lazy(() => checkedLibrary<CufftCheckedFunctions>('cufft', cufft(), CUFFT_FUNCTIONS));
/** Checked NVRTC: a failed nvrtcResult throws CudaError (with nvrtcGetErrorString's text), out-parameters are returned. */
export const nvrtcChecked = lazy(() => checkedLibrary<NvrtcCheckedFunctions>('nvrtc', nvrtc(), NVRTC_FUNCTIONS));
/** Checked NCCL: a failed ncclResult_t throws NcclError (with ncclGetLastError's message), out-parameters are returned; loading it sets NCCL_NVLS_ENABLE=0 first. */
export const ncclChecked = lazy(() => checkedLibrary<NcclCheckedFunctions>('nccl', nccl(), NCCL_FUNCTIONS));
