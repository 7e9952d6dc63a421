import { describe, expect, it } from 'vitest';
import { hasThreadedMemcpy, memcpyAsync } from '../../../src/ffi/libc.js';

describe('libc memcpy on the thread pool', () => {
  it('loads memcpy from libc here (Linux) and copies bytes exactly, off the event loop', async () => {
    expect(hasThreadedMemcpy()).toBe(true);
    const source = Uint8Array.from({ length: 1 << 20 }, (_, i) => (i * 7) & 255);
    const target = new Uint8Array(source.length);
    await memcpyAsync(target, source);
    expect(Buffer.from(target).equals(Buffer.from(source))).toBe(true);
  });

  it('refuses arrays of different byte lengths and writes nothing', async () => {
    const target = new Uint8Array(2);
    await expect(memcpyAsync(target, new Uint8Array(3))).rejects.toThrow(/target holds 2 bytes, source 3/);
    expect(Array.from(target)).toEqual([0, 0]);
  });
});
