/** The blob channel's RESP pieces without a server: commands encode without joining their bytes, and replies decode in any split. */
import { describe, expect, it } from 'vitest';
import { encodeCommand, RespReader, type RespReply } from '../../../src/queue/resp.js';

const joined = (pieces: (string | Uint8Array)[]): Buffer =>
  Buffer.concat(pieces.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));

/** Feeds `bytes` to a reader in chunks of `size` (through a reused buffer, as a socket's onread does) and returns the replies. */
function decode(bytes: Buffer, size: number): RespReply[] {
  const replies: RespReply[] = [];
  const reader = new RespReader((r) => replies.push(r));
  const scratch = Buffer.alloc(size);
  for (let i = 0; i < bytes.length; i += size) {
    const n = bytes.copy(scratch, 0, i, Math.min(bytes.length, i + size));
    reader.feed(scratch, n);
    // The reader keeps nothing of the reused buffer: scribble over it.
    scratch.fill(0x2a);
  }
  return replies;
}

describe('RESP for the blob channel', () => {
  it('encodes text, bytes and pieced bytes as one command, passing the bytes through uncopied', () => {
    const value = Buffer.from([0, 1, 2, 255]);
    const parts = [new Uint8Array([9, 8]), new Uint8Array(0), new Uint8Array([7])];
    const pieces = encodeCommand(['SET', 'k€y', value, 'PX', '1000']);
    expect(pieces).toContain(value);
    expect(joined(pieces)).toEqual(
      Buffer.concat([
        Buffer.from('*5\r\n$3\r\nSET\r\n$5\r\nk€y\r\n$4\r\n'),
        value,
        Buffer.from('\r\n$2\r\nPX\r\n$4\r\n1000\r\n'),
      ]),
    );
    expect(joined(encodeCommand(['SET', 'k', parts]))).toEqual(
      Buffer.from('*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\n\x09\x08\x07\r\n', 'latin1'),
    );
  });

  it('decodes status, error, integer, null and bulk replies split at every byte, each bulk in memory of its own', () => {
    const bulk = Buffer.from(Array.from({ length: 300 }, (_, i) => i % 251));
    const stream = Buffer.concat([
      Buffer.from('+OK\r\n-ERR wrong\r\n:42\r\n$-1\r\n$0\r\n\r\n$300\r\n'),
      bulk,
      Buffer.from('\r\n+PONG\r\n'),
    ]);
    for (const size of [1, 2, 3, 7, 64, 4096]) {
      const replies = decode(stream, size);
      expect(replies.map((r) => r.kind)).toEqual(['line', 'error', 'line', 'bulk', 'bulk', 'bulk', 'line']);
      expect(replies[0]).toEqual({ kind: 'line', text: 'OK' });
      expect(replies[1]).toEqual({ kind: 'error', message: 'ERR wrong' });
      expect(replies[2]).toEqual({ kind: 'line', text: '42' });
      expect(replies[3]).toEqual({ kind: 'bulk', value: null });
      expect((replies[4] as { value: Buffer }).value.length).toBe(0);
      const value = (replies[5] as { value: Buffer }).value;
      expect(value.equals(bulk)).toBe(true);
      expect(value.byteOffset).toBe(0);
      expect(value.buffer.byteLength).toBe(300);
      expect(replies[6]).toEqual({ kind: 'line', text: 'PONG' });
    }
  });

  it('refuses what is not a flat reply', () => {
    expect(() => decode(Buffer.from('*1\r\n'), 16)).toThrow(/unexpected reply type/);
    expect(() => decode(Buffer.from('$-5\r\n'), 16)).toThrow(/bad bulk length/);
  });
});

describe('RESP reader memory', () => {
  it('reads a bulk reply into the memory alloc gives, and refuses memory of another size', () => {
    const bulk = Buffer.from(Array.from({ length: 100 }, (_, i) => i));
    const stream = Buffer.concat([Buffer.from('$100\r\n'), bulk, Buffer.from('\r\n$-1\r\n')]);
    const target = Buffer.alloc(100);
    const replies: RespReply[] = [];
    const asked: number[] = [];
    const reader = new RespReader(
      (r) => replies.push(r),
      (length) => (asked.push(length), target),
    );
    reader.feed(stream.subarray(0, 50));
    reader.feed(stream.subarray(50));
    expect(asked).toEqual([100]);
    expect((replies[0] as { value: Buffer }).value).toBe(target);
    expect(target.equals(bulk)).toBe(true);
    expect(replies[1]).toEqual({ kind: 'bulk', value: null });
    const wrong = new RespReader(
      () => undefined,
      () => Buffer.alloc(3),
    );
    expect(() => wrong.feed(stream)).toThrow(/alloc gave 3 bytes/);
  });
});
