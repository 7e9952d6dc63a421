/** An operation of an AsyncCoordinator (or a stage built on one) failed; `cause` says why. */
export class AsyncOperationError extends Error {
  override readonly name: string = 'AsyncOperationError';
  readonly operationId: number;

  constructor(message: string, operationId: number, options?: { cause: unknown }) {
    super(message, options);
    this.operationId = operationId;
  }
}

/** The operation itself was fine, but an operation it depends on failed: its inputs cannot be trusted. */
export class AsyncDependencyError extends AsyncOperationError {
  override readonly name: string = 'AsyncDependencyError';
  readonly dependencyId: number;

  constructor(message: string, operationId: number, dependencyId: number, options?: { cause: unknown }) {
    super(message, operationId, options);
    this.dependencyId = dependencyId;
  }
}
