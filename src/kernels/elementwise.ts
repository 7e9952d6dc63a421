/**
 * CuPy's ElementwiseKernel for TypeScript: write the per-element operation, not the kernel.
 *
 * ```ts
 * const saxpy = elementwise({
 *   name: 'saxpy',
 *   inputs: 'const float x, const float y',
 *   params: 'float a',
 *   outputs: 'float z',
 *   operation: 'z = a * x + y',
 * });
 * saxpy(x, y, 2.0, z, { stream });   // x, y, z: DeviceBuffer<'f32'>; a tsc error for a 'f64' buffer
 * ```
 *
 * Arguments come in CuPy's order: inputs, then params, then outputs, then optional launch options.
 * A type written as a placeholder (`T x, T y`, any name starting with a capital) takes the dtype of
 * the buffers given for it, and one kernel is compiled per combination of dtypes. The operation sees
 * each input as a value, each output as a reference (`z = ...`, `z += ...`), the params, the index
 * `i` and the element count `n`. Compiled with NVRTC on first use per device (synchronous, cached
 * in memory and on disk), launched grid-stride over the common length of the buffers.
 */
import type { Context } from '../runtime/context.js';
import type { KernelArg, KernelParamType } from '../runtime/kernel.js';
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { DType } from '../runtime/memory/dtype.js';
import { bf16Bits, f16Bits } from '../runtime/memory/half.js';
import { resolveStream, type Stream } from '../runtime/stream.js';
import {
  checkUniqueNames,
  DeclarationError,
  dtypeIn,
  DTYPE_C_NAMES,
  parseDeclarations,
  prelude,
  resolvePlaceholders,
  scalarParamType,
  scalarParameterCode,
  type GeneratedKernel,
  type KernelCallArgs,
  type Declaration,
} from './declarations.js';
import { gridFor, jitKernel } from './jit.js';

/** What `elementwise()` takes. The string literals give the returned function its argument types. */
export interface ElementwiseDescriptor<I extends string, O extends string, P extends string> {
  /** Input buffers: 'const float x, const float y' (a C type or a placeholder, then the name). */
  inputs: I;
  /** Output buffers: 'float z'. Each is a reference in the operation. */
  outputs: O;
  /** Scalar parameters, passed by value: 'float a, int k' (default none). */
  params?: P | undefined;
  /** The C++ statement(s) run for each element `i` of `n`: 'z = a * x + y'. */
  operation: string;
  /** The kernel's name, a C identifier (default 'elementwise'); it appears in profiles and errors. */
  name?: string | undefined;
  /** C++ placed before the kernel: helper `__device__` functions, `#include`s of NVRTC's built-in headers. */
  preamble?: string | undefined;
}

/** Launch options of one call. */
export interface ElementwiseLaunchOptions {
  /** Enqueue on this stream (default: the buffers' context's default stream, `context.defaultStream`). */
  stream?: Stream | undefined;
  /** Threads per block (default 256). */
  block?: number | undefined;
}

/** The arguments of an elementwise function: inputs, params, outputs, then optional options. */
export type ElementwiseArgs<I extends string, O extends string, P extends string> = KernelCallArgs<
  I,
  O,
  P,
  ElementwiseLaunchOptions
>;

/** The function `elementwise()` returns: call it to launch; `source()` shows the generated CUDA. */
export type ElementwiseFunction<I extends string, O extends string, P extends string> = GeneratedKernel<
  ElementwiseArgs<I, O, P>
>;

interface Parsed {
  name: string;
  inputs: Declaration[];
  outputs: Declaration[];
  params: Declaration[];
  operation: string;
  preamble: string;
}

const C_IDENT = /^[A-Za-z_]\w*$/;

/** Validates and parses a descriptor (no GPU needed). */
export function parseElementwise(d: ElementwiseDescriptor<string, string, string>): Parsed {
  const name = d.name ?? 'elementwise';
  if (!C_IDENT.test(name))
    throw new DeclarationError(`elementwise name must be a C identifier, got ${JSON.stringify(name)}`);
  if (typeof d.operation !== 'string' || d.operation.trim() === '')
    throw new DeclarationError(`elementwise ${name}: operation must be C++ code such as 'z = a * x + y'`);
  const inputs = parseDeclarations(d.inputs, `elementwise ${name} inputs`);
  const outputs = parseDeclarations(d.outputs, `elementwise ${name} outputs`);
  const params = parseDeclarations(d.params ?? '', `elementwise ${name} params`);
  if (outputs.length === 0)
    throw new DeclarationError(`elementwise ${name}: outputs must declare at least one buffer, e.g. 'float z'`);
  for (const o of outputs)
    if (o.isConst) throw new DeclarationError(`elementwise ${name}: output ${o.name} cannot be const`);
  checkUniqueNames([inputs, params, outputs]);
  for (const p of params) if (p.dtype !== undefined) scalarParamType(p.dtype, p.name);
  return { name, inputs, outputs, params, operation: d.operation, preamble: d.preamble ?? '' };
}

/** The CUDA source of one instantiation (the dtypes of every placeholder fixed). */
export function elementwiseSource(p: Parsed, placeholders: ReadonlyMap<string, DType>): string {
  const all = [...p.inputs, ...p.params, ...p.outputs];
  const dtypes = all.map((d) => dtypeIn(d, placeholders));
  let unpack = '';
  const signature: string[] = [];
  for (const d of p.inputs)
    signature.push(`const ${DTYPE_C_NAMES[dtypeIn(d, placeholders)]}* __restrict__ _in_${d.name}`);
  for (const d of p.params) {
    const code = scalarParameterCode(d, dtypeIn(d, placeholders));
    signature.push(code.signature);
    unpack += code.unpack;
  }
  for (const d of p.outputs) signature.push(`${DTYPE_C_NAMES[dtypeIn(d, placeholders)]}* _out_${d.name}`);
  signature.push('const long long n');
  const loads = p.inputs
    .map(
      (d) =>
        `    ${d.isConst ? 'const ' : ''}${DTYPE_C_NAMES[dtypeIn(d, placeholders)]} ${d.name} = _in_${d.name}[i];\n`,
    )
    .join('');
  const refs = p.outputs
    .map((d) => `    ${DTYPE_C_NAMES[dtypeIn(d, placeholders)]}& ${d.name} = _out_${d.name}[i];\n`)
    .join('');
  return `${prelude(dtypes, placeholders)}
${p.preamble}
extern "C" __global__ void ${p.name}(${signature.join(', ')}) {
${unpack}  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) {
${loads}${refs}    ${p.operation.trim().replace(/;?$/, ';')}
  }
}
`;
}

/** The kernel parameter types of one instantiation, in argument order, the element count last. */
export function elementwiseParams(p: Parsed, placeholders: ReadonlyMap<string, DType>): KernelParamType[] {
  return [
    ...p.inputs.map((): KernelParamType => 'ptr'),
    ...p.params.map((d) => scalarParamType(dtypeIn(d, placeholders), d.name)),
    ...p.outputs.map((): KernelParamType => 'ptr'),
    'i64',
  ];
}

/** A scalar argument as its kernel parameter: numbers range-checked by the kernel, f16/bf16 encoded to bits. */
export function encodeScalar(value: unknown, dtype: DType, what: string): number | bigint {
  if (dtype === 'i64' || dtype === 'u64') {
    if (typeof value === 'bigint' || (typeof value === 'number' && Number.isSafeInteger(value))) return value;
    throw new TypeError(`${what}: expected an integer or bigint for ${dtype}, got ${String(value)}`);
  }
  if (typeof value !== 'number')
    throw new TypeError(
      `${what}: expected a number for ${dtype}, got ${typeof value === 'object' ? 'a buffer' : String(value)}`,
    );
  if (dtype === 'f16') return f16Bits(value);
  if (dtype === 'bf16') return bf16Bits(value);
  return value;
}

function isBuffer(x: unknown): x is DeviceBuffer<DType> {
  return x instanceof DeviceBuffer;
}

/** Splits a call's arguments; checks counts, buffers and a common length. */
export function splitCall(
  kernel: string,
  buffersBefore: readonly Declaration[],
  scalars: readonly Declaration[],
  buffersAfter: readonly Declaration[],
  args: readonly unknown[],
): { buffers: DeviceBuffer<DType>[]; scalars: unknown[]; options: ElementwiseLaunchOptions } {
  const count = buffersBefore.length + scalars.length + buffersAfter.length;
  const last = args[args.length - 1];
  const hasOptions = args.length === count + 1 && typeof last === 'object' && last !== null && !isBuffer(last);
  if (args.length !== count && !hasOptions) {
    const names = [...buffersBefore, ...scalars, ...buffersAfter].map((d) => d.name).join(', ');
    throw new TypeError(
      `${kernel} takes ${count} argument(s) (${names}) and optional launch options, got ${args.length}`,
    );
  }
  const options = (hasOptions ? last : {}) as ElementwiseLaunchOptions;
  const buffers: DeviceBuffer<DType>[] = [];
  const order = [
    ...buffersBefore.map((d) => ['buffer', d] as const),
    ...scalars.map((d) => ['scalar', d] as const),
    ...buffersAfter.map((d) => ['buffer', d] as const),
  ];
  const scalarValues: unknown[] = [];
  order.forEach(([kind, d], i) => {
    const a = args[i];
    if (kind === 'buffer') {
      if (!isBuffer(a))
        throw new TypeError(
          `${kernel}: ${d.name} (argument ${i}) must be a DeviceBuffer, got ${a === null ? 'null' : typeof a === 'object' ? (a.constructor?.name ?? 'an object') : typeof a}`,
        );
      buffers.push(a);
    } else scalarValues.push(a);
  });
  return { buffers, scalars: scalarValues, options };
}

/**
 * The common context of the buffers of a call, and the stream it runs on: the one given, else that
 * context's default stream (resolveStream), resolved here once for the call.
 */
export function commonPlacement(
  kernel: string,
  buffers: readonly DeviceBuffer<DType>[],
  given: Stream | undefined,
): { context: Context; stream: Stream } {
  const context = buffers[0]!.context;
  for (const b of buffers) {
    if (b.disposed) throw new TypeError(`${kernel}: buffer "${b.label}" was disposed`);
    if (b.context !== context)
      throw new TypeError(`${kernel}: buffers "${buffers[0]!.label}" and "${b.label}" belong to different contexts`);
  }
  const stream = resolveStream(context, given);
  if (stream.context !== context)
    throw new TypeError(`${kernel}: stream "${stream.label}" belongs to another context than the buffers`);
  return { context, stream };
}

/**
 * Makes an elementwise kernel from C declarations and one operation (see the module comment). The
 * returned function type-checks its arguments against the declarations.
 */
export function elementwise<const I extends string, const O extends string, const P extends string = ''>(
  descriptor: ElementwiseDescriptor<I, O, P>,
): ElementwiseFunction<I, O, P> {
  const parsed = parseElementwise(descriptor);
  const { name } = parsed;
  const bufferDecls = [...parsed.inputs, ...parsed.outputs];
  const launch = (...args: readonly unknown[]): void => {
    const call = splitCall(name, parsed.inputs, parsed.params, parsed.outputs, args);
    const placeholders = resolvePlaceholders(bufferDecls, call.buffers, name);
    const { context, stream } = commonPlacement(name, call.buffers, call.options.stream);
    const n = call.buffers[0]!.length;
    call.buffers.forEach((b, i) => {
      if (b.length !== n)
        throw new RangeError(
          `${name}: ${bufferDecls[i]!.name} has ${b.length} elements but ${bufferDecls[0]!.name} has ${n}; elementwise buffers must have the same length`,
        );
    });
    const kernel = jitKernel(
      context,
      elementwiseSource(parsed, placeholders),
      `${name}.cu`,
      name,
      elementwiseParams(parsed, placeholders),
    );
    const inputs = call.buffers.slice(0, parsed.inputs.length);
    const outputs = call.buffers.slice(parsed.inputs.length);
    const scalars = parsed.params.map((d, i) =>
      encodeScalar(call.scalars[i], dtypeIn(d, placeholders), `${name}: ${d.name}`),
    );
    const kernelArgs: KernelArg[] = [...inputs, ...scalars, ...outputs, n];
    const block = call.options.block ?? 256;
    kernel.launch({ grid: gridFor(context, n, block), block, stream }, ...kernelArgs);
  };
  const fn = launch as unknown as ElementwiseFunction<I, O, P>;
  Object.defineProperty(fn, 'kernelName', { value: name });
  Object.defineProperty(fn, 'source', {
    value: (placeholders: Readonly<Record<string, DType>> = {}): string =>
      elementwiseSource(parsed, new Map(Object.entries(placeholders))),
  });
  return fn;
}
