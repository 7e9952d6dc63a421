// The lane's slot rotation and the order of those waiting for a slot, without CUDA: which slot goes
// out next, when work that needs the lane alone may start, and that nobody overtakes a waiter.
import { describe, expect, it } from 'vitest';
import { SlotSet } from '../../../../src/pipeline/lanes/slot-set.js';

/** Lets every settled promise's callbacks run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('SlotSet', () => {
  it('hands out the first slot first, then the one given back last (a lane running one job at a time keeps one slot)', () => {
    const set = new SlotSet(['a', 'b', 'c']);
    expect(set.size).toBe(3);
    expect(set.taken).toBe(0);
    expect(set.tryTake()).toBe('a');
    expect(set.tryTake()).toBe('b');
    expect(set.taken).toBe(2);
    set.give('a');
    expect(set.tryTake()).toBe('a');
    set.give('b');
    set.give('a');
    expect(set.tryTake()).toBe('a');
    expect(set.tryTake()).toBe('b');
    expect(set.tryTake()).toBe('c');
    expect(set.tryTake()).toBeUndefined();
    expect(set.taken).toBe(3);
  });

  it('take() resolves at once with a free slot, and queues only when none may go out', async () => {
    const set = new SlotSet([1, 2]);
    await expect(set.take()).resolves.toBe(1);
    expect(set.waiting).toBe(0);
    expect(set.taken).toBe(1);
    // One slot taken: exclusive work waits for it.
    const alone = set.take(true);
    expect(set.waiting).toBe(1);
    set.give(1);
    await expect(alone).resolves.toBe(1);
    expect(set.taken).toBe(1);
  });

  it('gives exclusive work a slot only while none is taken, and nothing else a slot beside it', () => {
    const set = new SlotSet([0, 1]);
    const one = set.tryTake()!;
    expect(set.tryTake(true)).toBeUndefined();
    set.give(one);
    const alone = set.tryTake(true)!;
    expect(alone).toBe(0);
    expect(set.taken).toBe(1);
    expect(set.tryTake()).toBeUndefined();
    expect(set.tryTake(true)).toBeUndefined();
    set.give(alone);
    expect(set.tryTake()).toBe(0);
    expect(set.tryTake()).toBe(1);
  });

  it('serves waiters in arrival order as slots come back, and tryTake never overtakes them', async () => {
    const set = new SlotSet(['x']);
    const first = set.tryTake()!;
    const got: string[] = [];
    const a = set.take().then((s) => got.push(`a:${s}`));
    const b = set.take().then((s) => got.push(`b:${s}`));
    expect(set.waiting).toBe(2);
    set.give(first);
    // The slot went to the first waiter, not to a later tryTake.
    expect(set.tryTake()).toBeUndefined();
    await a;
    expect(got).toEqual(['a:x']);
    set.give('x');
    await b;
    expect(got).toEqual(['a:x', 'b:x']);
    expect(set.waiting).toBe(0);
    set.give('x');
    expect(set.tryTake()).toBe('x');
  });

  it('holds a waiting exclusive taker at the head until the lane is empty, and those behind it wait too', async () => {
    const set = new SlotSet([0, 1, 2]);
    const held = [set.tryTake()!, set.tryTake()!];
    const order: string[] = [];
    const alone = set.take(true).then((s) => order.push(`alone:${s}`));
    const after = set.take().then((s) => order.push(`after:${s}`));
    // A slot is free, but the exclusive waiter is first and the lane is not empty.
    expect(set.tryTake()).toBeUndefined();
    set.give(held[0]!);
    await settle();
    expect(order).toEqual([]);
    set.give(held[1]!);
    await alone;
    await settle();
    // Nothing goes out beside the exclusive work, though two slots are free.
    expect(order).toEqual(['alone:1']);
    set.give(1);
    await after;
    expect(order).toEqual(['alone:1', 'after:1']);
  });

  it('when a slot comes back, serves every waiter it can at once', async () => {
    const set = new SlotSet([0, 1]);
    const taken = [set.tryTake(true)!];
    const waits = [set.take(), set.take()];
    set.give(taken[0]!);
    expect(await Promise.all(waits)).toEqual([0, 1]);
    expect(set.taken).toBe(2);
  });

  it('close() rejects every waiter and every later take with its error', async () => {
    const set = new SlotSet([0]);
    set.tryTake();
    const waiting = set.take();
    const error = new Error('lane gone');
    set.close(error);
    await expect(waiting).rejects.toBe(error);
    await expect(set.take()).rejects.toBe(error);
    expect(() => set.tryTake()).toThrow(error);
    // The first reason stays.
    set.close(new Error('again'));
    await expect(set.take()).rejects.toBe(error);
  });
});
