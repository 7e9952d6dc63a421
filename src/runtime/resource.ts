/** What every object owning a CUDA resource shares: a label, dispose()/using, a leak safety net. */

interface Held {
  kind: string;
  id: number;
  label: string | undefined;
  release: () => void;
}

const debugLeaks = (): boolean => !!process.env.TSCUDA_DEBUG;

const registry = new FinalizationRegistry<Held>((held) => {
  const name = `${held.kind} "${held.label ?? `${held.kind}#${held.id}`}"`;
  if (debugLeaks()) console.warn(`tscuda: ${name} was garbage-collected without dispose(); releasing it now`);
  try {
    held.release();
  } catch (e) {
    // Never thrown (this runs from the garbage collector), never swallowed: a process warning says what failed.
    process.emitWarning(`tscuda: releasing ${name} after garbage collection failed: ${e instanceof Error ? e.message : String(e)}`, { code: 'TSCUDA_RELEASE_FAILED' });
  }
});

let nextId = 0;

/** A disposed tscuda object was used, as the receiver of a call or as an argument to one. */
export class DisposedError extends Error {
  override readonly name = 'DisposedError';
}

/**
 * The base of every object that owns a CUDA resource: a label, `dispose()` and `using`, and a
 * FinalizationRegistry net that releases what was never disposed (and warns under TSCUDA_DEBUG).
 * A disposed object throws DisposedError, naming it, wherever it is used.
 */
export abstract class Resource {
  #label: string | undefined;
  readonly #id = ++nextId;
  #disposed = false;
  #kind: string;

  protected constructor(kind: string, label: string | undefined) {
    this.#kind = kind;
    this.#label = label;
  }

  /** The label given at creation, or `Kind#n`; built on first use so creating objects stays cheap. */
  get label(): string {
    return (this.#label ??= `${this.#kind}#${this.#id}`);
  }

  /** Arms the safety net; `release` must not capture `this`. */
  protected track(release: () => void): void {
    registry.register(this, { kind: this.#kind, id: this.#id, label: this.#label, release }, this);
  }

  /** True once dispose() ran. */
  get disposed(): boolean {
    return this.#disposed;
  }

  /** The kind of object ('Stream', 'DeviceBuffer', ...), as messages name it. */
  get kind(): string {
    return this.#kind;
  }

  /** Throws DisposedError naming this object if it was disposed: call it on objects passed as arguments. */
  checkAlive(): void {
    if (this.#disposed) throw new DisposedError(`${this.#kind} "${this.label}" was disposed and cannot be used`);
  }

  protected assertAlive(): void {
    if (this.#disposed) throw new DisposedError(`${this.#kind} "${this.label}" was disposed and cannot be used`);
  }

  /** Frees the native resource; called once, by dispose(). */
  protected abstract releaseNative(): void;

  /** Releases the resource now. Calling it again does nothing. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    registry.unregister(this);
    this.releaseNative();
  }

  /** `using` support: the same as dispose(). */
  [Symbol.dispose](): void {
    this.dispose();
  }
}

/**
 * Checks that `value` is a live instance of `type` (a tscuda class), for arguments: a plain
 * object shaped like one (`{ handle: 1n }`) is a TypeError, a disposed one a DisposedError.
 */
export function expectResource<R extends Resource>(value: unknown, type: abstract new (...args: never[]) => R, what: string): R {
  if (!(value instanceof type)) {
    const got = value === null ? 'null' : typeof value === 'object' ? `a plain ${value.constructor?.name ?? 'object'}` : typeof value;
    throw new TypeError(`${what} must be a ${type.name}, got ${got}`);
  }
  value.checkAlive();
  return value;
}
