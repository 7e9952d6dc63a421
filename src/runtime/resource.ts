/** What every object owning a CUDA resource shares: a label, dispose()/using, a leak safety net. */

interface Held {
  kind: string;
  label: string;
  release: () => void;
}

const debugLeaks = (): boolean => !!process.env.TSCUDA_DEBUG;

const registry = new FinalizationRegistry<Held>((held) => {
  if (debugLeaks()) console.warn(`tscuda: ${held.kind} "${held.label}" was garbage-collected without dispose(); releasing it now`);
  try {
    held.release();
  } catch {
    /* the context may already be gone */
  }
});

const counters = new Map<string, number>();
export function defaultLabel(kind: string): string {
  const n = (counters.get(kind) ?? 0) + 1;
  counters.set(kind, n);
  return `${kind}#${n}`;
}

export class DisposedError extends Error {
  override readonly name = 'DisposedError';
}

export abstract class Resource {
  readonly label: string;
  #disposed = false;
  #kind: string;

  protected constructor(kind: string, label: string | undefined) {
    this.#kind = kind;
    this.label = label ?? defaultLabel(kind);
  }

  /** Arms the safety net; `release` must not capture `this`. */
  protected track(release: () => void): void {
    registry.register(this, { kind: this.#kind, label: this.label, release }, this);
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
