import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BufferPool } from '../../../src/runtime/memory/buffer-pool.js';
import { readPooledBody } from '../../../src/server/shedding/body-pool.js';

describe('BufferPool: reused request-body memory', () => {
  it('hands out exact-length, 8-byte aligned Buffers and reuses a released one of the same size class', () => {
    const pool = new BufferPool(1 << 24);
    const a = pool.take(100_000);
    expect(a.byteLength).toBe(100_000);
    expect(a.byteOffset % 8).toBe(0);
    new Float64Array(a.buffer, a.byteOffset, 12_500).fill(1); // any float view fits
    pool.release(a);
    expect(pool.cachedBytes).toBe(131_072);
    const b = pool.take(120_000);
    expect(b.buffer).toBe(a.buffer);
    expect(pool.cachedBytes).toBe(0);
    pool.release(Buffer.alloc(10)); // not the pool's: ignored
    expect(pool.cachedBytes).toBe(0);
  });

  it('keeps at most its byte budget of free buffers, and refuses a bad size', () => {
    const pool = new BufferPool(1 << 17);
    const bodies = [pool.take(1 << 17), pool.take(1 << 17)];
    for (const b of bodies) pool.release(b);
    expect(pool.cachedBytes).toBe(1 << 17);
    expect(() => pool.take(-1)).toThrow(/non-negative integer/);
    expect(() => new BufferPool(Number.NaN)).toThrow(/maxCachedBytes/);
  });
});

describe("BufferPool with an allocator (the server passes the engine's pinned arrays)", () => {
  it('takes memory from allocate() by size class and gives what it stops keeping to free()', () => {
    const allocated: Buffer[] = [];
    const freed: Buffer[] = [];
    const pool = new BufferPool(1 << 16, {
      allocate: (bytes) => {
        const b = Buffer.alloc(bytes);
        allocated.push(b);
        return b;
      },
      free: (b) => freed.push(b),
    });
    const a = pool.take(1000);
    const b = pool.take(70_000);
    expect(allocated.map((x) => x.byteLength)).toEqual([65_536, 131_072]);
    expect(a.buffer).toBe(allocated[0]!.buffer);
    pool.release(a); // kept: within the 64 KiB budget
    pool.release(b); // over the budget: freed
    expect(freed).toEqual([allocated[1]]);
    expect(pool.take(10).buffer).toBe(allocated[0]!.buffer);
    expect(allocated).toHaveLength(2);
  });
});

describe('readPooledBody', () => {
  const send = (chunks: Buffer[], end = true): PassThrough => {
    const s = new PassThrough();
    queueMicrotask(() => {
      for (const c of chunks) s.write(c);
      if (end) s.end();
    });
    return s;
  };
  const bytes = (n: number, seed: number): Buffer =>
    Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255));

  it('reads chunks into one pooled Buffer of the announced length, or gathers them when none is announced', async () => {
    const pool = new BufferPool(1 << 24);
    const parts = [bytes(70_000, 1), bytes(5, 2), bytes(33_333, 3)];
    const whole = Buffer.concat(parts);
    const announced = await readPooledBody(send(parts), String(whole.byteLength), 1 << 20, pool);
    expect(announced.equals(whole)).toBe(true);
    const chunked = await readPooledBody(send(parts), undefined, 1 << 20, pool);
    expect(chunked.equals(whole)).toBe(true);
    pool.release(announced);
    pool.release(chunked);
    expect(pool.cachedBytes).toBe(2 * 131_072);
  });

  it('takes one pooled buffer for an announced body, once half of it is in, and copies each byte once', async () => {
    const sizes: number[] = [];
    const pool = new BufferPool(1 << 24, { allocate: (n) => (sizes.push(n), Buffer.alloc(n)), free: () => undefined });
    const parts = Array.from({ length: 64 }, (_, i) => bytes(65_536, i));
    const whole = Buffer.concat(parts);
    const s = new PassThrough();
    const read = readPooledBody(s, String(whole.byteLength), 1 << 23, pool);
    for (const c of parts.slice(0, 31)) s.write(c);
    await new Promise((r) => setImmediate(r));
    expect(sizes).toEqual([]); // 31 of 64 chunks: nothing reserved yet
    for (const c of parts.slice(31)) s.write(c);
    s.end();
    const body = await read;
    expect(body.equals(whole)).toBe(true);
    expect(sizes).toEqual([4 << 20]); // one buffer, not one per doubling
  });

  it('refuses too large, too long, too short and broken bodies with their status, and returns the buffer to the pool', async () => {
    const pool = new BufferPool(1 << 24);
    await expect(readPooledBody(send([bytes(10, 0)]), '2000', 1000, pool)).rejects.toMatchObject({
      statusCode: 413,
      code: 'FST_ERR_CTP_BODY_TOO_LARGE',
    });
    await expect(readPooledBody(send([bytes(600, 0), bytes(600, 1)]), undefined, 1000, pool)).rejects.toMatchObject({
      statusCode: 413,
    });
    await expect(readPooledBody(send([bytes(20, 0)]), '10', 1000, pool)).rejects.toMatchObject({
      statusCode: 400,
      message: /more than the 10 bytes/,
    });
    await expect(readPooledBody(send([bytes(5, 0)]), '10', 1000, pool)).rejects.toMatchObject({
      statusCode: 400,
      message: /5 bytes, its content-length announced 10/,
    });
    await expect(readPooledBody(send([]), 'ten', 1000, pool)).rejects.toMatchObject({
      statusCode: 400,
      message: /not a byte count/,
    });
    const broken = send([bytes(5, 0)], false);
    const reading = readPooledBody(broken, '10', 1000, pool);
    setTimeout(() => broken.destroy(new Error('socket reset')), 5);
    await expect(reading).rejects.toThrow(/socket reset/);
    const closed = send([bytes(5, 0)], false);
    const reading2 = readPooledBody(closed, '10', 1000, pool);
    setTimeout(() => closed.destroy(), 5); // closed without an error or an end
    await expect(reading2).rejects.toMatchObject({ statusCode: 400, message: /aborted/ });
    // Each refused body's Buffer went back and the next one reused it: one 64 KiB Buffer in all.
    expect(pool.cachedBytes).toBe(65_536);
    const again = pool.take(10);
    expect(pool.cachedBytes).toBe(0);
    pool.release(again);
  });
});
