/** A parsed C type as clang prints it (`const char *const *`, `unsigned int[3]`, `void (*)(void *)`). */
export type CType =
  | { kind: 'name'; name: string; tagKind?: 'struct' | 'union' | 'enum'; isConst: boolean }
  | { kind: 'pointer'; to: CType; isConst: boolean }
  | { kind: 'array'; of: CType; length: number }
  | { kind: 'function'; result: CType; params: CType[] };

function splitTopLevel(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(' || ch === '[') depth++;
    if (ch === ')' || ch === ']') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) parts.push(cur.trim());
  return parts;
}

export function parseCType(input: string): CType {
  const s = input
    .replace(/__attribute__\(\(.*?\)\)/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  const fn = /^(.*?)\s*\(\s*\*\s*(const\s*)?\)\s*\((.*)\)$/.exec(s);
  if (fn) {
    const params = splitTopLevel(fn[3]!).filter((p) => p !== 'void');
    return {
      kind: 'pointer',
      isConst: false,
      to: { kind: 'function', result: parseCType(fn[1]!), params: params.map(parseCType) },
    };
  }
  const arr = /^(.*?)\s*\[(\d+)\]((?:\[\d+\])*)$/.exec(s);
  if (arr) {
    const inner = parseCType(`${arr[1]}${arr[3]}`);
    return { kind: 'array', of: inner, length: Number(arr[2]) };
  }
  const ptr = /^(.*)\*\s*(const)?\s*(?:restrict|__restrict)?$/.exec(s);
  if (ptr) return { kind: 'pointer', to: parseCType(ptr[1]!), isConst: !!ptr[2] };
  let words = s.split(' ').filter((w) => w && w !== 'volatile' && w !== '__restrict');
  const isConst = words.includes('const');
  words = words.filter((w) => w !== 'const');
  let tagKind: 'struct' | 'union' | 'enum' | undefined;
  if (words[0] === 'struct' || words[0] === 'union' || words[0] === 'enum') {
    tagKind = words[0];
    words = words.slice(1);
  }
  const out: CType = { kind: 'name', name: words.join(' '), isConst };
  if (tagKind) out.tagKind = tagKind;
  return out;
}

/** C scalar type names, as koffi spells them, with the TypeScript type they read and write as. */
export const SCALARS: Record<string, { koffi: string; ts: string; bits: number }> = {
  void: { koffi: 'void', ts: 'void', bits: 0 },
  char: { koffi: 'char', ts: 'number', bits: 8 },
  'signed char': { koffi: 'int8', ts: 'number', bits: 8 },
  'unsigned char': { koffi: 'uint8', ts: 'number', bits: 8 },
  short: { koffi: 'int16', ts: 'number', bits: 16 },
  'unsigned short': { koffi: 'uint16', ts: 'number', bits: 16 },
  int: { koffi: 'int32', ts: 'number', bits: 32 },
  'unsigned int': { koffi: 'uint32', ts: 'number', bits: 32 },
  unsigned: { koffi: 'uint32', ts: 'number', bits: 32 },
  long: { koffi: 'int64', ts: 'number | bigint', bits: 64 },
  'unsigned long': { koffi: 'uint64', ts: 'number | bigint', bits: 64 },
  'long long': { koffi: 'int64', ts: 'number | bigint', bits: 64 },
  'unsigned long long': { koffi: 'uint64', ts: 'number | bigint', bits: 64 },
  size_t: { koffi: 'uint64', ts: 'number | bigint', bits: 64 },
  int8_t: { koffi: 'int8', ts: 'number', bits: 8 },
  uint8_t: { koffi: 'uint8', ts: 'number', bits: 8 },
  int16_t: { koffi: 'int16', ts: 'number', bits: 16 },
  uint16_t: { koffi: 'uint16', ts: 'number', bits: 16 },
  int32_t: { koffi: 'int32', ts: 'number', bits: 32 },
  uint32_t: { koffi: 'uint32', ts: 'number', bits: 32 },
  int64_t: { koffi: 'int64', ts: 'number | bigint', bits: 64 },
  uint64_t: { koffi: 'uint64', ts: 'number | bigint', bits: 64 },
  float: { koffi: 'float', ts: 'number', bits: 32 },
  double: { koffi: 'double', ts: 'number', bits: 64 },
  _Bool: { koffi: 'bool', ts: 'boolean', bits: 8 },
  bool: { koffi: 'bool', ts: 'boolean', bits: 8 },
};
