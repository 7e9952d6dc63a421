/**
 * CuPy's ReductionKernel for TypeScript: a map expression, a reduce expression and an identity.
 *
 * ```ts
 * const l2 = reduction({
 *   name: 'l2norm',
 *   inputs: 'const float x',
 *   output: 'float y',
 *   map: 'x * x',
 *   reduce: 'a + b',
 *   identity: '0',
 *   post: 'y = sqrtf(a)',
 * });
 * l2(x, y, { stream });   // x: DeviceBuffer<'f32'> of n elements, y: DeviceBuffer<'f32'> of 1
 * ```
 *
 * Arguments: inputs, then params, then the output, then optional launch options. The output's
 * length is the number of rows: each output element reduces its contiguous row of
 * `input.length / output.length` input elements (1 output = the whole buffer). `map` sees the
 * inputs of one element, the params and the index `i` within the row; `reduce` combines two
 * accumulators `a` and `b` (it must be associative and commutative: the order is not fixed);
 * `post` writes the output `y` from the row's accumulator `a` (default `y = a`). The accumulator
 * type is `accumulator`, default the output's type, or float for f16/bf16 outputs.
 * Compiled with NVRTC on first use per device (synchronous, cached), launched in one or two
 * passes with a grid computed from the sizes.
 */
import type { KernelArg, KernelParamType } from '../runtime/kernel.js';
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { DType } from '../runtime/memory/dtype.js';
import type { Stream } from '../runtime/stream.js';
import {
  C_TYPES,
  checkUniqueNames,
  DeclarationError,
  dtypeIn,
  DTYPE_C_NAMES,
  parseDeclarations,
  prelude,
  RESERVED_NAMES,
  resolvePlaceholders,
  scalarParamType,
  scalarParameterCode,
  type GeneratedKernel,
  type KernelCallArgs,
  type CTypeName,
  type Declaration,
} from './declarations.js';
import { commonPlacement, encodeScalar, splitCall } from './elementwise.js';
import { jitKernel } from './jit.js';

/** What `reduction()` takes. The string literals give the returned function its argument types. */
export interface ReductionDescriptor<I extends string, O extends string, P extends string> {
  /** Input buffers: 'const float x' (a C type or a placeholder, then the name). */
  inputs: I;
  /** The one output buffer: 'float y'. Its length is the number of rows reduced. */
  output: O;
  /** Scalar parameters, visible in map and post: 'float scale' (default none). */
  params?: P | undefined;
  /** The value each element contributes: 'x * x'. */
  map: string;
  /** Combines accumulators `a` and `b`: 'a + b', 'max(a, b)'. */
  reduce: string;
  /** The reduce's identity, as C++: '0', '-INFINITY'. */
  identity: string;
  /** Writes `y` from the accumulator `a` (default 'y = a'). */
  post?: string | undefined;
  /** The accumulator's C type (default: the output's, float for __half/__nv_bfloat16 outputs). */
  accumulator?: string | undefined;
  /** The kernels' name prefix, a C identifier (default 'reduction'). */
  name?: string | undefined;
  /** C++ placed before the kernels: helper `__device__` functions. */
  preamble?: string | undefined;
}

/** Launch options of one reduction call. */
export interface ReductionLaunchOptions {
  /** Enqueue on this stream (default: the buffers' context's default stream, `context.defaultStream`). */
  stream?: Stream | undefined;
}

/** The arguments of a reduction function: inputs, params, the output, then optional options. */
export type ReductionArgs<I extends string, O extends string, P extends string> = KernelCallArgs<
  I,
  O,
  P,
  ReductionLaunchOptions
>;

/** The function `reduction()` returns: call it to launch; `source()` shows the generated CUDA. */
export type ReductionFunction<I extends string, O extends string, P extends string> = GeneratedKernel<
  ReductionArgs<I, O, P>
>;

interface ParsedReduction {
  name: string;
  inputs: Declaration[];
  output: Declaration;
  params: Declaration[];
  map: string;
  reduce: string;
  identity: string;
  post: string;
  accumulator: string | undefined;
  preamble: string;
}

/** Threads per block of both passes (a power of two: the tree reduction halves it). */
export const REDUCTION_BLOCK = 256;
/** At most this many partial results per row, so that the second pass is one block per row. */
export const MAX_CHUNKS = 1024;

const C_IDENT = /^[A-Za-z_]\w*$/;
const RESERVED = new Set([...RESERVED_NAMES, 'a', 'b', 'k', 'row']);

/** Validates and parses a descriptor (no GPU needed). */
export function parseReduction(d: ReductionDescriptor<string, string, string>): ParsedReduction {
  const name = d.name ?? 'reduction';
  if (!C_IDENT.test(name))
    throw new DeclarationError(`reduction name must be a C identifier, got ${JSON.stringify(name)}`);
  for (const field of ['map', 'reduce', 'identity'] as const) {
    if (typeof d[field] !== 'string' || d[field].trim() === '')
      throw new DeclarationError(`reduction ${name}: ${field} must be a C++ expression`);
  }
  const inputs = parseDeclarations(d.inputs, `reduction ${name} inputs`, RESERVED);
  const outputs = parseDeclarations(d.output, `reduction ${name} output`, RESERVED);
  const params = parseDeclarations(d.params ?? '', `reduction ${name} params`, RESERVED);
  if (inputs.length === 0)
    throw new DeclarationError(`reduction ${name}: inputs must declare at least one buffer, e.g. 'const float x'`);
  if (outputs.length !== 1)
    throw new DeclarationError(`reduction ${name}: output must declare exactly one buffer, e.g. 'float y'`);
  if (outputs[0]!.isConst) throw new DeclarationError(`reduction ${name}: output ${outputs[0]!.name} cannot be const`);
  checkUniqueNames([inputs, params, outputs]);
  for (const p of params) if (p.dtype !== undefined) scalarParamType(p.dtype, p.name);
  const accumulator = d.accumulator?.trim().replace(/\s+/g, ' ');
  if (accumulator !== undefined && !(accumulator in C_TYPES) && !/^[A-Z]\w*$/.test(accumulator)) {
    throw new DeclarationError(`reduction ${name}: unknown accumulator type ${JSON.stringify(accumulator)}`);
  }
  return {
    name,
    inputs,
    output: outputs[0]!,
    params,
    map: d.map,
    reduce: d.reduce,
    identity: d.identity,
    post: d.post ?? 'y = a',
    accumulator,
    preamble: d.preamble ?? '',
  };
}

function accumulatorType(p: ParsedReduction, placeholders: ReadonlyMap<string, DType>): string {
  if (p.accumulator !== undefined) {
    const dtype = C_TYPES[p.accumulator as CTypeName] ?? placeholders.get(p.accumulator);
    if (dtype === undefined)
      throw new TypeError(
        `reduction ${p.name}: the accumulator type ${p.accumulator} is not fixed by any buffer argument`,
      );
    return DTYPE_C_NAMES[dtype];
  }
  const out = dtypeIn(p.output, placeholders);
  return out === 'f16' || out === 'bf16' ? 'float' : DTYPE_C_NAMES[out];
}

/** The CUDA source of one instantiation: `<name>_partial` (map and reduce a chunk of a row) and `<name>_final` (reduce the chunks, post). */
export function reductionSource(p: ParsedReduction, placeholders: ReadonlyMap<string, DType>): string {
  const acc = accumulatorType(p, placeholders);
  const out = p.output;
  const outC = DTYPE_C_NAMES[dtypeIn(out, placeholders)];
  const dtypes = [...p.inputs, ...p.params, out].map((d) => dtypeIn(d, placeholders));
  let unpack = '';
  const paramSig: string[] = [];
  for (const d of p.params) {
    const code = scalarParameterCode(d, dtypeIn(d, placeholders));
    paramSig.push(code.signature);
    unpack += code.unpack;
  }
  const inputSig = p.inputs.map((d) => `const ${DTYPE_C_NAMES[dtypeIn(d, placeholders)]}* __restrict__ _in_${d.name}`);
  const loads = p.inputs
    .map(
      (d) =>
        `      ${d.isConst ? 'const ' : ''}${DTYPE_C_NAMES[dtypeIn(d, placeholders)]} ${d.name} = _in_${d.name}[row * k + i];\n`,
    )
    .join('');
  const postBody = `    ${outC}& ${out.name} = _out_${out.name}[row];\n    ${p.post.trim().replace(/;?$/, ';')}\n`;
  const sig = (parts: string[]): string => parts.filter(Boolean).join(', ');
  return `${prelude(dtypes, placeholders)}
typedef ${acc} _acc_t;
${p.preamble}
__device__ __forceinline__ _acc_t _reduce(const _acc_t a, const _acc_t b) { return (${p.reduce.trim()}); }

__device__ __forceinline__ _acc_t _block_reduce(_acc_t v) {
  __shared__ alignas(_acc_t) unsigned char _raw[${REDUCTION_BLOCK} * sizeof(_acc_t)];
  _acc_t* _s = reinterpret_cast<_acc_t*>(_raw);
  _s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned _w = blockDim.x / 2; _w > 0; _w >>= 1) {
    if (threadIdx.x < _w) _s[threadIdx.x] = _reduce(_s[threadIdx.x], _s[threadIdx.x + _w]);
    __syncthreads();
  }
  return _s[0];
}

// grid (chunks, rows): block (c, row) reduces row elements c*blockDim + t, stepping by chunks*blockDim.
// With one chunk it applies post and writes the output; otherwise it writes its partial result.
extern "C" __global__ void ${p.name}_partial(${sig([...inputSig, ...paramSig, `${outC}* _out_${out.name}`, '_acc_t* _partial', 'const long long k', 'const int _final'])}) {
${unpack}  const long long row = blockIdx.y;
  _acc_t _v = (${p.identity.trim()});
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < k; i += (long long)gridDim.x * blockDim.x) {
${loads}      _v = _reduce(_v, (_acc_t)(${p.map.trim()}));
  }
  const _acc_t a = _block_reduce(_v);
  if (threadIdx.x != 0) return;
  if (!_final) { _partial[row * gridDim.x + blockIdx.x] = a; return; }
  {
${postBody}  }
}

// grid (rows): block row reduces the chunks partial results of its row, then applies post.
extern "C" __global__ void ${p.name}_final(${sig(['const _acc_t* __restrict__ _partial', ...paramSig, `${outC}* _out_${out.name}`, 'const int _chunks'])}) {
${unpack}  const long long row = blockIdx.x;
  _acc_t _v = (${p.identity.trim()});
  for (int _c = threadIdx.x; _c < _chunks; _c += blockDim.x) _v = _reduce(_v, _partial[row * _chunks + _c]);
  const _acc_t a = _block_reduce(_v);
  if (threadIdx.x != 0) return;
  {
${postBody}  }
}
`;
}

/** How a call is split: `chunks` blocks per row in the first pass (1: a single pass). */
export function reductionGeometry(rows: number, k: number, multiprocessors: number): { chunks: number } {
  // Enough blocks to fill the device (4 per SM), but each with at least 8 elements per thread.
  const wanted = Math.ceil((4 * multiprocessors) / rows);
  const most = Math.ceil(k / (REDUCTION_BLOCK * 8));
  return { chunks: Math.max(1, Math.min(wanted, most, MAX_CHUNKS)) };
}

/** The kernel parameter types of the two kernels. */
export function reductionParams(
  p: ParsedReduction,
  placeholders: ReadonlyMap<string, DType>,
): { partial: KernelParamType[]; final: KernelParamType[] } {
  const scalars = p.params.map((d) => scalarParamType(dtypeIn(d, placeholders), d.name));
  return {
    partial: [...p.inputs.map((): KernelParamType => 'ptr'), ...scalars, 'ptr', 'ptr', 'i64', 'i32'],
    final: ['ptr', ...scalars, 'ptr', 'i32'],
  };
}

function accumulatorBytes(cType: string): number {
  const dtype = C_TYPES[cType as CTypeName];
  return dtype === undefined
    ? 8
    : {
        f16: 2,
        bf16: 2,
        i8: 1,
        u8: 1,
        i16: 2,
        u16: 2,
        i32: 4,
        u32: 4,
        f32: 4,
        i64: 8,
        u64: 8,
        f64: 8,
        c64: 8,
        c128: 16,
      }[dtype];
}

/**
 * Makes a reduction kernel from C declarations and map/reduce/identity expressions (see the module
 * comment). The returned function type-checks its arguments against the declarations.
 */
export function reduction<const I extends string, const O extends string, const P extends string = ''>(
  descriptor: ReductionDescriptor<I, O, P>,
): ReductionFunction<I, O, P> {
  const parsed = parseReduction(descriptor);
  const { name } = parsed;
  const bufferDecls = [...parsed.inputs, parsed.output];
  const launch = (...args: readonly unknown[]): void => {
    const call = splitCall(name, parsed.inputs, parsed.params, [parsed.output], args);
    const placeholders = resolvePlaceholders(bufferDecls, call.buffers, name);
    const { context, stream } = commonPlacement(name, call.buffers, call.options.stream);
    const inputs = call.buffers.slice(0, parsed.inputs.length);
    const output = call.buffers[parsed.inputs.length]!;
    const total = inputs[0]!.length;
    for (const [i, b] of inputs.entries())
      if (b.length !== total)
        throw new RangeError(
          `${name}: input ${parsed.inputs[i]!.name} has ${b.length} elements but ${parsed.inputs[0]!.name} has ${total}`,
        );
    const rows = output.length;
    if (total % rows !== 0)
      throw new RangeError(`${name}: the inputs' ${total} elements do not split into the output's ${rows} rows`);
    const maxRows = context.device.properties.maxGridDim[1]!;
    if (rows > maxRows)
      throw new RangeError(
        `${name}: ${rows} output rows exceed the ${maxRows} a launch can reduce at once; split the output`,
      );
    const k = total / rows;
    const source = reductionSource(parsed, placeholders);
    const types = reductionParams(parsed, placeholders);
    const partialKernel = jitKernel(context, source, `${name}.cu`, `${name}_partial`, types.partial);
    const scalars = parsed.params.map((d, i) =>
      encodeScalar(call.scalars[i], dtypeIn(d, placeholders), `${name}: ${d.name}`),
    );
    const { chunks } = reductionGeometry(rows, k, context.device.properties.multiprocessorCount);
    if (chunks === 1) {
      const args1: KernelArg[] = [...inputs, ...scalars, output, 0, k, 1];
      partialKernel.launch({ grid: [1, rows], block: REDUCTION_BLOCK, stream }, ...args1);
      return;
    }
    const finalKernel = jitKernel(context, source, `${name}.cu`, `${name}_final`, types.final);
    // Partial results live for this call only, allocated and freed in stream order (cuMemAlloc on the default stream).
    const bytes = rows * chunks * accumulatorBytes(accumulatorType(parsed, placeholders));
    const partial = DeviceBuffer.alloc('u8', bytes, { stream, label: `${name} partials` });
    try {
      const args1: KernelArg[] = [...inputs, ...scalars, output, partial, k, 0];
      partialKernel.launch({ grid: [chunks, rows], block: REDUCTION_BLOCK, stream }, ...args1);
      const args2: KernelArg[] = [partial, ...scalars, output, chunks];
      finalKernel.launch({ grid: rows, block: REDUCTION_BLOCK, stream }, ...args2);
    } finally {
      partial.dispose();
    }
  };
  const fn = launch as unknown as ReductionFunction<I, O, P>;
  Object.defineProperty(fn, 'kernelName', { value: name });
  Object.defineProperty(fn, 'source', {
    value: (placeholders: Readonly<Record<string, DType>> = {}): string =>
      reductionSource(parsed, new Map(Object.entries(placeholders))),
  });
  return fn;
}
