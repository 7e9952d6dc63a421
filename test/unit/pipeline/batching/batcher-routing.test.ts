import { describe, expect, it } from 'vitest';
import { Batcher } from '../../../../src/pipeline/batching/batcher.js';
import { LONG_WAIT, track, drainMicrotasks, manual, mulberry32, base } from './batcher-fixture.js';

describe('Batcher routing', () => {
  it('gives each of many concurrent submitters its own outputs, in order, whatever the completion order', async () => {
    const random = mulberry32(12345);
    const { calls, dispatch } = manual<{ caller: number; index: number }, string>();
    const maxBatchSize = 16;
    // Every batch in flight at once (asked for explicitly: the default bounds them), so completion order is free.
    const batcher = new Batcher(dispatch, {
      maxBatchSize,
      maxWaitMs: LONG_WAIT,
      channelSize: 10_000,
      maxConcurrentBatches: Infinity,
    });

    const submitted: { caller: number; index: number }[] = [];
    const expected: string[][] = [];
    const results: Promise<string[]>[] = [];
    for (let caller = 0; caller < 300; caller++) {
      const size = Math.floor(random() * 41); // 0..40, empty submits included
      const items = Array.from({ length: size }, (_, index) => ({ caller, index }));
      submitted.push(...items);
      expected.push(items.map(({ caller: c, index }) => `${c}:${index}`));
      if (size === 1 && random() < 0.5) {
        results.push(batcher.submitOne(items[0] ?? { caller, index: 0 }).then((out) => [out]));
      } else {
        results.push(batcher.submit(items));
      }
    }
    void batcher.flush();

    expect(calls.length).toBeGreaterThan(10);
    for (const call of calls) expect(call.items.length).toBeLessThanOrEqual(maxBatchSize);
    expect(calls.flatMap((c) => c.items)).toEqual(submitted); // arrival order, nothing lost or duplicated

    // Complete the batches in reverse order, each with its own outputs.
    for (const call of [...calls].reverse()) {
      call.done.resolve(call.items.map(({ caller, index }) => `${caller}:${index}`));
    }
    expect(await Promise.all(results)).toEqual(expected);
    await batcher.close();
  });

  it('splits a submit across batches and resolves it only when all its items are done', async () => {
    const { calls, dispatch } = manual<string, string>();
    const batcher = new Batcher(dispatch, base);
    const a = track(batcher.submit(['a0', 'a1', 'a2']));
    const b = track(batcher.submit(['b0', 'b1', 'b2', 'b3', 'b4', 'b5']));
    const c = track(batcher.submitOne('c0'));
    void batcher.flush();
    expect(calls.map((call) => call.items)).toEqual([
      ['a0', 'a1', 'a2', 'b0'],
      ['b1', 'b2', 'b3', 'b4'],
      ['b5', 'c0'],
    ]);
    const upper = (i: number): void => calls[i]?.done.resolve(calls[i]?.items.map((s) => s.toUpperCase()) ?? []);
    upper(2);
    upper(1);
    await drainMicrotasks();
    expect(c.value()).toBe('C0');
    expect(a.settled()).toBe(false);
    expect(b.settled()).toBe(false); // b0 is in the first batch, still running
    upper(0);
    await drainMicrotasks();
    expect(a.value()).toEqual(['A0', 'A1', 'A2']);
    expect(b.value()).toEqual(['B0', 'B1', 'B2', 'B3', 'B4', 'B5']);
    await batcher.close();
  });

  it('passes the batch id and label to dispatch', async () => {
    const seen: { batchId: number; label: string }[] = [];
    const batcher = new Batcher<number, number>(
      (items, info) => {
        seen.push(info);
        return items;
      },
      { ...base, maxBatchSize: 2, label: 'fft' },
    );
    await batcher.submit([1, 2, 3, 4]);
    expect(seen).toEqual([
      { batchId: 1, label: 'fft' },
      { batchId: 2, label: 'fft' },
    ]);
    await batcher.close();
  });

  it('accepts submits made from inside a synchronous dispatch', async () => {
    const batches: number[][] = [];
    const nested: Promise<number>[] = [];
    const batcher: Batcher<number, number> = new Batcher<number, number>(
      (items) => {
        batches.push([...items]);
        if (items[0] === 1) nested.push(batcher.submitOne(100), batcher.submitOne(101));
        return items.map((x) => x + 1);
      },
      { ...base, maxBatchSize: 2 },
    );
    await expect(batcher.submit([1, 2])).resolves.toEqual([2, 3]);
    await expect(Promise.all(nested)).resolves.toEqual([101, 102]);
    expect(batches).toEqual([
      [1, 2],
      [100, 101],
    ]);
    await batcher.close();
  });
});
