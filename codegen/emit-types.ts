import { type CType, parseCType, SCALARS } from './ctype.js';
import type { SnapshotRecord } from './snapshot.js';
import type { TypeUniverse } from './universe.js';

const RESERVED = new Set([
  'default',
  'function',
  'new',
  'delete',
  'var',
  'let',
  'class',
  'enum',
  'export',
  'import',
  'in',
  'of',
  'this',
  'switch',
  'case',
  'return',
  'interface',
  'package',
  'private',
  'protected',
  'public',
  'static',
  'yield',
  'arguments',
  'eval',
  'do',
  'if',
  'for',
  'while',
  'with',
  'try',
  'catch',
  'finally',
  'throw',
  'typeof',
  'instanceof',
  'void',
  'null',
  'true',
  'false',
  'super',
  'extends',
  'implements',
  'const',
  'break',
  'continue',
  'debugger',
  'else',
]);

export function safeIdent(name: string): string {
  return RESERVED.has(name) ? `${name}_` : name;
}

export function docText(s: string | undefined): string | undefined {
  return s?.replace(/\*\//g, '* /').trim() || undefined;
}

/** Status enums keep their name in declarations (koffi aliases of int32), so a status result is known by its type. */
export const STATUS_ALIASES = ['CUresult', 'cudaError_t', 'cufftResult', 'nvrtcResult', 'ncclResult_t'];

/** Koffi type names used in function declarations: every typedef followed down to what koffi knows. */
export function koffiSpec(u: TypeUniverse, t: CType): string {
  if (t.kind === 'name' && STATUS_ALIASES.includes(t.name)) return t.name;
  const r = u.resolve(t);
  const scalar = u.scalar(r);
  if (scalar) return scalar.koffi;
  if (r.kind === 'name') {
    const rec = u.records.get(r.name);
    if (rec?.complete) return r.name;
    throw new Error(`no koffi type for ${JSON.stringify(t)}`);
  }
  if (r.kind === 'pointer') {
    const to = u.resolve(r.to);
    if (to.kind === 'function') return 'void *';
    if (to.kind === 'name' && to.name === 'char') return to.isConst ? 'const char *' : 'char *';
    if (to.kind === 'name' && to.name === 'void') return to.isConst ? 'const void *' : 'void *';
    if (to.kind === 'pointer') {
      const inner = u.resolve(to.to);
      if (inner.kind === 'name' && inner.name === 'char' && inner.isConst) return 'const char **';
      return 'void **';
    }
    const s = u.scalar(to);
    if (s) return `${to.kind === 'name' && to.isConst ? 'const ' : ''}${s.koffi} *`;
    if (to.kind === 'name' && u.records.get(to.name)?.complete) return `${to.isConst ? 'const ' : ''}${to.name} *`;
    return 'void *';
  }
  throw new Error(`no koffi type for ${JSON.stringify(t)}`);
}

/** The TypeScript type a value of this C type reads as. */
export function tsValue(u: TypeUniverse, t: CType): string {
  if (t.kind === 'name' && !t.tagKind && !SCALARS[t.name] && (u.typedefs.has(t.name) || u.enumNames.has(t.name))) {
    return u.enumOf(t) ?? t.name;
  }
  const en = u.enumOf(t);
  if (en) return en;
  const r = u.resolve(t);
  const scalar = u.scalar(r);
  if (scalar) return scalar.ts;
  if (r.kind === 'name') return u.records.get(r.name) ? r.name : 'unknown';
  if (r.kind === 'array') return tsArray(u, r);
  if (r.kind === 'function') return 'Pointer';
  const tag = u.handleTag(r);
  if (tag) return `Handle<'${tag}'>`;
  const to = u.resolve(r.to);
  if (to.kind === 'name' && to.name === 'char' && to.isConst) return 'string';
  return 'bigint';
}

function tsArray(u: TypeUniverse, a: Extract<CType, { kind: 'array' }>): string {
  const of = u.resolve(a.of);
  if (of.kind === 'name' && of.name === 'char') return 'string';
  if (u.scalar(of)) return 'ArrayLike<number>';
  return `${tsValue(u, a.of)}[]`;
}

/** Koffi declaration code for a struct/union member. Pointers are plain addresses in records. */
export function koffiField(u: TypeUniverse, t: CType, fieldName: string, nested?: SnapshotRecord): string {
  if (nested) return koffiRecordExpr(u, nested, true);
  const r = u.resolve(t);
  if (r.kind === 'array') {
    const of = u.resolve(r.of);
    if (of.kind === 'name' && of.name === 'char') {
      // Opaque byte blocks (CUuuid bytes, padding, ncclUniqueId's `internal`) read as bytes, never as C strings cut at a NUL.
      return /bytes|reserved|pad|internal/i.test(fieldName)
        ? `koffi.array('uint8', ${r.length}, 'Typed')`
        : `koffi.array('char', ${r.length}, 'String')`;
    }
    return `koffi.array(${koffiField(u, r.of, fieldName)}, ${r.length})`;
  }
  if (r.kind === 'pointer') {
    const to = u.resolve(r.to);
    return to.kind === 'name' && to.name === 'char' && to.isConst ? `'const char *'` : `'void *'`;
  }
  const scalar = u.scalar(r);
  if (scalar) return `'${scalar.koffi}'`;
  if (r.kind === 'name' && u.records.get(r.name)?.complete) return `'${r.name}'`;
  throw new Error(`no koffi field type for ${JSON.stringify(t)}`);
}

export function koffiRecordExpr(u: TypeUniverse, rec: SnapshotRecord, anonymous: boolean): string {
  const fn = rec.kind === 'union' ? 'koffi.union' : 'koffi.struct';
  const members = rec.fields.map(
    (f, i) => `${JSON.stringify(f.name || `__anon${i}`)}: ${koffiField(u, parseCType(f.type), f.name, f.record)}`,
  );
  return `${fn}(${anonymous ? '' : `${JSON.stringify(rec.tag)}, `}{ ${members.join(', ')} })`;
}

/** The TypeScript interface body of a record. */
export function tsRecordBody(u: TypeUniverse, rec: SnapshotRecord): string {
  const lines = rec.fields.map((f, i) => {
    const name = f.name || `__anon${i}`;
    const type = f.record ? tsRecordBody(u, f.record) : tsValue(u, parseCType(f.type));
    const optional = rec.kind === 'union' ? '?' : '';
    return `${JSON.stringify(name)}${optional}: ${type};`;
  });
  return `{ ${lines.join(' ')} }`;
}

/** Records in an order where every record a member holds by value is declared first. */
export function recordOrder(u: TypeUniverse): SnapshotRecord[] {
  const done = new Set<string>();
  const out: SnapshotRecord[] = [];
  const deps = (rec: SnapshotRecord): string[] => {
    const names: string[] = [];
    const visit = (t: CType): void => {
      const r = u.resolve(t);
      if (r.kind === 'array') visit(r.of);
      else if (r.kind === 'name' && u.records.get(r.name)?.complete && r.name !== rec.tag) names.push(r.name);
    };
    for (const f of rec.fields) {
      if (f.record) names.push(...deps(f.record));
      else visit(parseCType(f.type));
    }
    return names;
  };
  const visit = (rec: SnapshotRecord, stack: Set<string>): void => {
    if (done.has(rec.tag) || stack.has(rec.tag)) return;
    stack.add(rec.tag);
    for (const d of deps(rec)) visit(u.records.get(d)!, stack);
    done.add(rec.tag);
    out.push(rec);
  };
  for (const rec of [...u.records.values()].sort((a, b) => a.tag.localeCompare(b.tag)))
    if (rec.complete) visit(rec, new Set());
  return out;
}
