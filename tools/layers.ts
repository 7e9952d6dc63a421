/**
 * The layer rule of docs/design.md, checked over src/: each folder imports only from the layers
 * below it (and from report/, which is pure), never from tests, benchmarks or examples, and no
 * file takes part in an import cycle. Type-only imports count: `import type` is erased at run
 * time, but two files that name each other's types still cannot be read, changed or split one
 * at a time. Where two classes must name each other (a Device and its Context), the lower one
 * names the other through src/runtime/types.ts, which the class's own file completes with a
 * `declare module` augmentation (counted here as an import of types.ts).
 *
 * Written here rather than with dependency-cruiser because that tool parses TypeScript with the
 * `typescript` package below 7, and this project compiles with TypeScript 7.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { listTs } from './list-ts.js';
import { checkCheckedCalls } from './checked-calls.js';
import { checkFileLengths, MAX_LINES } from './file-sizes.js';

// The length and checked-call rules have their own files; re-exported because this tool runs them with the others.
export { checkCheckedCalls, checkFileLengths, MAX_LINES };

/** Each layer and the layers it may import besides itself, bottom first. */
export const LAYERS: Readonly<Record<string, readonly string[]>> = {
  report: [],
  ffi: [],
  runtime: ['ffi', 'report'],
  kernels: ['runtime', 'ffi', 'report'],
  orchestration: ['runtime', 'kernels', 'ffi', 'report'],
  signal: ['runtime', 'kernels', 'ffi', 'report'],
  pipeline: ['orchestration', 'signal', 'runtime', 'kernels', 'ffi', 'report'],
  engine: ['pipeline', 'orchestration', 'signal', 'runtime', 'kernels', 'ffi', 'report'],
  queue: ['engine', 'pipeline', 'orchestration', 'signal', 'runtime', 'kernels', 'ffi', 'report'],
  server: ['queue', 'engine', 'pipeline', 'orchestration', 'signal', 'runtime', 'kernels', 'ffi', 'report'],
  cli: ['server', 'queue', 'engine', 'pipeline', 'orchestration', 'signal', 'runtime', 'kernels', 'ffi', 'report'],
};

/** One broken rule, as a sentence naming both files. */
export interface LayerViolation {
  rule:
    'layer' | 'outside-src' | 'cycle' | 'unknown-folder' | 'length' | 'bench-import' | 'device-load' | 'checked-call';
  message: string;
}

const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]|^\s*declare\s+module\s*['"]([^'"]+)['"]/gm;

/** One relative import: where it points, and whether it is erased at run time (`import type`, `export type`, `declare module`). */
export interface ImportRef {
  spec: string;
  typeOnly: boolean;
  /** `import('...')`: loaded when the call runs, not with the importing file. */
  dynamic?: true;
}

/** Relative module specifiers a TypeScript source imports or re-exports (comments removed first). */
export function importsOf(source: string): ImportRef[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/[^\n]*/g, '$1');
  const out: ImportRef[] = [];
  for (const m of code.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3] ?? m[4];
    if (!spec || !spec.startsWith('.')) continue;
    const head = m[0].trimStart();
    const typeOnly =
      m[4] !== undefined ||
      /^(import|export)\s+type\b/.test(head) ||
      /^import\s*\{\s*(type\s+[\w$]+\s*(as\s+[\w$]+\s*)?,?\s*)+\}\s*from/.test(head);
    if (m[2] !== undefined) {
      // `import('x').Name` outside an await is a type (`options: import('./s.js').Stream`), not a load.
      const after = code.slice(m.index! + m[0].length);
      const before = code.slice(Math.max(0, m.index! - 8), m.index!);
      const typeQuery = /^\.(?!then\b|catch\b|finally\b)[A-Za-z_$]/.test(after) && !/await\s*\(?\s*$/.test(before);
      out.push({ spec, typeOnly: typeOnly || typeQuery, dynamic: true });
    } else out.push({ spec, typeOnly });
  }
  return out;
}

function resolveImport(from: string, spec: string): string {
  const base = resolve(dirname(from), spec);
  const ts = base.replace(/\.js$/, '.ts');
  if (existsSync(ts)) return ts;
  if (existsSync(join(base, 'index.ts'))) return join(base, 'index.ts');
  return base;
}

/** The layer of a file under src/ (`src/runtime/memory/x.ts` -> runtime; `src/index.ts` -> the root). */
function layerOf(root: string, file: string): string {
  const rel = relative(join(root, 'src'), file).split(/[\\/]/);
  return rel.length === 1 ? '(root)' : rel[0]!;
}

/** Every violation of the layer rule in `root`/src. */
export function checkLayers(root: string): LayerViolation[] {
  const src = join(root, 'src');
  const files = listTs(src);
  const graph = new Map<string, string[]>();
  const violations: LayerViolation[] = [];
  const name = (f: string): string => relative(root, f);
  for (const file of files) {
    const refs = importsOf(readFileSync(file, 'utf8')).map((r) => ({
      target: resolveImport(file, r.spec),
      typeOnly: r.typeOnly,
    }));
    const targets = refs.map((r) => r.target);
    // Every import is an edge of the cycle check, type-only ones included (see the file's head).
    graph.set(
      file,
      refs.filter((r) => r.target.startsWith(src + '/') && r.target.endsWith('.ts')).map((r) => r.target),
    );
    const layer = layerOf(root, file);
    if (layer !== '(root)' && !(layer in LAYERS))
      violations.push({
        rule: 'unknown-folder',
        message: `${name(file)}: src/${layer}/ is not a layer of docs/design.md`,
      });
    for (const target of targets) {
      if (!target.startsWith(src + '/')) {
        violations.push({
          rule: 'outside-src',
          message: `${name(file)} imports ${name(target)}: shipped code never imports tests, benchmarks or examples`,
        });
        continue;
      }
      const to = layerOf(root, target);
      if (layer === '(root)' || to === layer || (to === '(root)' && layer === '(root)')) continue;
      if (to === '(root)') {
        violations.push({
          rule: 'layer',
          message: `${name(file)} imports ${name(target)}: layers never import the package root`,
        });
        continue;
      }
      const allowed = LAYERS[layer] ?? [];
      if (!allowed.includes(to))
        violations.push({
          rule: 'layer',
          message: `${name(file)} (${layer}) imports ${name(target)} (${to}): ${layer} may import only ${allowed.join(', ') || 'itself'}`,
        });
    }
  }
  for (const cycle of cycles(graph))
    violations.push({
      rule: 'cycle',
      message: `files that import each other in a cycle: ${cycle.map(name).join(', ')}`,
    });
  return violations;
}

/** The strongly connected components of more than one file (or a file importing itself), each as one cycle path. */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(comp.reverse());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

/**
 * The comment that lets a benchmark import a private module of src/, on the import's specifier
 * line or the line above it, saying what it measures: `// private-path: the raw driver call koffi makes`.
 */
export const PRIVATE_PATH_MARKER = 'private-path:';

/**
 * bench/ measures what users get, so it imports src/ only through the package's entry points
 * (src/index.ts, src/<layer>/index.ts: what `tscuda`, `tscuda/runtime`, ... resolve to), except
 * where it measures a private path on purpose and says so with PRIVATE_PATH_MARKER.
 */
export function checkBenchImports(root: string): LayerViolation[] {
  const bench = join(root, 'bench');
  if (!existsSync(bench)) return [];
  const src = join(root, 'src');
  const out: LayerViolation[] = [];
  const spec = /(?:from\s*|import\s*\(\s*|^\s*)['"](\.[^'"]+)['"]/g;
  for (const file of listTs(bench)) {
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (/^\s*(\/\/|\*|\/\*)/.test(line)) return;
      for (const m of line.matchAll(spec)) {
        const target = resolveImport(file, m[1]!);
        if (!target.startsWith(src + sep)) continue;
        const rel = relative(src, target).split(sep);
        const entry = rel[rel.length - 1] === 'index.ts' && rel.length <= 2;
        if (entry || line.includes(PRIVATE_PATH_MARKER) || (lines[i - 1] ?? '').includes(PRIVATE_PATH_MARKER)) continue;
        out.push({
          rule: 'bench-import',
          message: `${relative(root, file)}:${i + 1} imports ${relative(root, target)}: import an entry point (src/index.ts, src/<layer>/index.ts), or mark a private path measured on purpose with // ${PRIVATE_PATH_MARKER} <what it measures>`,
        });
      }
    });
  }
  return out;
}

/**
 * src/runtime/defaults.ts resolves the default device through the Device class that device.ts
 * registers when it loads (device.ts imports the classes that import defaults.ts, so defaults.ts
 * cannot import it). So every program that loads defaults.ts must load device.ts too: every
 * file of test/, bench/ and examples/, every src/ file no other src/ file imports (the entry
 * points, the CLI, worker entry files), and every target of a dynamic import, counting the
 * files each loads with it (static value imports; type-only imports load nothing).
 */
export function checkDeviceLoaded(root: string): LayerViolation[] {
  const defaults = join(root, 'src', 'runtime', 'defaults.ts');
  const device = join(root, 'src', 'runtime', 'device.ts');
  if (!existsSync(defaults) || !existsSync(device)) return [];
  const folders = ['src', 'test', 'bench', 'examples'].map((f) => join(root, f)).filter((f) => existsSync(f));
  const files = folders.flatMap((f) => listTs(f));
  const loads = new Map<string, string[]>();
  const dynamicTargets = new Set<string>();
  const importedBySrc = new Set<string>();
  const src = join(root, 'src') + sep;
  for (const file of files) {
    const refs = importsOf(readFileSync(file, 'utf8'))
      .filter((r) => !r.typeOnly)
      .map((r) => ({ target: resolveImport(file, r.spec), dynamic: r.dynamic === true }))
      .filter((r) => r.target.endsWith('.ts') && existsSync(r.target));
    loads.set(
      file,
      refs.filter((r) => !r.dynamic).map((r) => r.target),
    );
    for (const r of refs) {
      if (r.dynamic) dynamicTargets.add(r.target);
      else if (file.startsWith(src)) importedBySrc.add(r.target);
    }
  }
  const roots = files.filter((f) => !f.startsWith(src) || !importedBySrc.has(f) || dynamicTargets.has(f));
  const out: LayerViolation[] = [];
  for (const start of roots) {
    const seen = new Set<string>([start]);
    const stack = [start];
    while (stack.length > 0)
      for (const next of loads.get(stack.pop()!) ?? []) if (!seen.has(next)) (seen.add(next), stack.push(next));
    if (seen.has(defaults) && !seen.has(device))
      out.push({
        rule: 'device-load',
        message: `${relative(root, start)} loads src/runtime/defaults.ts but not src/runtime/device.ts, which registers the Device class it resolves placements with: import an entry point (src/runtime/index.js, ...) or src/runtime/device.js`,
      });
  }
  return out;
}

/** Everything this tool checks: the layer rule, file lengths, benchmark imports, Device loaded wherever placements are resolved, CUDA calls only through the checked layer. */
export function checkAll(root: string): LayerViolation[] {
  return [
    ...checkLayers(root),
    ...checkFileLengths(root),
    ...checkBenchImports(root),
    ...checkDeviceLoaded(root),
    ...checkCheckedCalls(root),
  ];
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const violations = checkAll(join(import.meta.dirname, '..'));
  for (const v of violations) console.error(`${v.rule}: ${v.message}`);
  console.log(
    violations.length === 0
      ? `layers: no upward import, no cycle (type-only imports included), no file over ${MAX_LINES} lines, bench on entry points, CUDA called only through the checked layer`
      : `layers: ${violations.length} violation(s)`,
  );
  process.exitCode = violations.length === 0 ? 0 : 1;
}
