import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { type AstNode, docOf, hasDeprecatedAttr, locateTopLevel } from './clang-ast.js';
import type {
  Snapshot,
  SnapshotEnum,
  SnapshotField,
  SnapshotFunction,
  SnapshotRecord,
  SnapshotTypedef,
} from './snapshot.js';

export interface LibrarySource {
  library: Snapshot['library'];
  header: string;
  /** Symbols whose name starts with this belong to the library. */
  prefix: string;
  /**
   * Take types only from the header itself, not from the CUDA headers it includes (nccl.h
   * includes cuda_runtime.h, whose types the runtime's snapshot already holds).
   */
  ownTypesOnly?: boolean;
}

export const LIBRARY_SOURCES: LibrarySource[] = [
  { library: 'driver', header: 'cuda.h', prefix: 'cu' },
  { library: 'runtime', header: 'cuda_runtime_api.h', prefix: 'cuda' },
  { library: 'cufft', header: 'cufft.h', prefix: 'cufft' },
  { library: 'nvrtc', header: 'nvrtc.h', prefix: 'nvrtc' },
  // NCCL 2.x (several GPUs): nccl.h from the libnccl-dev package or the nvidia-nccl-cu13 wheel, copied into .headers/.
  { library: 'nccl', header: 'nccl.h', prefix: 'nccl', ownTypesOnly: true },
];

/** Where CUDA headers live: the toolkit, then `.headers/` (cufft.h and nvrtc.h copied from the GPU host; never committed). */
export function headerSearchPath(root: string): string[] {
  const toolkit = [process.env.TSCUDA_CUDA_PATH, process.env.CUDA_HOME, process.env.CUDA_PATH, '/usr/local/cuda']
    .filter((p): p is string => !!p)
    .map((p) => join(p, 'include'));
  return [join(root, '.headers'), ...toolkit].filter((p) => existsSync(p));
}

export function findHeader(root: string, header: string): string | undefined {
  for (const dir of headerSearchPath(root)) if (existsSync(join(dir, header))) return join(dir, header);
  return undefined;
}

export async function findClang(): Promise<string | undefined> {
  for (const name of [process.env.TSCUDA_CLANG, 'clang-19', 'clang']) {
    if (!name) continue;
    try {
      await execa(name, ['--version']);
      return name;
    } catch {
      /* try the next name */
    }
  }
  return undefined;
}

async function parse(clang: string, headerPath: string, includeDirs: string[], defines: string[]): Promise<AstNode> {
  const args = [
    '-x',
    'c',
    '-fsyntax-only',
    '-fparse-all-comments',
    '-Xclang',
    '-ast-dump=json',
    ...defines.map((d) => `-D${d}`),
    ...includeDirs.map((d) => `-I${d}`),
    '-',
  ];
  const { stdout } = await execa(clang, args, { input: `#include "${headerPath}"\n`, maxBuffer: 1 << 30 });
  return JSON.parse(stdout) as AstNode;
}

/** `#define cuMemAlloc cuMemAlloc_v2`: the public name of each versioned symbol. */
async function functionMacros(
  clang: string,
  headerPath: string,
  includeDirs: string[],
  defines: string[],
  prefix: string,
): Promise<Map<string, string>> {
  const args = ['-x', 'c', '-E', '-dM', ...defines.map((d) => `-D${d}`), ...includeDirs.map((d) => `-I${d}`), '-'];
  const { stdout } = await execa(clang, args, { input: `#include "${headerPath}"\n`, maxBuffer: 1 << 28 });
  const raw = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const m = /^#define (\w+) (.+)$/.exec(line);
    if (m && m[1]!.startsWith(prefix)) raw.set(m[1]!, m[2]!.trim());
  }
  // Expand the per-thread helper macros the headers use (api ## _ptds) in their two spellings.
  const out = new Map<string, string>();
  for (const [name, value] of raw) {
    const ptds = /^__CUDA(?:RT)?_API_(PTDS|PTSZ)\((\w+)\)$/.exec(value);
    if (ptds) {
      const helper =
        stdout.includes(`#define __CUDA_API_${ptds[1]}(api) api ## _${ptds[1]!.toLowerCase()}`) ||
        stdout.includes(`#define __CUDART_API_${ptds[1]}(api) api ## _${ptds[1]!.toLowerCase()}`);
      out.set(name, helper ? `${ptds[2]}_${ptds[1]!.toLowerCase()}` : ptds[2]!);
    } else if (/^\w+$/.test(value)) out.set(name, value);
  }
  return out;
}

const ANON = /\((?:unnamed|anonymous)(?: (struct|union|enum))? at ([^):]+):(\d+):(\d+)\)/g;

/** Anonymous records are named by where they are declared, so type strings can refer to them. */
export function normalizeType(qualType: string): string {
  return qualType.replace(
    ANON,
    (_m, _k: string, file: string, line: string, col: string) =>
      `__anon_${basename(file).replace(/\W/g, '_')}_${line}_${col}`,
  );
}

function anonTag(file: string | undefined, line: number | undefined, col: number | undefined): string {
  return `__anon_${basename(file ?? 'unknown').replace(/\W/g, '_')}_${line}_${col}`;
}

function isCudaFile(file: string | undefined, includeDirs: string[]): boolean {
  return !!file && includeDirs.some((d) => file.startsWith(d));
}

function record(node: AstNode, tag: string, file: string | undefined): SnapshotRecord {
  const fields: SnapshotField[] = [];
  let line: number | undefined = node.loc?.line;
  let pendingAnon: SnapshotRecord | undefined;
  for (const child of node.inner ?? []) {
    if (child.loc?.line !== undefined) line = child.loc.line;
    if (child.kind === 'RecordDecl') {
      const childTag = child.name ? child.name : anonTag(file, line, child.loc?.col);
      pendingAnon = record(child, childTag, file);
    } else if (child.kind === 'FieldDecl') {
      const type = normalizeType(child.type!.qualType);
      const field: SnapshotField = { name: child.name ?? '', type };
      if (pendingAnon && type.includes(pendingAnon.tag)) {
        field.record = pendingAnon;
        pendingAnon = undefined;
      }
      fields.push(field);
    }
  }
  const out: SnapshotRecord = {
    tag,
    kind: node.tagUsed === 'union' ? 'union' : 'struct',
    complete: !!node.completeDefinition,
    fields,
  };
  if (hasDeprecatedAttr(node)) out.deprecated = true;
  return out;
}

function enumeration(node: AstNode, name: string): SnapshotEnum {
  let next = 0n;
  const constants = [];
  for (const c of node.inner ?? []) {
    if (c.kind !== 'EnumConstantDecl') continue;
    const valueNode = (c.inner ?? []).find((x) => x.kind === 'ConstantExpr');
    const value = valueNode?.value !== undefined ? BigInt(valueNode.value) : next;
    next = value + 1n;
    const doc = docOf(c).brief;
    constants.push({ name: c.name!, value: value.toString(), ...(doc ? { doc } : {}) });
  }
  const fits32 = constants.every((c) => BigInt(c.value) >= -(2n ** 31n) && BigInt(c.value) < 2n ** 31n);
  const underlying = node.fixedUnderlyingType?.qualType ?? (fits32 ? 'int' : 'unsigned int');
  const out: SnapshotEnum = { name, underlying, constants };
  if (node.name) out.tag = node.name;
  if (hasDeprecatedAttr(node)) out.deprecated = true;
  return out;
}

function functions(root: AstNode, headerPath: string, prefix: string): Map<string, { node: AstNode; line: number }> {
  const out = new Map<string, { node: AstNode; line: number }>();
  for (const { node, file, line } of locateTopLevel(root)) {
    if (node.kind === 'FunctionDecl' && file === headerPath && node.name?.startsWith(prefix) && !out.has(node.name)) {
      out.set(node.name, { node, line: line ?? 0 });
    }
  }
  return out;
}

function describeFunction(node: AstNode, name: string): SnapshotFunction {
  const doc = docOf(node);
  const params = (node.inner ?? [])
    .filter((p) => p.kind === 'ParmVarDecl')
    .map((p, i) => {
      const pname = p.name ?? `arg${i}`;
      const pdoc = doc.params.get(pname)?.replace(/^-\s*/, '');
      return { name: pname, type: normalizeType(p.type!.qualType), ...(pdoc ? { doc: pdoc } : {}) };
    });
  const result = normalizeType(node.type!.qualType.replace(/\s*\(.*$/s, ''));
  const fn: SnapshotFunction = { symbol: node.name!, name, result, params };
  if (doc.brief) fn.doc = doc.brief;
  if (doc.deprecated || hasDeprecatedAttr(node)) fn.deprecated = true;
  return fn;
}

export async function extract(
  clang: string,
  root: string,
  source: LibrarySource,
  cudaVersion: string,
): Promise<Snapshot> {
  const headerPath = findHeader(root, source.header);
  if (!headerPath) throw new Error(`${source.header} not found in ${headerSearchPath(root).join(', ')}`);
  const includeDirs = [...new Set([dirname(headerPath), ...headerSearchPath(root)])];
  const ast = await parse(clang, headerPath, includeDirs, []);
  const perThreadAst = await parse(clang, headerPath, includeDirs, ['CUDA_API_PER_THREAD_DEFAULT_STREAM']);
  const macros = await functionMacros(clang, headerPath, includeDirs, [], source.prefix);
  const perThreadMacros = await functionMacros(
    clang,
    headerPath,
    includeDirs,
    ['CUDA_API_PER_THREAD_DEFAULT_STREAM'],
    source.prefix,
  );
  const publicName = new Map<string, string>();
  for (const [name, symbol] of macros) publicName.set(symbol, name);

  const current = functions(ast, headerPath, source.prefix);
  const perThread = functions(perThreadAst, headerPath, source.prefix);
  const snapshotFunctions: SnapshotFunction[] = [];
  for (const [symbol, { node }] of current) {
    const name = publicName.get(symbol) ?? symbol;
    const fn = describeFunction(node, name);
    const pt = perThreadMacros.get(name);
    if (pt && pt !== symbol && perThread.has(pt)) fn.perThreadSymbol = pt;
    snapshotFunctions.push(fn);
  }
  const asts = [ast];
  if (source.library === 'driver') {
    // The header keeps the pre-versioning ABIs for the driver's own build; bind them apart, marked legacy.
    const internalAst = await parse(clang, headerPath, includeDirs, ['__CUDA_API_VERSION_INTERNAL']);
    asts.push(internalAst);
    const internal = functions(internalAst, headerPath, source.prefix);
    const known = new Set([...current.keys(), ...[...perThreadMacros.values()]]);
    for (const [symbol, { node }] of internal) {
      if (known.has(symbol) || /_pt(ds|sz)$/.test(symbol)) continue;
      const fn = describeFunction(node, symbol);
      fn.legacy = true;
      fn.deprecated = true;
      snapshotFunctions.push(fn);
    }
  }

  const enums: SnapshotEnum[] = [];
  const records: SnapshotRecord[] = [];
  const typedefs: SnapshotTypedef[] = [];
  const seenRecords = new Map<string, SnapshotRecord>();
  const seenNames = new Set<string>();
  // `typedef enum { ... } nvrtcResult;`: clang prints the typedef as `enum nvrtcResult`, so the anonymous declaration just before takes that name.
  let lastAnonymous: SnapshotEnum | SnapshotRecord | undefined;
  for (const { node, file, line, col } of asts.flatMap((a) => locateTopLevel(a))) {
    if (!isCudaFile(file, includeDirs)) continue;
    if (source.ownTypesOnly && file !== headerPath) continue;
    if (node.kind === 'EnumDecl') {
      const name = node.name ?? anonTag(file, line, col);
      if (seenNames.has(`enum ${name}`)) continue;
      seenNames.add(`enum ${name}`);
      const e = enumeration(node, name);
      enums.push(e);
      lastAnonymous = node.name ? undefined : e;
      continue;
    } else if (node.kind === 'RecordDecl') {
      const tag = node.name ?? anonTag(file, line, col);
      const rec = record(node, tag, file);
      const prev = seenRecords.get(tag);
      if (prev && prev.complete) continue;
      if (prev) records.splice(records.indexOf(prev), 1);
      seenRecords.set(tag, rec);
      records.push(rec);
      lastAnonymous = node.name ? undefined : rec;
      continue;
    } else if (node.kind === 'TypedefDecl' && node.name && !seenNames.has(node.name)) {
      seenNames.add(node.name);
      const m = /^(enum|struct|union) (\w+)$/.exec(node.type!.qualType);
      if (lastAnonymous && m && m[2] === node.name) {
        if ('constants' in lastAnonymous) lastAnonymous.name = node.name;
        else {
          seenRecords.delete(lastAnonymous.tag);
          lastAnonymous.tag = node.name;
          seenRecords.set(node.name, lastAnonymous);
        }
      }
      const td: SnapshotTypedef = { name: node.name, type: normalizeType(node.type!.qualType) };
      if (hasDeprecatedAttr(node)) td.deprecated = true;
      typedefs.push(td);
    }
    lastAnonymous = undefined;
  }
  return {
    library: source.library,
    header: source.header,
    cudaVersion,
    functions: snapshotFunctions,
    enums,
    records,
    typedefs,
  };
}
