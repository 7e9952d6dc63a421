export * from './launchers.generated.js';
export { loadKernelModule, type KernelModuleOptions } from './load.js';
export {
  elementwise,
  type ElementwiseDescriptor,
  type ElementwiseFunction,
  type ElementwiseArgs,
  type ElementwiseLaunchOptions,
} from './elementwise.js';
export {
  reduction,
  type ReductionDescriptor,
  type ReductionFunction,
  type ReductionArgs,
  type ReductionLaunchOptions,
} from './reduction.js';
export {
  DeclarationError,
  C_TYPES,
  type CTypeName,
  type DeclaredDType,
  type BufferArgs,
  type ScalarArgs,
  type KernelCallArgs,
  type GeneratedKernel,
} from './declarations.js';
