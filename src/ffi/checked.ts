/**
 * The checked-call layer (cudarc's `result` over `sys`): the one way a library status becomes an
 * exception (docs/design.md, Errors), for every library (driver, runtime, cuFFT, NVRTC, NCCL) and
 * every caller. The runtime calls `checkStatus` / `statusError` after each raw call; `cu()`,
 * `cudart()`, `cufftChecked()`, `nvrtcChecked()` and `ncclChecked()` are whole libraries whose
 * functions throw and return their out-parameters. Both build their errors with `statusError`.
 */
import { cufft, driver, nvrtc, runtime } from './api.js';
import { CudaError, type CudaLibraryName } from './errors.js';
import type { CufftCheckedFunctions } from './generated/cufft.js';
import { CUFFT_FUNCTIONS } from './generated/cufft.js';
import { DRIVER_FUNCTIONS, type DriverCheckedFunctions } from './generated/driver.js';
import { NCCL_FUNCTIONS, type NcclCheckedFunctions } from './generated/nccl.js';
import { NVRTC_FUNCTIONS, type NvrtcCheckedFunctions } from './generated/nvrtc.js';
import { RUNTIME_FUNCTIONS, type RuntimeCheckedFunctions } from './generated/runtime.js';
import { nccl, NcclError, ncclLastError } from './nccl.js';
import { noteSticky, RESTART_HINT } from './sticky.js';
import type { FunctionDeclaration } from './support.js';

/**
 * The CUDA context a driver or runtime call ran in, as the layer above knows it (the runtime's
 * Context): its label ends the error's `during`, and a sticky error fails it.
 */
export interface CallContext {
  readonly label: string;
  /** A sticky error broke this context: its pending and later work must fail. */
  fail(error: CudaError): void;
}

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
 * also names the context it ran in (`context`, or the current one when not given: the completion
 * poller queries events of its own context, whichever is current); a sticky status adds the
 * restart hint, becomes the process's first sticky error and fails that context.
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
 * Throws the error of a failed status; one comparison when it succeeded. Build `during` only when
 * it is a constant or already at hand: on a hot path write `if (status !== 0) throw statusError(...)`
 * so the message (a template string) is made only on failure.
 */
export function checkStatus(library: CudaLibraryName, status: number, call: string, during?: string): void {
  if (status !== 0) throw statusError(library, status, call, during);
}

type Raw = Record<string, (...args: unknown[]) => unknown>;

const STATUS_TYPES = new Set(['CUresult', 'cudaError_t', 'cufftResult', 'nvrtcResult', 'ncclResult_t']);

/**
 * A library whose status-returning functions throw statusError's error and return their
 * out-parameters (none: undefined; one: the value; several: an object by parameter name). Each
 * function is wrapped on first use. For code that is not on a hot path: a call allocates its cells.
 */
export function checkedLibrary<T extends object>(
  library: CudaLibraryName,
  raw: object,
  declarations: readonly FunctionDeclaration[],
): T {
  const api = {} as Record<string, unknown>;
  const fns = raw as Raw;
  for (const [name, , result, params] of declarations) {
    const returnsStatus = STATUS_TYPES.has(result);
    const outs = params.map(([, , d], i) => (d === 1 ? i : -1)).filter((i) => i >= 0);
    const outNames = outs.map((i) => params[i]![0]);
    const outIsStruct = outs.map(
      (i) => /^[A-Za-z_]\w* \*$/.test(params[i]![1]) && !/^(u?int\d+|float|double|char|bool) \*$/.test(params[i]![1]),
    );
    const arity = params.length;
    Object.defineProperty(api, name, {
      enumerable: true,
      get() {
        const fn = fns[name]!;
        let wrapped: (...args: unknown[]) => unknown;
        if (!returnsStatus) wrapped = fn;
        else
          wrapped = (...ins: unknown[]) => {
            const args = new Array<unknown>(arity);
            const cells: unknown[] = [];
            let next = 0;
            for (let i = 0, o = 0; i < arity; i++) {
              if (o < outs.length && outs[o] === i) {
                const cell = outIsStruct[o] ? {} : [null];
                cells.push(cell);
                args[i] = cell;
                o++;
              } else args[i] = ins[next++];
            }
            const status = fn(...args) as number;
            if (status !== 0) throw statusError(library, status, name);
            const values = cells.map((c) => (Array.isArray(c) ? c[0] : c));
            if (values.length === 0) return undefined;
            if (values.length === 1) return values[0];
            const obj: Record<string, unknown> = {};
            outNames.forEach((n, i) => (obj[n] = values[i]));
            return obj;
          };
        Object.defineProperty(api, name, { value: wrapped, enumerable: true });
        return wrapped;
      },
      configurable: true,
    });
  }
  return api as T;
}

function lazy<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

/** Checked driver API: a failed CUresult throws CudaError, out-parameters are returned (`cu().cuStreamCreate(0)` is a CUstream). */
export const cu = lazy(() => checkedLibrary<DriverCheckedFunctions>('driver', driver(), DRIVER_FUNCTIONS));
/** Checked runtime API: a failed cudaError_t throws CudaError (with cudaGetErrorString's text), out-parameters are returned. */
export const cudart = lazy(() => checkedLibrary<RuntimeCheckedFunctions>('runtime', runtime(), RUNTIME_FUNCTIONS));
/** Checked cuFFT: a failed cufftResult throws CudaError, out-parameters are returned (`cufftChecked().cufftCreate()` is the plan handle). */
export const cufftChecked = lazy(() => checkedLibrary<CufftCheckedFunctions>('cufft', cufft(), CUFFT_FUNCTIONS));
/** Checked NVRTC: a failed nvrtcResult throws CudaError (with nvrtcGetErrorString's text), out-parameters are returned. */
export const nvrtcChecked = lazy(() => checkedLibrary<NvrtcCheckedFunctions>('nvrtc', nvrtc(), NVRTC_FUNCTIONS));
/** Checked NCCL: a failed ncclResult_t throws NcclError (with ncclGetLastError's message), out-parameters are returned; loading it sets NCCL_NVLS_ENABLE=0 first. */
export const ncclChecked = lazy(() => checkedLibrary<NcclCheckedFunctions>('nccl', nccl(), NCCL_FUNCTIONS));
