/**
 * The layer rule of docs/design.md, checked over src/: each folder imports only from the layers
 * below it (and from report/, which is pure), never from tests, benchmarks or examples, and no
 * file takes part in an import cycle of value imports (`import type` is erased at run time, so a
 * Device that names its Context's type and a Context that names its Device's is no cycle; an
 * upward `import type` still breaks the layer rule).
 *
 * Written here rather than with dependency-cruiser because that tool parses TypeScript with the
 * `typescript` package below 7, and this project compiles with TypeScript 7.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

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
  rule: 'layer' | 'outside-src' | 'cycle' | 'unknown-folder';
  message: string;
}

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm;

/** One relative import: where it points, and whether it is erased at run time (`import type`, `export type`). */
export interface ImportRef {
  spec: string;
  typeOnly: boolean;
}

/** Relative module specifiers a TypeScript source imports or re-exports (comments removed first). */
export function importsOf(source: string): ImportRef[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/[^\n]*/g, '$1');
  const out: ImportRef[] = [];
  for (const m of code.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (!spec || !spec.startsWith('.')) continue;
    const head = m[0].trimStart();
    const typeOnly = /^(import|export)\s+type\b/.test(head) || /^import\s*\{\s*(type\s+[\w$]+\s*(as\s+[\w$]+\s*)?,?\s*)+\}\s*from/.test(head);
    out.push({ spec, typeOnly });
  }
  return out;
}

function listTs(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...listTs(p));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
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
    const refs = importsOf(readFileSync(file, 'utf8')).map((r) => ({ target: resolveImport(file, r.spec), typeOnly: r.typeOnly }));
    const targets = refs.map((r) => r.target);
    graph.set(
      file,
      refs.filter((r) => !r.typeOnly && r.target.startsWith(src + '/') && r.target.endsWith('.ts')).map((r) => r.target),
    );
    const layer = layerOf(root, file);
    if (layer !== '(root)' && !(layer in LAYERS)) violations.push({ rule: 'unknown-folder', message: `${name(file)}: src/${layer}/ is not a layer of docs/design.md` });
    for (const target of targets) {
      if (!target.startsWith(src + '/')) {
        violations.push({ rule: 'outside-src', message: `${name(file)} imports ${name(target)}: shipped code never imports tests, benchmarks or examples` });
        continue;
      }
      const to = layerOf(root, target);
      if (layer === '(root)' || to === layer || (to === '(root)' && layer === '(root)')) continue;
      if (to === '(root)') {
        violations.push({ rule: 'layer', message: `${name(file)} imports ${name(target)}: layers never import the package root` });
        continue;
      }
      const allowed = LAYERS[layer] ?? [];
      if (!allowed.includes(to))
        violations.push({ rule: 'layer', message: `${name(file)} (${layer}) imports ${name(target)} (${to}): ${layer} may import only ${allowed.join(', ') || 'itself'}` });
    }
  }
  for (const cycle of cycles(graph)) violations.push({ rule: 'cycle', message: `files that import each other in a cycle: ${cycle.map(name).join(', ')}` });
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

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const violations = checkLayers(join(import.meta.dirname, '..'));
  for (const v of violations) console.error(`${v.rule}: ${v.message}`);
  console.log(violations.length === 0 ? 'layers: no upward import, no cycle' : `layers: ${violations.length} violation(s)`);
  process.exitCode = violations.length === 0 ? 0 : 1;
}
