export * from './launchers.generated.js';
export { loadKernelModule, type KernelModuleOptions } from './load.js';
