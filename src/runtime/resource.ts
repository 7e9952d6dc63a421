/** What every object owning a CUDA resource shares: a label, dispose()/using, a leak safety net. */

interface Held {
  kind: string;
  id: number;
  label: string | undefined;
  release: () => void;
}

const debugLeaks = (): boolean => !!process.env.TSCUDA_DEBUG;

const registry = new FinalizationRegistry<Held>((held) => {
  if (debugLeaks()) console.warn(`tscuda: ${held.kind} "${held.label ?? `${held.kind}#${held.id}`}" was garbage-collected without dispose(); releasing it now`);
  try {
    held.release();
  } catch {
    /* the context may already be gone */
  }
});

let nextId = 0;

export class DisposedError extends Error {
  override readonly name = 'DisposedError';
}

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

  get disposed(): boolean {
    return this.#disposed;
  }

  protected assertAlive(): void {
    if (this.#disposed) throw new DisposedError(`${this.#kind} "${this.label}" was disposed and cannot be used`);
  }

  protected abstract releaseNative(): void;

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    registry.unregister(this);
    this.releaseNative();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}
