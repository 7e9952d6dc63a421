/**
 * C parameter declarations as `elementwise()` and `reduction()` take them ('const float x, T y'):
 * parsed at run time into names and dtypes, and at compile time (template literal types) into the
 * TypeScript types of the arguments, so a call with a buffer of the wrong dtype or a missing
 * argument is a tsc error.
 */
import type { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { DType } from '../runtime/memory/dtype.js';
import type { KernelParamType } from '../runtime/kernel.js';

/** C type names accepted in declarations and the dtype each means. */
export const C_TYPES = {
  float: 'f32',
  double: 'f64',
  'signed char': 'i8',
  int8_t: 'i8',
  'unsigned char': 'u8',
  uint8_t: 'u8',
  short: 'i16',
  int16_t: 'i16',
  'unsigned short': 'u16',
  uint16_t: 'u16',
  int: 'i32',
  int32_t: 'i32',
  unsigned: 'u32',
  'unsigned int': 'u32',
  uint32_t: 'u32',
  'long long': 'i64',
  int64_t: 'i64',
  'unsigned long long': 'u64',
  uint64_t: 'u64',
  __half: 'f16',
  half: 'f16',
  __nv_bfloat16: 'bf16',
  nv_bfloat16: 'bf16',
  float2: 'c64',
  double2: 'c128',
} as const satisfies Record<string, DType>;

/** A C type name tscuda knows. */
export type CTypeName = keyof typeof C_TYPES;

/** The C type generated code uses for each dtype. */
export const DTYPE_C_NAMES: Record<DType, string> = {
  f32: 'float',
  f64: 'double',
  i8: 'signed char',
  u8: 'unsigned char',
  i16: 'short',
  u16: 'unsigned short',
  i32: 'int',
  u32: 'unsigned int',
  i64: 'long long',
  u64: 'unsigned long long',
  f16: '__half',
  bf16: '__nv_bfloat16',
  c64: 'float2',
  c128: 'double2',
};

/** One parsed declaration: `const float x` → { name: 'x', type: 'float', dtype: 'f32', isConst: true }. */
export interface Declaration {
  readonly name: string;
  /** The type as written, whitespace normalized, `const` removed. */
  readonly type: string;
  /** The dtype of a known C type; undefined for a type placeholder (an identifier starting with a capital: T, TOut). */
  readonly dtype: DType | undefined;
  readonly isConst: boolean;
}

/** A declaration list that does not parse; the message names the list and the bad part. */
export class DeclarationError extends TypeError {
  override readonly name = 'DeclarationError';
}

const IDENT = /^[A-Za-z_]\w*$/;
const PLACEHOLDER = /^[A-Z]\w*$/;
/** Names the generated code uses itself (reduction() reserves a and b too). */
export const RESERVED_NAMES: ReadonlySet<string> = new Set([
  'i',
  'n',
  'int',
  'float',
  'double',
  'const',
  'unsigned',
  'long',
  'short',
  'char',
  'signed',
  'void',
  'return',
]);

/** Parses 'const float x, T y' into declarations. `what` names the list in errors ('inputs', 'params', ...). */
export function parseDeclarations(
  list: string,
  what: string,
  reserved: ReadonlySet<string> = RESERVED_NAMES,
): Declaration[] {
  if (typeof list !== 'string')
    throw new DeclarationError(
      `${what} must be a string of C declarations such as 'const float x, const float y', got ${typeof list}`,
    );
  if (list.trim() === '') return [];
  return list.split(',').map((part) => {
    const words = part.trim().split(/\s+/).filter(Boolean);
    const isConst = words.includes('const');
    const rest = words.filter((w) => w !== 'const');
    const name = rest.pop();
    const type = rest.join(' ');
    if (!name || !IDENT.test(name) || type === '')
      throw new DeclarationError(
        `${what}: cannot read ${JSON.stringify(part.trim())} as '<type> <name>' (e.g. 'const float x')`,
      );
    if (name.startsWith('_') || reserved.has(name))
      throw new DeclarationError(
        `${what}: the name ${JSON.stringify(name)} is reserved; the generated code uses ${[...reserved].join(', ')} and names starting with _`,
      );
    if (type in C_TYPES) return { name, type, dtype: C_TYPES[type as CTypeName], isConst };
    if (PLACEHOLDER.test(type)) return { name, type, dtype: undefined, isConst };
    throw new DeclarationError(
      `${what}: unknown type ${JSON.stringify(type)} of ${name}; use one of ${Object.keys(C_TYPES).join(', ')}, or a placeholder starting with a capital (T)`,
    );
  });
}

/** Throws when a name is declared twice across the lists. */
export function checkUniqueNames(lists: readonly (readonly Declaration[])[]): void {
  const seen = new Set<string>();
  for (const list of lists) {
    for (const d of list) {
      if (seen.has(d.name)) throw new DeclarationError(`${d.name} is declared twice`);
      seen.add(d.name);
    }
  }
}

/** The kernel parameter type a scalar of this dtype is passed as (f16/bf16 travel as raw 16-bit patterns). */
export function scalarParamType(dtype: DType, name: string): KernelParamType {
  switch (dtype) {
    case 'f16':
    case 'bf16':
      return 'u16';
    case 'c64':
    case 'c128':
      throw new DeclarationError(
        `params: ${name} is ${dtype}; complex values can be buffers but not scalar parameters`,
      );
    default:
      return dtype;
  }
}

/**
 * Resolves each placeholder type from the buffers given for it: every buffer declared `T` must
 * have the same dtype, and that dtype is T for the scalars declared `T` too.
 */
export function resolvePlaceholders(
  declarations: readonly Declaration[],
  buffers: readonly (DeviceBuffer<DType> | undefined)[],
  kernel: string,
): Map<string, DType> {
  const types = new Map<string, DType>();
  declarations.forEach((d, i) => {
    const b = buffers[i];
    if (!b) return;
    if (d.dtype === undefined) {
      const known = types.get(d.type);
      if (known !== undefined && known !== b.dtype)
        throw new TypeError(
          `${kernel}: ${d.name} is ${d.type}, which is ${known} from an earlier argument, but got a ${b.dtype} buffer`,
        );
      types.set(d.type, b.dtype);
    } else if (d.dtype !== b.dtype)
      throw new TypeError(
        `${kernel}: ${d.name} is declared ${d.type} (${d.dtype}) but got a ${b.dtype} buffer "${b.label}"`,
      );
  });
  for (const d of declarations) {
    if (d.dtype === undefined && !types.has(d.type))
      throw new TypeError(
        `${kernel}: the type ${d.type} of ${d.name} is not fixed by any buffer argument; declare it with a C type`,
      );
  }
  return types;
}

/** The dtype a declaration has in one call. */
export function dtypeIn(d: Declaration, placeholders: ReadonlyMap<string, DType>): DType {
  return d.dtype ?? placeholders.get(d.type)!;
}

/** `#include`s and `typedef`s for the dtypes and placeholders of one instantiation. */
export function prelude(dtypes: Iterable<DType>, placeholders: ReadonlyMap<string, DType>): string {
  const used = new Set(dtypes);
  const lines: string[] = [];
  if (used.has('f16')) lines.push('#include <cuda_fp16.h>');
  if (used.has('bf16')) lines.push('#include <cuda_bf16.h>');
  for (const [name, dtype] of [...placeholders].sort(([a], [b]) => a.localeCompare(b)))
    lines.push(`typedef ${DTYPE_C_NAMES[dtype]} ${name};`);
  return lines.join('\n');
}

/** The C declaration of a scalar parameter in the kernel signature, and the line that turns its bits back into a value. */
export function scalarParameterCode(d: Declaration, dtype: DType): { signature: string; unpack: string } {
  if (dtype === 'f16')
    return {
      signature: `unsigned short _bits_${d.name}`,
      unpack: `  const __half ${d.name} = __ushort_as_half(_bits_${d.name});\n`,
    };
  if (dtype === 'bf16')
    return {
      signature: `unsigned short _bits_${d.name}`,
      unpack: `  const __nv_bfloat16 ${d.name} = __ushort_as_bfloat16(_bits_${d.name});\n`,
    };
  return { signature: `const ${DTYPE_C_NAMES[dtype]} ${d.name}`, unpack: '' };
}

// ---- compile-time parsing (template literal types) ----

type Space = ' ' | '\n' | '\t';
type Trim<S extends string> = S extends `${Space}${infer R}` ? Trim<R> : S extends `${infer R}${Space}` ? Trim<R> : S;
type SplitList<S extends string> =
  Trim<S> extends '' ? [] : S extends `${infer A},${infer B}` ? [Trim<A>, ...SplitList<B>] : [Trim<S>];
type LastWord<S extends string> = S extends `${string} ${infer R}` ? LastWord<R> : S;
type StripConst<S extends string> = S extends `const ${infer R}`
  ? StripConst<Trim<R>>
  : S extends `${infer R} const`
    ? Trim<R>
    : S;
type TypePart<D extends string> = D extends `${infer T} ${LastWord<D>}` ? StripConst<Trim<T>> : never;

/** The dtype of a declaration like 'const float x' ('f32'); DType for a placeholder type (T). */
export type DeclaredDType<D extends string> =
  TypePart<D> extends infer T ? (T extends CTypeName ? (typeof C_TYPES)[T] : DType) : DType;

type BufferTuple<L> = L extends [infer H extends string, ...infer R]
  ? [DeviceBuffer<DeclaredDType<H>>, ...BufferTuple<R>]
  : [];
type ScalarTuple<L> = L extends [infer H extends string, ...infer R]
  ? [ScalarArg<DeclaredDType<H>>, ...ScalarTuple<R>]
  : [];

/** The argument types of a buffer declaration list: 'const float x, T y' → [DeviceBuffer<'f32'>, DeviceBuffer<DType>]. */
export type BufferArgs<S extends string> = string extends S ? DeviceBuffer<DType>[] : BufferTuple<SplitList<S>>;

/** What a scalar of a dtype is passed as from TypeScript. */
export type ScalarArg<T extends DType> = T extends 'i64' | 'u64' ? number | bigint : number;

/** The argument types of a scalar declaration list: 'float a, long long k' → [number, number | bigint]. */
export type ScalarArgs<S extends string> = string extends S ? (number | bigint)[] : ScalarTuple<SplitList<S>>;

/** The arguments of a generated kernel function: its inputs, params and outputs, then optional launch options `L`. */
export type KernelCallArgs<I extends string, O extends string, P extends string, L> =
  [...BufferArgs<I>, ...ScalarArgs<P>, ...BufferArgs<O>] | [...BufferArgs<I>, ...ScalarArgs<P>, ...BufferArgs<O>, L];

/** A function `elementwise()` or `reduction()` returns: call it to launch; `source()` shows the generated CUDA. */
export interface GeneratedKernel<A extends unknown[]> {
  (...args: A): void;
  /** The kernel's name (a reduction's kernels take it as their prefix). */
  readonly kernelName: string;
  /** The CUDA source generated for these dtypes (placeholders by name: `{ T: 'f16' }`). */
  source(placeholders?: Readonly<Record<string, DType>>): string;
}
