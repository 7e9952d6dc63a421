/** The failures of the dependency-graph engine (Coordinator) and of the fronts built on it. */

/** An operation failed; `cause` says why, `operationId` which operation (its Coordinator id). */
export class OperationError extends Error {
  override readonly name: string = 'OperationError';
  readonly operationId: number;

  constructor(message: string, operationId: number, options?: { cause: unknown }) {
    super(message, options);
    this.operationId = operationId;
  }
}

/**
 * A dependent that did not run (or whose result cannot be trusted) because something it
 * depends on failed; `cause` is that dependency's failure, `root` the failure that started
 * the chain (never itself a DependencyFailedError).
 */
export class DependencyFailedError extends OperationError {
  override readonly name: string = 'DependencyFailedError';
  /** The id of the dependency that failed (-1 where it is not known). */
  readonly dependencyId: number;
  /** The failure that started the chain. */
  readonly root: Error;

  constructor(
    operation: string,
    dependency: string,
    cause: Error,
    ids: { operationId?: number | undefined; dependencyId?: number | undefined } = {},
  ) {
    const root = cause instanceof DependencyFailedError ? cause.root : cause;
    super(
      `"${operation}" did not run: its dependency "${dependency}" failed${cause === root ? '' : ` (because of: ${root.message})`}`,
      ids.operationId ?? -1,
      { cause },
    );
    this.dependencyId = ids.dependencyId ?? -1;
    this.root = root;
  }
}

/** A host step ran past its `timeoutMs` (or its `signal` aborted it); its dependents fail with it. */
export class OperationTimeoutError extends OperationError {
  override readonly name: string = 'OperationTimeoutError';
}

/** An operation was asked about after its record was dropped (settled long ago, beyond the retention bound). */
export class OperationForgottenError extends RangeError {
  override readonly name: string = 'OperationForgottenError';
}
