/**
 * A stand-in StreamPool for the Coordinator's CUDA-free tests: it records what is enqueued and
 * completes it when the test says so. Its submit() returns no event, so no edge reaches the
 * driver (the edges themselves are tested on the GPU).
 */
import type { SettleListener } from '../../../src/orchestration/pool-member.js';
import type { StreamPool } from '../../../src/orchestration/stream-pool.js';
import type { Stream } from '../../../src/runtime/stream.js';

class FakeStream {
  constructor(readonly label: string) {}
  readonly handle = null;
  use(): null {
    return null;
  }
}

export class FakePool {
  readonly label = 'fake pool';
  readonly streams: Stream[] = ['s0', 's1', 's2'].map((l) => new FakeStream(l) as unknown as Stream);
  readonly log: string[] = [];
  /** In submission order: the n-th piece of work enqueued. */
  readonly submitted: { name: string; listener: SettleListener; settled: boolean }[] = [];
  #tick = 0;

  has(stream: Stream): boolean {
    return this.streams.includes(stream);
  }

  acquire(): Stream {
    return this.streams[this.#tick++ % this.streams.length]!;
  }

  submit(
    stream: Stream,
    _kind: string,
    enqueue: (s: Stream) => unknown,
    options: { name?: string } | undefined,
    listener: SettleListener,
  ): undefined {
    enqueue(stream);
    const name = options?.name ?? '?';
    this.log.push(`enqueue ${name}`);
    this.submitted.push({ name, listener, settled: false });
    return undefined;
  }

  /** The GPU finishes the oldest unsettled work named `name` (or reports `error` for it). */
  complete(name: string, error?: Error): void {
    const work = this.submitted.find((w) => w.name === name && !w.settled);
    if (!work) throw new Error(`${name} is not in flight`);
    work.settled = true;
    this.log.push(`complete ${name}`);
    work.listener(error);
  }

  /** The GPU finishes the n-th piece of work submitted. */
  completeAt(index: number, error?: Error): void {
    const work = this.submitted[index]!;
    work.settled = true;
    work.listener(error);
  }

  completeAll(): void {
    for (const w of this.submitted) if (!w.settled) this.complete(w.name);
  }

  get inFlight(): string[] {
    return this.submitted.filter((w) => !w.settled).map((w) => w.name);
  }

  asPool(): StreamPool {
    return this as unknown as StreamPool;
  }
}
