export * from './api.js';
export { bindLibrary, missingSymbols, type BindOptions } from './bind.js';
export { CudaError, CudaUnavailableError, statusName, type CudaLibraryName, type CudaErrorContext } from './errors.js';
export { checkStatus, statusError } from './status.js';
export {
  loadLibrary,
  isLibraryAvailable,
  searchFolders,
  sitePackagesFolders,
  libraryStatus,
  LIBRARY_NAMES,
  type LibraryName,
  type LibraryStatus,
  type SearchEnvironment,
} from './libraries.js';
export type { Handle, Pointer, Out, FunctionDeclaration, Direction } from './support.js';
export * as types from './generated/types.js';
export { NcclError, checkNccl, ncclError, ncclLastError, ncclStatusName, disableNvlinkMulticast, NCCL_NVLS_SETTING } from './nccl.js';
