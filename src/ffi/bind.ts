import koffi, { type LibraryHandle } from 'koffi';
import type { FunctionDeclaration } from './support.js';
import { registerKoffiTypes } from './generated/types.js';

/** Options of `bindLibrary`: which symbol variants to bind (default: the legacy default stream ones). */
export interface BindOptions {
  /** Bind the per-thread-default-stream variants (`_ptds`/`_ptsz`) where the header has them. */
  perThreadDefaultStream?: boolean | undefined;
  /**
   * Bind out-parameters as plain pointers: the caller passes a one-element TypedArray
   * (`BigUint64Array`, `Int32Array`, ...) that the callee writes into. koffi then hands the
   * array's memory to the call, ~0.08 µs, where a `koffi.out` cell costs ~0.5 µs per call.
   */
  outParamsAsPointers?: boolean | undefined;
}

function koffiParam(
  type: string,
  direction: number,
  outParamsAsPointers: boolean,
): string | ReturnType<typeof koffi.out> {
  if (outParamsAsPointers) return type;
  if (direction === 1) return koffi.out(type);
  if (direction === 2) return koffi.inout(type);
  return type;
}

/**
 * Binds a generated declaration list to a loaded library. Each function is resolved on first
 * access (so one symbol missing from an older driver fails only where it is used) and then
 * replaces its getter with the koffi function itself: calls go straight to koffi, no wrapper.
 */
export function bindLibrary<T extends object>(
  lib: LibraryHandle,
  declarations: readonly FunctionDeclaration[],
  options: BindOptions = {},
): T {
  registerKoffiTypes();
  const api = {} as Record<string, unknown>;
  for (const [name, symbol, result, params, perThreadSymbol] of declarations) {
    const target = options.perThreadDefaultStream && perThreadSymbol ? perThreadSymbol : symbol;
    Object.defineProperty(api, name, {
      configurable: true,
      enumerable: true,
      get() {
        const fn = lib.func(
          target,
          result,
          params.map(([, type, direction]) => koffiParam(type, direction, options.outParamsAsPointers === true)),
        );
        Object.defineProperty(api, name, { value: fn, enumerable: true, writable: false, configurable: false });
        return fn;
      },
    });
  }
  return api as T;
}

/** Resolves every declaration now; returns the names whose symbol the library lacks. */
export function missingSymbols(lib: LibraryHandle, declarations: readonly FunctionDeclaration[]): string[] {
  registerKoffiTypes();
  const missing: string[] = [];
  for (const [name, symbol, result, params] of declarations) {
    try {
      lib.func(
        symbol,
        result,
        params.map(([, type, direction]) => koffiParam(type, direction, false)),
      );
    } catch {
      missing.push(name);
    }
  }
  return missing;
}
