/**
 * The AsyncCoordinator's failure names before issue 9. There is one failure hierarchy now,
 * orchestration's (the Coordinator is the one dependency engine); these are the same classes.
 */
import { DependencyFailedError, OperationError } from '../orchestration/errors.js';

/** @deprecated use OperationError (the same class). */
export const AsyncOperationError = OperationError;
/** @deprecated use OperationError (the same class). */
export type AsyncOperationError = OperationError;
/** @deprecated use DependencyFailedError (the same class). */
export const AsyncDependencyError = DependencyFailedError;
/** @deprecated use DependencyFailedError (the same class). */
export type AsyncDependencyError = DependencyFailedError;
