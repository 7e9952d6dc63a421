export * from './api.js';
export { bindLibrary, missingSymbols, type BindOptions } from './bind.js';
export { CudaError, CudaUnavailableError, statusName, type CudaLibraryName, type CudaErrorContext } from './errors.js';
export { loadLibrary, isLibraryAvailable, searchFolders } from './libraries.js';
export type { Handle, Pointer, Out, FunctionDeclaration, Direction } from './support.js';
export * as types from './generated/types.js';
