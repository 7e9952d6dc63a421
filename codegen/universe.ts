import { type CType, parseCType, SCALARS } from './ctype.js';
import type { Snapshot, SnapshotEnum, SnapshotRecord } from './snapshot.js';

/** Every type the four snapshots declare, merged by name, with the questions the emitter asks of them. */
export class TypeUniverse {
  readonly typedefs = new Map<string, CType>();
  readonly typedefDeprecated = new Set<string>();
  readonly enums = new Map<string, SnapshotEnum>();
  /** Enum tag or typedef name -> the name the enum is emitted under. */
  readonly enumNames = new Map<string, string>();
  readonly records = new Map<string, SnapshotRecord>();

  constructor(snapshots: Snapshot[]) {
    for (const snap of snapshots) {
      for (const rec of snap.records) {
        const prev = this.records.get(rec.tag);
        if (!prev || (!prev.complete && rec.complete)) this.records.set(rec.tag, rec);
      }
      for (const e of snap.enums) if (!this.enums.has(e.name)) this.enums.set(e.name, e);
      for (const td of snap.typedefs) {
        if (this.typedefs.has(td.name) || SCALARS[td.name]) continue;
        this.typedefs.set(td.name, parseCType(td.type));
        if (td.deprecated) this.typedefDeprecated.add(td.name);
      }
    }
    for (const e of this.enums.values()) this.enumNames.set(e.name, e.name);
    // `typedef enum cudaError_enum {...} CUresult;` is emitted as CUresult.
    for (const [name, t] of this.typedefs) {
      if (t.kind === 'name' && t.tagKind === 'enum' && this.enums.has(t.name)) {
        const e = this.enums.get(t.name)!;
        if (this.enumNames.get(t.name) === t.name) {
          this.enumNames.set(t.name, name);
          this.enumNames.set(name, name);
        } else this.enumNames.set(name, this.enumNames.get(t.name)!);
        void e;
      }
    }
  }

  /** Follows typedef names down to a scalar, a tag, a pointer, an array or a function. */
  resolve(t: CType): CType {
    let cur = t;
    for (let i = 0; i < 32 && cur.kind === 'name' && !cur.tagKind && !SCALARS[cur.name]; i++) {
      const next = this.typedefs.get(cur.name);
      if (!next) break;
      cur = next.kind === 'name' ? { ...next, isConst: next.isConst || cur.isConst } : next;
    }
    return cur;
  }

  /** The enum emitted for a name, following typedefs, or undefined. */
  enumOf(t: CType): string | undefined {
    let cur: CType = t;
    for (let i = 0; i < 32 && cur.kind === 'name'; i++) {
      const named = this.enumNames.get(cur.name);
      if (named && (cur.tagKind === 'enum' || !cur.tagKind)) return named;
      const next = cur.tagKind ? undefined : this.typedefs.get(cur.name);
      if (!next) return undefined;
      cur = next;
    }
    return undefined;
  }

  recordOf(t: CType): SnapshotRecord | undefined {
    const r = this.resolve(t);
    return r.kind === 'name' && (r.tagKind === 'struct' || r.tagKind === 'union' || r.name.startsWith('__anon_'))
      ? this.records.get(r.name)
      : undefined;
  }

  /** `typedef struct CUstream_st *CUstream`: the opaque tag a handle type points at. */
  handleTag(t: CType): string | undefined {
    const r = this.resolve(t);
    if (r.kind !== 'pointer') return undefined;
    const to = this.resolve(r.to);
    if (to.kind !== 'name' || !to.tagKind || to.tagKind === 'enum') return undefined;
    const rec = this.records.get(to.name);
    return !rec || !rec.complete ? to.name : undefined;
  }

  scalar(t: CType): (typeof SCALARS)[string] | undefined {
    const r = this.resolve(t);
    if (r.kind !== 'name') return undefined;
    if (SCALARS[r.name]) return SCALARS[r.name];
    if (r.tagKind === 'enum' || this.enumNames.has(r.name)) {
      const e = this.enums.get(r.name) ?? this.enums.get(this.enumNames.get(r.name)!);
      return e && e.underlying.includes('unsigned') ? SCALARS['unsigned int'] : SCALARS.int;
    }
    return undefined;
  }
}
