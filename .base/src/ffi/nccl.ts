/**
 * NCCL (several GPUs, several processes): the generated nccl.h bindings, loaded lazily from the
 * system or the `nvidia-nccl-cu13` wheel, and NCCL's statuses as typed exceptions.
 *
 * NVLink multicast (NVLS) stays off in every process that loads NCCL: `NCCL_NVLS_ENABLE=0` is set
 * in `process.env` (which is the C environment NCCL reads with getenv) before the library is
 * loaded, and child processes inherit it. Multicast objects can take a shared host's GPUs out of
 * service; tscuda never calls cuMulticastCreate either.
 */
import { isMainThread } from 'node:worker_threads';
import { bindLibrary } from './bind.js';
import type { FunctionDeclaration } from './support.js';
import { NCCL_FUNCTIONS, type NcclCheckedFunctions, type NcclFunctions } from './generated/nccl.js';
import { ncclResult_t } from './generated/types.js';
import { loadLibrary } from './libraries.js';

/** What NCCL_NVLS_ENABLE is forced to in this process before NCCL initialises. */
export const NCCL_NVLS_SETTING = '0';

let warnedWorker = false;

/**
 * Sets NCCL_NVLS_ENABLE=0 in this process (and so in the processes it starts); idempotent. In a
 * worker thread process.env is a copy that native code never sees: there the variable must come
 * from the main thread or the shell, and a warning says so when it does not.
 */
export function disableNvlinkMulticast(): void {
  if (process.env.NCCL_NVLS_ENABLE === NCCL_NVLS_SETTING) return;
  process.env.NCCL_NVLS_ENABLE = NCCL_NVLS_SETTING;
  if (!isMainThread && !warnedWorker) {
    warnedWorker = true;
    process.emitWarning(
      'tscuda: NCCL is used from a worker thread, whose process.env does not reach NCCL: start Node with NCCL_NVLS_ENABLE=0 (or load NCCL on the main thread first)',
      { code: 'TSCUDA_NCCL_NVLS' },
    );
  }
}

const NCCL_DESCRIPTIONS: Readonly<Record<number, string>> = {
  1: 'a call to a CUDA function failed',
  2: 'a call to the system failed (socket, memory, file descriptors, ...)',
  3: 'an internal check failed: a bug in NCCL or memory corruption',
  4: 'an argument has an invalid value',
  5: 'the call is invalid in its context (wrong rank, group, communicator state, ...)',
  6: 'a call failed on a remote peer (network error, peer process gone)',
  7: 'the operation is still in progress (non-blocking communicator)',
};

/** The ncclResult_t enum name of a status (`ncclInvalidArgument`), or `ncclUnknownResult_<code>`. */
export function ncclStatusName(code: number): string {
  for (const [name, value] of Object.entries(ncclResult_t)) if (value === code) return name;
  return `ncclUnknownResult_${code}`;
}

/** A failed NCCL call: the status, its name, NCCL's own last-error message, the call and what it was for. */
export class NcclError extends Error {
  override readonly name = 'NcclError';
  readonly code: number;
  /** The ncclResult_t name: ncclUnhandledCudaError, ncclSystemError, ncclInvalidArgument, ncclInvalidUsage, ncclRemoteError, ... */
  readonly status: string;
  readonly call: string;
  /** ncclGetLastError's message (what NCCL logged as the cause), when it had one. */
  readonly lastError: string | undefined;
  readonly during: string | undefined;

  constructor(code: number, call: string, detail: { lastError?: string | undefined; during?: string | undefined } = {}) {
    const status = ncclStatusName(code);
    const description = NCCL_DESCRIPTIONS[code];
    const last = detail.lastError?.trim() || undefined;
    super(`${call} failed: ${status} (${code})${description ? `: ${description}` : ''}${last ? ` — NCCL: ${last}` : ''}${detail.during ? ` [${detail.during}]` : ''}`);
    this.code = code;
    this.status = status;
    this.call = call;
    this.lastError = last;
    this.during = detail.during;
  }
}

let raw: NcclFunctions | undefined;
/** nccl.h, raw: every nccl* function bound to libnccl.so.2; loading it sets NCCL_NVLS_ENABLE=0 first. Throws CudaUnavailableError naming where it looked. */
export function nccl(): NcclFunctions {
  if (raw) return raw;
  disableNvlinkMulticast();
  raw = bindLibrary<NcclFunctions>(loadLibrary('nccl'), NCCL_FUNCTIONS);
  return raw;
}

/** ncclGetLastError's message now (empty strings and failures read as undefined). */
export function ncclLastError(): string | undefined {
  try {
    return nccl().ncclGetLastError(null) || undefined;
  } catch {
    return undefined;
  }
}

/** The NcclError of a failed status, with NCCL's last-error message. */
export function ncclError(code: number, call: string, during?: string): NcclError {
  return new NcclError(code, call, { lastError: ncclLastError(), during });
}

/** Throws the NcclError of a failed status; one comparison when it succeeded. */
export function checkNccl(code: number, call: string, during?: string): void {
  if (code !== 0) throw ncclError(code, call, during);
}

type Raw = Record<string, (...args: unknown[]) => unknown>;

/** Status-returning functions become throwing ones (NcclError) whose out-parameters are the return value. */
function checkedNccl(fns: Raw, declarations: readonly FunctionDeclaration[]): NcclCheckedFunctions {
  const api = {} as Record<string, unknown>;
  for (const [name, , result, params] of declarations) {
    const outs = params.map(([, , d], i) => (d === 1 ? i : -1)).filter((i) => i >= 0);
    const outIsStruct = outs.map((i) => /^[A-Za-z_]\w* \*$/.test(params[i]![1]) && !/^(u?int\d+|float|double|char|bool) \*$/.test(params[i]![1]));
    const outNames = outs.map((i) => params[i]![0]);
    Object.defineProperty(api, name, {
      enumerable: true,
      configurable: true,
      get() {
        const fn = fns[name]!;
        const wrapped =
          result !== 'ncclResult_t'
            ? fn
            : (...ins: unknown[]): unknown => {
                const args = new Array<unknown>(params.length);
                const cells: unknown[] = [];
                for (let i = 0, o = 0, next = 0; i < params.length; i++) {
                  if (o < outs.length && outs[o] === i) {
                    const cell = outIsStruct[o] ? {} : [null];
                    cells.push(cell);
                    args[i] = cell;
                    o++;
                  } else args[i] = ins[next++];
                }
                checkNccl(fn(...args) as number, name);
                const values = cells.map((c) => (Array.isArray(c) ? c[0] : c));
                if (values.length <= 1) return values[0];
                return Object.fromEntries(outNames.map((n, i) => [n, values[i]]));
              };
        Object.defineProperty(api, name, { value: wrapped, enumerable: true });
        return wrapped;
      },
    });
  }
  return api as unknown as NcclCheckedFunctions;
}

let checked: NcclCheckedFunctions | undefined;
/** nccl.h, checked: a failed ncclResult_t throws NcclError (with ncclGetLastError's message); out-parameters are returned. */
export function ncclChecked(): NcclCheckedFunctions {
  return (checked ??= checkedNccl(nccl() as unknown as Raw, NCCL_FUNCTIONS));
}
