import { CudaError, type CudaLibraryName } from './errors.js';
import type { FunctionDeclaration } from './support.js';

type Raw = Record<string, (...args: unknown[]) => unknown>;

/** Status-returning functions become throwing ones whose out-parameters are the return value. */
export function checkedLibrary<T extends object>(
  library: CudaLibraryName,
  raw: object,
  declarations: readonly FunctionDeclaration[],
  describe: (code: number) => string | undefined,
): T {
  const api = {} as Record<string, unknown>;
  const fns = raw as Raw;
  for (const [name, , result, params] of declarations) {
    const returnsStatus = STATUS_TYPES.has(result);
    const outs = params.map(([, , d], i) => (d === 1 ? i : -1)).filter((i) => i >= 0);
    const outNames = outs.map((i) => params[i]![0]);
    const outIsStruct = outs.map((i) => /^[A-Za-z_]\w* \*$/.test(params[i]![1]) && !/^(u?int\d+|float|double|char|bool) \*$/.test(params[i]![1]));
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
            if (status !== 0) throw new CudaError(library, status, name, { description: describe(status) });
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

const STATUS_TYPES = new Set(['CUresult', 'cudaError_t', 'cufftResult', 'nvrtcResult']);
