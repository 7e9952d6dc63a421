/**
 * The checked-call rule of docs/design.md (Errors): above src/ffi/, a CUDA library is called only
 * through its checked form (src/ffi/checked.ts: `cu()`, `cuOutPointers()`, `cudart()`,
 * `cufftChecked()`, `nvrtcChecked()`, `ncclChecked()`), so every status becomes an error in that
 * one place, as cudarc's safe layer calls only `result`. A file of src/ outside src/ffi/ may not
 *
 * - import a generated library module (src/ffi/generated/<library>.js: the raw bindings and their
 *   interfaces; generated/types.js, the enums and structs, is fine),
 * - import a raw binding (`driver()`, `nvrtc()`, `nccl()`, `bindLibrary`, ...) or a namespace of a
 *   module that exports them,
 * - construct a CudaError or NcclError itself: a status becomes an error through statusError only.
 *
 * Tests and benchmarks may call the raw bindings: they measure or check below the checked layer.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { listTs } from './list-ts.js';

/** The raw bindings of src/ffi/ (api.ts, nccl.ts, bind.ts) that only the checked layer calls. */
export const RAW_BINDINGS: ReadonlySet<string> = new Set([
  'driver',
  'driverPerThread',
  'driverOutPointers',
  'driverLegacy',
  'runtime',
  'runtimePerThread',
  'cufft',
  'nvrtc',
  'nccl',
  'bindLibrary',
]);

/** One place that goes around the checked layer, as a sentence naming the file and line. */
export interface CheckedCallViolation {
  rule: 'checked-call';
  message: string;
}

const IMPORT = /(?:^|[\s;])import\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]/g;
const CONSTRUCTION = /\bnew\s+(CudaError|NcclError)\s*\(/g;

/** The names a clause imports as values (`a`, `b as c`; not `type d`), and whether it takes a namespace. */
function importedNames(clause: string): { names: string[]; namespace: boolean } {
  const namespace = /\*\s+as\s+\w+/.test(clause);
  const braces = /\{([^}]*)\}/.exec(clause)?.[1] ?? '';
  const names = braces
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '' && !s.startsWith('type '))
    .map((s) => s.split(/\s+as\s+/)[0]!.trim());
  return { names, namespace };
}

/** The line of character `index` in `text`, from 1. */
function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

/** Every place in `root`/src (outside src/ffi/) that calls a library or makes its error around the checked layer. */
export function checkCheckedCalls(root: string): CheckedCallViolation[] {
  const src = join(root, 'src');
  const ffi = join(src, 'ffi') + sep;
  const generated = join(ffi, 'generated') + sep;
  if (!existsSync(src)) return [];
  const out: CheckedCallViolation[] = [];
  for (const file of listTs(src)) {
    if (file.startsWith(ffi)) continue;
    const text = readFileSync(file, 'utf8');
    const code = text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/\/\/[^\n]*/g, '');
    const at = (index: number): string => `${relative(root, file)}:${lineOf(code, index)}`;
    for (const m of code.matchAll(IMPORT)) {
      const spec = m[3]!;
      if (!spec.startsWith('.')) continue;
      const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
      if (!target.startsWith(ffi)) continue;
      if (target.startsWith(generated) && !target.endsWith(`${sep}types.ts`))
        out.push({
          rule: 'checked-call',
          message: `${at(m.index!)} imports ${relative(root, target)}: a generated library module is the raw bindings; call the checked form (src/ffi/checked.ts)`,
        });
      if (m[1]) continue; // `import type { ... }`: no binding is called through it
      const { names, namespace } = importedNames(m[2]!);
      const raw = names.filter((n) => RAW_BINDINGS.has(n));
      if (raw.length > 0)
        out.push({
          rule: 'checked-call',
          message: `${at(m.index!)} imports the raw binding ${raw.join(', ')} from ${relative(root, target)}: call its checked form (src/ffi/checked.ts), which turns a status into the library's error`,
        });
      if (namespace && !target.startsWith(generated))
        out.push({
          rule: 'checked-call',
          message: `${at(m.index!)} imports ${relative(root, target)} as a namespace, raw bindings included: import the checked forms by name`,
        });
    }
    for (const m of code.matchAll(CONSTRUCTION))
      out.push({
        rule: 'checked-call',
        message: `${at(m.index!)} constructs a ${m[1]}: a status becomes an error only through statusError (src/ffi/checked.ts), which a checked call throws`,
      });
  }
  return out;
}
