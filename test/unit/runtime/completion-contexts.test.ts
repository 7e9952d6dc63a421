/**
 * The completion poller with two contexts in one thread, without a GPU: the raw cuEventQuery is
 * replaced by a table of event statuses the test changes, so what is checked is the scheduling
 * (each context's poller settles its own waiters whatever the other holds; an error or a sticky
 * error settles instead of polling forever; long waits keep polling on timers). The query goes
 * through ffi's checked-call layer, which names the poller's own context in its errors.
 */
import { describe, expect, it, vi } from 'vitest';
import { CudaError } from '../../../src/ffi/errors.js';
import { CUresult, type CUevent } from '../../../src/ffi/generated/types.js';
import type { Context } from '../../../src/runtime/context.js';

const status = new Map<string, number>();
const queried: string[] = [];

vi.mock('../../../src/ffi/api.js', async (importOriginal) => {
  const raw = {
    cuEventQuery: (event: CUevent) => {
      const name = event as unknown as string;
      queried.push(name);
      return status.get(name) ?? CUresult.CUDA_ERROR_INVALID_HANDLE;
    },
  };
  return { ...(await importOriginal<object>()), driver: () => raw, driverOutPointers: () => raw };
});

const { CompletionPoller } = await import('../../../src/runtime/completion.js');

/** What the poller needs of a Context: its sticky error and fail(). */
function fakeContext(label: string): { context: Context; poller: InstanceType<typeof CompletionPoller> } {
  let sticky: CudaError | undefined;
  const context = {
    label,
    get stickyError() {
      return sticky;
    },
    fail(error: CudaError) {
      sticky ??= error;
      poller.failAll(error);
    },
  } as unknown as Context;
  const poller = new CompletionPoller(context);
  return { context, poller };
}

const ev = (name: string): CUevent => name as unknown as CUevent;
const NOT_READY = CUresult.CUDA_ERROR_NOT_READY;

async function settledWithin<T>(p: Promise<T>, ms: number): Promise<'resolved' | 'rejected' | 'pending'> {
  return Promise.race([
    p.then(
      () => 'resolved' as const,
      () => 'rejected' as const,
    ),
    new Promise<'pending'>((r) => setTimeout(() => r('pending'), ms)),
  ]);
}

describe('completion pollers of two contexts', () => {
  it("each settles its own waiters while the other's stay pending, and keeps polling (timers) until they complete", async () => {
    const a = fakeContext('device 0');
    const b = fakeContext('device 1');
    status.set('a1', NOT_READY).set('b1', NOT_READY).set('b2', NOT_READY);
    const pa = a.poller.track(1, ev('a1'));
    const pb1 = b.poller.track(7, ev('b1'));
    const pb2 = b.poller.track(8, ev('b2'));
    status.set('b1', 0);
    expect(await settledWithin(pb1, 100)).toBe('resolved');
    expect(await settledWithin(pa, 20)).toBe('pending');
    expect(b.poller.pending).toBe(1);
    // Well past the spin phase: the poller is on 1 ms timers and still sees the completion.
    await new Promise((r) => setTimeout(r, 30));
    status.set('b2', 0).set('a1', 0);
    expect(await settledWithin(Promise.all([pa, pb2]), 200)).toBe('resolved');
    expect(a.poller.pending + b.poller.pending).toBe(0);
    expect(a.poller.lanes + b.poller.lanes).toBe(0);
  });

  it('only the oldest event of a stream is queried; a later one of another stream is not held up by it', async () => {
    const b = fakeContext('device 1');
    status.set('s1-old', NOT_READY).set('s1-new', 0).set('s2', NOT_READY);
    const old = b.poller.track(1, ev('s1-old'));
    const newer = b.poller.track(1, ev('s1-new'));
    const other = b.poller.track(2, ev('s2'));
    queried.length = 0;
    await new Promise((r) => setTimeout(r, 10));
    expect(queried).not.toContain('s1-new');
    status.set('s2', 0);
    expect(await settledWithin(other, 100)).toBe('resolved');
    expect(await settledWithin(newer, 20)).toBe('pending');
    status.set('s1-old', 0);
    expect(await settledWithin(Promise.all([old, newer]), 100)).toBe('resolved');
  });

  it("an error status rejects that waiter (never NOT_READY forever); a sticky one rejects every waiter of its context (the other context's poller learns of it from its own queries)", async () => {
    const a = fakeContext('device 0');
    const b = fakeContext('device 1');
    status
      .set('bad', CUresult.CUDA_ERROR_INVALID_HANDLE)
      .set('a-ok', NOT_READY)
      .set('b-wait', NOT_READY)
      .set('b-fault', NOT_READY);
    const bad = b.poller.track(1, ev('bad'));
    await expect(bad).rejects.toMatchObject({ status: 'CUDA_ERROR_INVALID_HANDLE' });
    const aOk = a.poller.track(1, ev('a-ok'));
    const bWait = b.poller.track(2, ev('b-wait'));
    const bFault = b.poller.track(3, ev('b-fault'));
    status.set('b-fault', CUresult.CUDA_ERROR_ILLEGAL_ADDRESS);
    // Named after the poller's own context, whichever is current.
    await expect(bFault).rejects.toMatchObject({
      status: 'CUDA_ERROR_ILLEGAL_ADDRESS',
      sticky: true,
      during: 'completion of work; device 1',
    });
    await expect(bWait).rejects.toMatchObject({ status: 'CUDA_ERROR_ILLEGAL_ADDRESS' });
    // New waits on the lost context fail at once.
    await expect(b.poller.track(4, ev('b-wait'))).rejects.toMatchObject({ status: 'CUDA_ERROR_ILLEGAL_ADDRESS' });
    expect(await settledWithin(aOk, 20)).toBe('pending');
    status.set('a-ok', 0);
    expect(await settledWithin(aOk, 100)).toBe('resolved');
  });

  it('a waiter whose own query fails sticky hears its error once, though the context fails (every waiter) inside that query', async () => {
    const b = fakeContext('device 1');
    status.set('first', NOT_READY).set('second', NOT_READY);
    const heard: string[] = [];
    const note = (name: string) => (error?: Error) =>
      heard.push(`${name}: ${error ? (error as CudaError).status : 'done'}`);
    b.poller.enqueue(1, ev('first'), note('first'), note('first'));
    b.poller.enqueue(2, ev('second'), note('second'), note('second'));
    await new Promise((r) => setTimeout(r, 5));
    status.set('first', CUresult.CUDA_ERROR_ILLEGAL_ADDRESS);
    await new Promise((r) => setTimeout(r, 20));
    expect(heard.sort()).toEqual(['first: CUDA_ERROR_ILLEGAL_ADDRESS', 'second: CUDA_ERROR_ILLEGAL_ADDRESS']);
    expect(b.poller.pending).toBe(0);
  });
});
