/** What every object owning a CUDA resource shares: a label, dispose()/using, a leak safety net. */
import { processLost } from '../ffi/sticky.js';
import { withArticle } from './article.js';

interface Held {
  kind: string;
  id: number;
  label: string | undefined;
  release: () => void;
}

const debugLeaks = (): boolean => !!process.env.TSCUDA_DEBUG;

const registry = new FinalizationRegistry<Held>((held) => {
  const name = `${held.kind} "${held.label ?? `${held.kind}#${held.id}`}"`;
  // After a sticky error the driver refuses every call: there is nothing to release and nothing to report.
  if (processLost()) return;
  if (debugLeaks()) console.warn(`tscuda: ${name} was garbage-collected without dispose(); releasing it now`);
  try {
    held.release();
  } catch (e) {
    if (processLost()) return;
    // Never thrown (this runs from the garbage collector), never swallowed: a process warning says what failed.
    process.emitWarning(
      `tscuda: releasing ${name} after garbage collection failed: ${e instanceof Error ? e.message : String(e)}`,
      { code: 'TSCUDA_RELEASE_FAILED' },
    );
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
  /** Registered with the FinalizationRegistry (owns something to release): only then does dispose() unregister. */
  #tracked = false;
  #kind: string;
  readonly #family: string;

  /**
   * `kind` names the object in messages ('DeviceBuffer view'); `family` is the class argument
   * checks accept it as ('DeviceBuffer'; default: `kind`).
   */
  protected constructor(kind: string, label: string | undefined, family: string = kind) {
    if (label !== undefined && typeof label !== 'string')
      throw new TypeError(`${kind} label must be a string, got ${typeof label}`);
    this.#kind = kind;
    this.#family = family;
    this.#label = label;
  }

  /** True when `value` is a real tscuda resource (constructed by Resource, not forged with Object.create). */
  static isResource(value: unknown): value is Resource {
    return typeof value === 'object' && value !== null && #family in value;
  }

  /** True when `value` is a real tscuda resource whose family is `family` ('Stream', 'Event', ...): a brand check, so a look-alike plain object or a subclass of another family is rejected. Does not check that it is alive. */
  static isResourceOf(value: unknown, family: string): value is Resource {
    return typeof value === 'object' && value !== null && #family in value && (value as Resource).#family === family;
  }

  /** The label given at creation, or `Kind#n`; built on first use so creating objects stays cheap. */
  get label(): string {
    return (this.#label ??= `${this.#kind}#${this.#id}`);
  }

  /** Arms the safety net; `release` must not capture `this`. */
  protected track(release: () => void): void {
    registry.register(this, { kind: this.#kind, id: this.#id, label: this.#label, release }, this);
    this.#tracked = true;
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

  /** Throws DisposedError naming this object if it was disposed: methods call it on `this` before touching the native handle (checkAlive() is the public twin, for arguments). */
  protected assertAlive(): void {
    if (this.#disposed) throw new DisposedError(`${this.#kind} "${this.label}" was disposed and cannot be used`);
  }

  /** Frees the native resource; called once, by dispose(). */
  protected abstract releaseNative(): void;

  /**
   * Releases the resource now. Calling it again does nothing. After a sticky error (the context
   * is lost) it is quiet: the driver refuses every call then, and a `using` block unwinding after
   * the fault must not raise a second, unrelated error.
   */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    // Views and wrapped memory were never registered: skipping the lookup keeps their dispose() cheap.
    if (this.#tracked) registry.unregister(this);
    try {
      this.releaseNative();
    } catch (e) {
      if (!processLost()) throw e;
    }
  }

  /** `using` support: the same as dispose(). */
  [Symbol.dispose](): void {
    this.dispose();
  }
}

/** Throws TypeError unless `label` is a string or undefined; called before anything is allocated. */
export function checkLabel(label: unknown, what: string): void {
  if (label !== undefined && typeof label !== 'string')
    throw new TypeError(`${what} label must be a string, got ${label === null ? 'null' : typeof label}`);
}

/** How an argument that is not the expected tscuda object is described: 'null', 'a plain Object', 'number'. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value;
  if (Resource.isResource(value)) return `${value.kind} "${value.label}"`;
  return `a plain ${(value as { constructor?: { name?: string | undefined } | undefined }).constructor?.name ?? 'object'}`;
}

/**
 * Checks that `value` is a live instance of `type` (a tscuda class, or its family name where
 * importing the class would make an import cycle: 'Stream', 'Event'), for arguments: a plain
 * object shaped like one (`{ handle: 1n }`) is a TypeError, a disposed one a DisposedError.
 */
export function expectResource<R extends Resource>(
  value: unknown,
  type: { readonly prototype: R; readonly name: string } | string,
  what: string,
): R {
  if (!isResourceType(value, type)) {
    const name = typeof type === 'string' ? type : type.name;
    throw new TypeError(`${what} must be ${withArticle(name)}, got ${describeValue(value)}`);
  }
  (value as R).checkAlive();
  return value as R;
}

function isResourceType<R extends Resource>(
  value: unknown,
  type: { readonly prototype: R; readonly name: string } | string,
): value is R {
  return typeof type === 'string'
    ? Resource.isResourceOf(value, type)
    : value instanceof (type as unknown as abstract new () => R) && Resource.isResource(value);
}

/**
 * The check of expectResource without its message: true when `value` is a live `type`. Hot paths
 * (launches, copies, records, FFTs) test this first and call expectResource only when it fails,
 * so the message naming the argument is built only for an error, never per call. Hot paths pass
 * the family name ('Stream'): that brand check costs ~1 ns where `instanceof` costs ~15 ns
 * (bench/probe/ffi-overhead.ts over the stub driver), and for a family no class extends it accepts exactly the same values.
 */
export function isLive<R extends Resource>(
  value: unknown,
  type: { readonly prototype: R; readonly name: string } | string,
): value is R {
  return isResourceType(value, type) && !value.disposed;
}
