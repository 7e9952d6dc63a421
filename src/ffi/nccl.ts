/**
 * NCCL (several GPUs, several processes): the generated nccl.h bindings, loaded lazily from the
 * system or the NCCL pip wheel (ffi/libraries.ts), and NCCL's statuses as NcclError, a CudaError
 * (built by the one checked-call layer, checked.ts, which also holds `ncclChecked()`). The safe layer above
 * (communicators, unique ids, groups) lives in src/runtime/nccl/, beside cuFFT's in runtime/fft/.
 *
 * NVLink multicast (NVLS) stays off in every process that loads NCCL: `NCCL_NVLS_ENABLE=0` is set
 * in `process.env` (which is the C environment NCCL reads with getenv) before the library is
 * loaded, and child processes inherit it. Multicast objects can take a shared host's GPUs out of
 * service; tscuda never calls cuMulticastCreate either.
 */
import { isMainThread } from 'node:worker_threads';
import { bindLibrary } from './bind.js';
import { CudaError, statusDescription, statusName } from './errors.js';
import { NCCL_FUNCTIONS, type NcclFunctions } from './generated/nccl.js';
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

/** The ncclResult_t enum name of a status (`ncclInvalidArgument`), or `ncclUnknownResult_<code>`. */
export function ncclStatusName(code: number): string {
  const name = statusName('nccl', code);
  return name.startsWith('UNKNOWN_') ? `ncclUnknownResult_${code}` : name;
}

/**
 * A failed NCCL call: a CudaError of library 'nccl' (the status, its ncclResult_t name, what it
 * means, the call and what it was for) that also carries NCCL's own last-error message.
 */
export class NcclError extends CudaError {
  override readonly name: string = 'NcclError';
  /** ncclGetLastError's message (what NCCL logged as the cause), when it had one. */
  readonly lastError: string | undefined;

  constructor(
    code: number,
    call: string,
    detail: { lastError?: string | undefined; during?: string | undefined } = {},
  ) {
    const last = detail.lastError?.trim() || undefined;
    const meaning = statusDescription('nccl', code);
    super('nccl', code, call, {
      during: detail.during,
      description: last ? `${meaning ? `${meaning} — ` : ''}NCCL: ${last}` : meaning,
    });
    this.lastError = last;
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
