import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Project } from 'ts-morph';

/** A C parameter type of a kernel, as the launcher sees it. */
export interface ParamMapping {
  /** The kernel parameter type (src/runtime/kernel.ts KernelParamType). */
  param: 'ptr' | 'i8' | 'u8' | 'i16' | 'u16' | 'i32' | 'u32' | 'i64' | 'u64' | 'f32' | 'f64';
  /** The TypeScript type a launcher argument must have. */
  ts: string;
}

const POINTEES: Record<string, string> = {
  float: 'f32',
  double: 'f64',
  int: 'i32',
  'unsigned int': 'u32',
  unsigned: 'u32',
  'long long': 'i64',
  'unsigned long long': 'u64',
  short: 'i16',
  'unsigned short': 'u16',
  char: 'i8',
  'signed char': 'i8',
  'unsigned char': 'u8',
  float2: 'c64',
  cuComplex: 'c64',
  cuFloatComplex: 'c64',
  double2: 'c128',
  cuDoubleComplex: 'c128',
  __half: 'f16',
  __nv_bfloat16: 'bf16',
  int8_t: 'i8',
  uint8_t: 'u8',
  int16_t: 'i16',
  uint16_t: 'u16',
  int32_t: 'i32',
  uint32_t: 'u32',
  int64_t: 'i64',
  uint64_t: 'u64',
};

const SCALARS: Record<string, ParamMapping> = {
  int: { param: 'i32', ts: 'number' },
  'unsigned int': { param: 'u32', ts: 'number' },
  unsigned: { param: 'u32', ts: 'number' },
  short: { param: 'i16', ts: 'number' },
  'unsigned short': { param: 'u16', ts: 'number' },
  char: { param: 'i8', ts: 'number' },
  'signed char': { param: 'i8', ts: 'number' },
  'unsigned char': { param: 'u8', ts: 'number' },
  float: { param: 'f32', ts: 'number' },
  double: { param: 'f64', ts: 'number' },
  'long long': { param: 'i64', ts: 'bigint' },
  'unsigned long long': { param: 'u64', ts: 'bigint' },
  size_t: { param: 'u64', ts: 'bigint' },
  int8_t: { param: 'i8', ts: 'number' },
  uint8_t: { param: 'u8', ts: 'number' },
  int16_t: { param: 'i16', ts: 'number' },
  uint16_t: { param: 'u16', ts: 'number' },
  int32_t: { param: 'i32', ts: 'number' },
  uint32_t: { param: 'u32', ts: 'number' },
  int64_t: { param: 'i64', ts: 'bigint' },
  uint64_t: { param: 'u64', ts: 'bigint' },
};

/** The whole C-type table, for tests and docs: each C spelling (pointer or scalar) and what a launcher takes for it. */
export const C_TYPE_TABLE: readonly { c: string; mapping: ParamMapping }[] = [
  ...Object.entries(POINTEES).map(([c, dtype]) => ({
    c: `${c}*`,
    mapping: { param: 'ptr' as const, ts: `DeviceBuffer<'${dtype}'>` },
  })),
  { c: 'void*', mapping: { param: 'ptr', ts: 'DeviceBuffer<DType>' } },
  ...Object.entries(SCALARS).map(([c, mapping]) => ({ c, mapping })),
];

/** Maps one C parameter declaration (`const float* __restrict__ x`) to its launcher type. */
export function mapParam(decl: string, kernel: string): { name: string; mapping: ParamMapping } {
  const cleaned = decl
    .replace(/__restrict__|\bconst\b|\bvolatile\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const m = /^(.*?)\s*(\*?)\s*(\w+)$/.exec(cleaned.replace(/\s*\*\s*/g, ' * ').replace(/\s+/g, ' '));
  if (!m) throw new Error(`kernel ${kernel}: cannot read parameter "${decl}"`);
  const base = m[1]!.replace(/\s*\*\s*$/, '').trim();
  const pointer = /\*/.test(decl);
  const name = m[3]!;
  if (pointer) {
    if (base === 'void') return { name, mapping: { param: 'ptr', ts: 'DeviceBuffer<DType>' } };
    const dtype = POINTEES[base];
    if (!dtype) throw new Error(`kernel ${kernel}: no launcher type for parameter ${name} of type ${decl.trim()}`);
    return { name, mapping: { param: 'ptr', ts: `DeviceBuffer<'${dtype}'>` } };
  }
  const scalar = SCALARS[base];
  if (!scalar) throw new Error(`kernel ${kernel}: no launcher type for parameter ${name} of type ${decl.trim()}`);
  return { name, mapping: scalar };
}

export interface KernelSignature {
  name: string;
  declaration: string;
  params: { name: string; mapping: ParamMapping }[];
}

/** Every `extern "C" __global__ void name(...)` in a .cu source. */
export function parseKernels(source: string): KernelSignature[] {
  const noComments = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/[^\n]*/g, '');
  const out: KernelSignature[] = [];
  // `extern "C" __global__ [__launch_bounds__(...)] void [__launch_bounds__(...)] name(params)`
  const bounds = String.raw`(?:__launch_bounds__\s*\([^)]*\)\s*)?`;
  const kernel = new RegExp(String.raw`extern\s+"C"\s+__global__\s+${bounds}void\s+${bounds}(\w+)\s*\(([^)]*)\)`, 'g');
  for (const m of noComments.matchAll(kernel)) {
    const name = m[1]!;
    const raw = m[2]!.trim();
    const params = raw === '' || raw === 'void' ? [] : raw.split(',').map((p) => mapParam(p, name));
    out.push({ name, declaration: `${name}(${raw.replace(/\s+/g, ' ')})`, params });
  }
  return out;
}

/** Names a launcher object already uses, and words a TypeScript parameter cannot be called. */
const RESERVED_KERNEL_NAMES = new Set(['module', 'kernels']);
const RESERVED_WORDS = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends false finally for function if import in ' +
    'instanceof new null return super switch this throw true try typeof var void while with implements interface let package private ' +
    'protected public static yield await arguments eval config'
  ).split(' '),
);

/** A TypeScript identifier for a C parameter name (`in` -> `in_`). */
function tsParamName(name: string): string {
  return RESERVED_WORDS.has(name) ? `${name}_` : name;
}

function pascal(file: string): string {
  return file.replace(/(^|[_-])(\w)/g, (_m, _s, c: string) => c.toUpperCase());
}

/** Where a launcher module lives: how it reaches the runtime and the loader, and where its fatbins are built. */
export interface LauncherTarget {
  /** The folder of the .cu sources, as the header comment names it (`src/kernels`). */
  sourceLabel: string;
  /** Import prefix of src/runtime from the generated file (`../runtime/`). */
  runtime: string;
  /** Import path of src/kernels/load.js from the generated file. */
  load: string;
  /** A TypeScript expression for the fatbin folder, or undefined for the package's kernels/build. */
  buildDir?: string;
}

/** The product kernels: src/kernels/*.cu -> src/kernels/launchers.generated.ts. */
export const PRODUCT_LAUNCHERS: LauncherTarget = {
  sourceLabel: 'src/kernels',
  runtime: '../runtime/',
  load: './load.js',
};
/** The test-only kernels: test/kernels/*.cu -> test/kernels/launchers.generated.ts, built into test/kernels/build. */
export const TEST_LAUNCHERS: LauncherTarget = {
  sourceLabel: 'test/kernels',
  runtime: '../../src/runtime/',
  load: '../../src/kernels/load.js',
  buildDir: "join(import.meta.dirname, 'build')",
};

/** The TypeScript module of typed launchers for every .cu file of `kernelsDir`. */
export function emitLaunchers(
  kernelsDir: string,
  target: LauncherTarget = PRODUCT_LAUNCHERS,
): { text: string; kernels: number; files: number } {
  const files = readdirSync(kernelsDir)
    .filter((f) => f.endsWith('.cu'))
    .sort();
  const dtypeImport = `import type { DType } from '${target.runtime}memory/dtype.js';`;
  const parts: string[] = [
    `/* Generated by codegen/kernels/launchers.ts from ${target.sourceLabel}/*.cu. Do not edit: run \`npm run codegen\`. */`,
    ...(target.buildDir ? ["import { join } from 'node:path';"] : []),
    `import type { DeviceBuffer } from '${target.runtime}memory/device-buffer.js';`,
    dtypeImport,
    `import type { Kernel, KernelParamType, LaunchConfig } from '${target.runtime}kernel.js';`,
    `import type { Module } from '${target.runtime}module.js';`,
    `import { bindKernels, loadKernelModule, wrongArity, type KernelModuleOptions } from '${target.load}';`,
    '',
  ];
  const header = parts.length;
  let kernels = 0;
  for (const file of files) {
    const stem = basename(file, '.cu');
    const id = pascal(stem);
    const sigs = parseKernels(readFileSync(join(kernelsDir, file), 'utf8'));
    const seen = new Set<string>();
    for (const k of sigs) {
      if (RESERVED_KERNEL_NAMES.has(k.name))
        throw new Error(
          `kernels/${file}: kernel ${k.name} clashes with the launcher object's own "${k.name}" property; rename it`,
        );
      if (seen.has(k.name)) throw new Error(`kernels/${file}: kernel ${k.name} is declared twice`);
      seen.add(k.name);
    }
    kernels += sigs.length;
    const table = sigs
      .map((k) => `  ${k.name}: [${k.params.map((p) => `'${p.mapping.param}'`).join(', ')}],`)
      .join('\n');
    parts.push(`/** Parameter types of the kernels in ${target.sourceLabel}/${file}. */`);
    parts.push(
      `export const ${stem.toUpperCase()}_SIGNATURES = {\n${table}\n} as const satisfies Record<string, readonly KernelParamType[]>;`,
    );
    parts.push('');
    const methods = sigs.map((k) => {
      const args = k.params.map((p) => `${tsParamName(p.name)}: ${p.mapping.ts}`);
      return `  /** \`${k.declaration}\` */\n  ${k.name}(config: LaunchConfig${args.map((a) => `, ${a}`).join('')}): void;`;
    });
    parts.push(
      `/** Typed launchers of ${target.sourceLabel}/${file}: C pointer and scalar types become buffer dtypes, numbers and bigints. */`,
    );
    const kernelFields = sigs.map((k) => `    readonly ${k.name}: Kernel;`).join('\n');
    parts.push(
      `export interface ${id}Kernels {\n  /** The loaded fatbin; dispose() it to unload every kernel below. */\n  readonly module: Module;\n` +
        `  /** The underlying Kernel objects (attributes, occupancy, parameterArray for graphs). */\n  readonly kernels: {\n${kernelFields}\n  };\n${methods.join('\n')}\n}`,
    );
    parts.push('');
    const handle = (name: string): string => `kernel_${name}`;
    const handles = [
      `  const kernels = bindKernels(module, ${stem.toUpperCase()}_SIGNATURES);`,
      ...sigs.map((k) => `  const ${handle(k.name)} = kernels.${k.name};`),
    ];
    const impls = sigs.map((k) => {
      const h = handle(k.name);
      const ps = k.params.map((p) => tsParamName(p.name));
      const body = [
        `if (arguments.length !== ${ps.length + 1}) wrongArity('${k.name}', ${ps.length}, arguments.length);`,
        ...ps.map((p, i) => `${h}.setArg(${i}, ${p});`),
        `${h}.launchPrepared(config);`,
      ];
      return `    ${k.name}(config${ps.map((p) => `, ${p}`).join('')}) {\n${body.map((l) => `      ${l}\n`).join('')}    },`;
    });
    parts.push(
      `/**\n * Loads ${target.buildDir ? target.sourceLabel + '/build' : 'kernels/build'}/${stem}.fatbin (or \`options.path\`) into \`options.context\` (default: device 0's) and binds each kernel once.\n` +
        ` * A launch checks its argument count, writes the arguments into the kernel's parameter block and allocates nothing.\n */`,
    );
    parts.push(
      `export function load${id}Kernels(options: KernelModuleOptions = {}): ${id}Kernels {\n  const module = loadKernelModule('${stem}', options${target.buildDir ? `, ${target.buildDir}` : ''});\n${handles.join('\n')}\n` +
        `  return {\n    module,\n    kernels,\n${impls.join('\n')}\n  };\n}`,
    );
    parts.push('');
  }
  const project = new Project({ useInMemoryFileSystem: true });
  // DType is only needed where some kernel takes a void*.
  if (!parts.slice(header).some((line) => line.includes('DeviceBuffer<DType>')))
    parts.splice(parts.indexOf(dtypeImport), 1);
  const sf = project.createSourceFile('launchers.generated.ts', parts.join('\n'));
  sf.formatText({ indentSize: 2, convertTabsToSpaces: true });
  return { text: sf.getFullText(), kernels, files: files.length };
}
