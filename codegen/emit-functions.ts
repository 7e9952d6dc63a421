import { type CType, parseCType } from './ctype.js';
import { docText, koffiSpec, safeIdent, tsValue } from './emit-types.js';
import type { SnapshotFunction, SnapshotParam } from './snapshot.js';
import type { TypeUniverse } from './universe.js';
import { READINESS_QUERIES, STATUS_TYPES } from '../src/ffi/support.js';

const QUERIES: ReadonlySet<string> = new Set(READINESS_QUERIES);

/** Direction of a pointer parameter as koffi sees it: 0 in, 1 out (a single value), 2 in/out (arrays, buffers). */
export type Direction = 0 | 1 | 2;

const OUT_DOC =
  /^(-\s*)?(returned|returns|pointer to (store|return|the returned|returned|new|an? (signed |unsigned )?\w+ (in which|where|to))|time between|properties for|the returned|handle representing|pointer to version|location (to|where) (return|store)|output|on success|the captured|optional location|optional parameter to receive|pointer to imported|optionally returns|resulting|value of handle returned|pointer to (a )?user allocated|pointer to a properties structure|flags set|1 if|major revision|minor revision|number of (functions|kernels))/i;
const NOT_SINGLE = /\barray\b|\blist\b|\bbuffer\b|see description/i;

/**
 * Out-parameters of headers that document none (nccl.h has no @param lines): `function.param`.
 * ncclCommInitAll's `comm` is an array of ndev handles, so it stays in/out.
 */
const KNOWN_OUT_PARAMS: ReadonlySet<string> = new Set([
  'ncclCommInitRank.comm',
  'ncclCommInitRankConfig.comm',
  'ncclCommInitRankScalable.newcomm',
  'ncclCommSplit.newcomm',
  'ncclCommShrink.newcomm',
  'ncclCommGetAsyncError.asyncError',
  'ncclCommCount.count',
  'ncclCommCuDevice.device',
  'ncclCommUserRank.rank',
  'ncclCommRegister.handle',
  'ncclCommWindowRegister.win',
  'ncclRedOpCreatePreMulSum.op',
  'ncclMemAlloc.ptr',
]);

/** A parameter is an out-parameter when it points at one value the call fills, as its documentation says. */
export function direction(u: TypeUniverse, p: SnapshotParam, fn?: SnapshotFunction): Direction {
  if (fn && KNOWN_OUT_PARAMS.has(`${fn.name}.${p.name}`)) return 1;
  const r = u.resolve(parseCType(p.type));
  if (r.kind !== 'pointer' || u.handleTag(r)) return 0;
  const to = u.resolve(r.to);
  if (to.kind === 'function') return 0;
  if ((to.kind === 'name' || to.kind === 'pointer') && to.isConst) return 0;
  if ((r.to.kind === 'name' || r.to.kind === 'pointer') && r.to.isConst) return 0;
  if (to.kind === 'name' && to.name === 'char') return 0;
  if (to.kind === 'name' && to.name === 'void') return 0;
  const single = !!u.scalar(to) || to.kind === 'pointer' || (to.kind === 'name' && !!u.records.get(to.name)?.complete);
  if (single && !NOT_SINGLE.test(p.doc ?? '') && (OUT_DOC.test(p.doc ?? '') || /_out$/.test(p.name))) return 1;
  // Undocumented parameters of getters and constructors (the runtime header leaves many bare) are their results.
  if (single && !p.doc && fn && /Get|Create/.test(fn.name)) return 1;
  return 2;
}

/** The TypeScript type of an argument. */
export function tsParam(u: TypeUniverse, p: SnapshotParam, dir: Direction): string {
  const t = parseCType(p.type);
  const r = u.resolve(t);
  if (dir === 1 && r.kind === 'pointer') {
    const value = tsValue(u, r.to);
    return u.recordOf(r.to) ? `Partial<${value}>` : `Out<${value}>`;
  }
  if (r.kind !== 'pointer') return tsValue(u, t);
  if (u.handleTag(r)) return `${tsValue(u, t)} | null`;
  const to = u.resolve(r.to);
  if (to.kind === 'function') return 'Pointer';
  if (to.kind === 'name' && to.name === 'char' && to.isConst) return 'string | null';
  if (to.kind === 'pointer') {
    const inner = u.resolve(to.to);
    if (inner.kind === 'name' && inner.name === 'char' && inner.isConst) return 'readonly (string | null)[] | null';
  }
  const rec = u.recordOf(r.to);
  if (rec && to.kind === 'name' && to.isConst) return `${tsValue(u, r.to)} | Pointer`;
  return 'Pointer';
}

export function tsResult(u: TypeUniverse, fn: SnapshotFunction): string {
  const t = parseCType(fn.result);
  const r = u.resolve(t);
  if (r.kind === 'pointer') {
    const to = u.resolve(r.to);
    if (to.kind === 'name' && to.name === 'char') return 'string | null';
    return u.handleTag(r) ? `${tsValue(u, t)} | null` : 'bigint | null';
  }
  return tsValue(u, t);
}

export interface EmittedFunction {
  signature: string;
  /** A status function's checked form, `name: CheckedCall<[in-parameters], result>`; any other function as it is. */
  checkedSignature: string;
  /** [name, symbol, result, [param name, koffi type, direction][], per-thread symbol] */
  declaration: string;
  deprecated: boolean;
  doc: string | undefined;
}

export function emitFunction(u: TypeUniverse, fn: SnapshotFunction): EmittedFunction {
  const dirs = fn.params.map((p) => direction(u, p, fn));
  const params = fn.params.map((p, i) => `${safeIdent(p.name)}: ${tsParam(u, p, dirs[i]!)}`);
  const result = tsResult(u, fn);
  const signature = `${fn.name}(${params.join(', ')}): ${result}`;
  const isStatus = STATUS_TYPES.includes(
    parseCType(fn.result).kind === 'name' ? (parseCType(fn.result) as { name: string }).name : '',
  );
  const ins = fn.params
    .map((p, i) => (dirs[i] === 1 ? undefined : `${safeIdent(p.name)}: ${tsParam(u, p, dirs[i]!)}`))
    .filter((x): x is string => !!x);
  const outs = fn.params
    .map((p, i) =>
      dirs[i] === 1
        ? { name: p.name, type: tsValue(u, (u.resolve(parseCType(p.type)) as Extract<CType, { kind: 'pointer' }>).to) }
        : undefined,
    )
    .filter((x): x is { name: string; type: string } => !!x);
  let checkedResult: string;
  if (!isStatus) checkedResult = result;
  else if (QUERIES.has(fn.name)) checkedResult = 'boolean';
  else if (outs.length === 0) checkedResult = 'void';
  else if (outs.length === 1) checkedResult = outs[0]!.type;
  else checkedResult = `{ ${outs.map((o) => `${JSON.stringify(o.name)}: ${o.type};`).join(' ')} }`;
  const checkedSignature = isStatus
    ? `${fn.name}: CheckedCall<[${ins.join(', ')}], ${checkedResult}>`
    : `${fn.name}(${ins.join(', ')}): ${checkedResult}`;
  const declParams = fn.params.map(
    (p, i) => `[${JSON.stringify(p.name)}, ${JSON.stringify(koffiSpec(u, parseCType(p.type)))}, ${dirs[i]}]`,
  );
  const resultSpec = koffiSpec(u, parseCType(fn.result));
  const declaration = `[${JSON.stringify(fn.name)}, ${JSON.stringify(fn.symbol)}, ${JSON.stringify(resultSpec)}, [${declParams.join(', ')}]${fn.perThreadSymbol ? `, ${JSON.stringify(fn.perThreadSymbol)}` : ''}]`;
  return { signature, checkedSignature, declaration, deprecated: !!fn.deprecated, doc: docText(fn.doc) };
}
