/** The reduced, committed form of a header's declarations: what the emitter needs, nothing of clang's AST. */
export interface SnapshotParam {
  name: string;
  type: string;
  doc?: string;
}

export interface SnapshotFunction {
  /** The symbol the header's declaration resolves to (after the versioning macros). */
  symbol: string;
  /** The name users write: the header macro that selects `symbol`, or `symbol` itself. */
  name: string;
  /** The per-thread-default-stream symbol (`_ptds`/`_ptsz`), where the header has one. */
  perThreadSymbol?: string;
  result: string;
  params: SnapshotParam[];
  doc?: string;
  deprecated?: boolean;
  /** A pre-versioning ABI entry point that the header declares only for the library's own build. */
  legacy?: boolean;
}

export interface SnapshotEnumConstant {
  name: string;
  value: string;
  doc?: string;
}

export interface SnapshotEnum {
  name: string;
  tag?: string;
  underlying: string;
  constants: SnapshotEnumConstant[];
  deprecated?: boolean;
}

export interface SnapshotField {
  name: string;
  type: string;
  /** Anonymous struct/union members are described inline. */
  record?: SnapshotRecord;
}

export interface SnapshotRecord {
  /** The struct tag, or a synthetic name for anonymous ones. */
  tag: string;
  kind: 'struct' | 'union';
  /** False for forward declarations only (opaque handles). */
  complete: boolean;
  fields: SnapshotField[];
  deprecated?: boolean;
}

export interface SnapshotTypedef {
  name: string;
  type: string;
  deprecated?: boolean;
}

export interface Snapshot {
  library: 'driver' | 'runtime' | 'cufft' | 'nvrtc' | 'nccl';
  header: string;
  cudaVersion: string;
  functions: SnapshotFunction[];
  enums: SnapshotEnum[];
  records: SnapshotRecord[];
  typedefs: SnapshotTypedef[];
}
