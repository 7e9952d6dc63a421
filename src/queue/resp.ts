/**
 * The few pieces of the Redis protocol (RESP2) the blob channel speaks: a command as the pieces to
 * write (a Buffer argument is written as it is, never copied into one joined buffer), and a reader
 * of replies that copies a bulk reply's bytes once, straight from the socket's read buffer into
 * memory of its own. ioredis joins every command into one new buffer (a 1 MiB value: a fresh
 * MiB and a copy) and reads a bulk reply as fresh 64 KiB socket reads joined into another fresh
 * buffer; for the samples and results of a job that was most of a client's CPU time (a profile
 * of the queue bench on a 2-vCPU host: 4 ms of the client's ~11 ms per 1 MiB job in those two
 * copies, 3.6 ms in the garbage collector). Pure: no sockets here.
 */

/** A reply: a status or integer line, a bulk string (null when the key is missing), or an error. */
export type RespReply =
  { kind: 'line'; text: string } | { kind: 'bulk'; value: Buffer | null } | { kind: 'error'; message: string };

/** A command argument: text, bytes, or bytes in several pieces sent back to back as one argument. */
export type RespArg = string | Uint8Array | readonly Uint8Array[];

/** The pieces to write for a command (`writev` sends them in one call); bytes are not copied. */
export function encodeCommand(args: readonly RespArg[]): (string | Uint8Array)[] {
  const pieces: (string | Uint8Array)[] = [];
  let head = `*${args.length}\r\n`;
  for (const arg of args) {
    if (typeof arg === 'string') head += `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`;
    else {
      const parts: readonly Uint8Array[] = arg instanceof Uint8Array ? [arg] : arg;
      pieces.push(`${head}$${parts.reduce((sum, p) => sum + p.byteLength, 0)}\r\n`);
      for (const part of parts) if (part.byteLength > 0) pieces.push(part);
      head = '\r\n';
    }
  }
  pieces.push(head);
  return pieces;
}

/** Largest bulk reply accepted, bytes: Redis' own limit on a string (proto-max-bulk-len's default). */
const MAX_BULK = 512 * 2 ** 20;

/**
 * Reads replies from the bytes a socket delivers, in any split: `feed(chunk, length)` calls
 * `onReply` once per complete reply. Only flat replies are understood (`+`, `-`, `:`, `$`): the
 * channel sends no command that answers with an array. A bulk reply gets memory of its own, of
 * exactly its size, at offset 0 (so typed views of it are aligned), or the memory `alloc` gives
 * (a reused buffer: fresh memory of a MiB costs its page faults and garbage collections).
 */
export class RespReader {
  readonly #onReply: (reply: RespReply) => void;
  readonly #alloc: ((length: number) => Buffer | undefined) | undefined;
  /** The header line read so far (latin1: RESP headers are ASCII). */
  #line = '';
  /** The bulk being read, how much of it has arrived, and how many bytes of its trailing CRLF are still to skip. */
  #bulk: Buffer | undefined;
  #filled = 0;
  #skip = 0;

  /** `alloc(length)`: memory of exactly `length` bytes for the next bulk reply, or undefined for fresh memory. */
  constructor(onReply: (reply: RespReply) => void, alloc?: (length: number) => Buffer | undefined) {
    this.#onReply = onReply;
    this.#alloc = alloc;
  }

  /** Forgets a partial reply (the connection it came from was lost). */
  reset(): void {
    this.#line = '';
    this.#bulk = undefined;
    this.#filled = 0;
    this.#skip = 0;
  }

  /** Consumes `length` bytes of `chunk` (a reused read buffer: nothing keeps a reference to it). */
  feed(chunk: Buffer, length = chunk.length): void {
    const bytes = length === chunk.length ? chunk : chunk.subarray(0, length);
    let i = 0;
    while (i < length) {
      if (this.#skip > 0) {
        const n = Math.min(this.#skip, length - i);
        this.#skip -= n;
        i += n;
        continue;
      }
      if (this.#bulk !== undefined) {
        const n = Math.min(this.#bulk.length - this.#filled, length - i);
        bytes.copy(this.#bulk, this.#filled, i, i + n);
        this.#filled += n;
        i += n;
        if (this.#filled === this.#bulk.length) {
          const value = this.#bulk;
          this.#bulk = undefined;
          this.#skip = 2;
          this.#onReply({ kind: 'bulk', value });
        }
        continue;
      }
      const newline = bytes.indexOf(10, i);
      if (newline === -1) {
        this.#line += bytes.toString('latin1', i, length);
        if (this.#line.length > 64 * 1024)
          throw new Error('RESP: a reply header line over 64 KiB (not a Redis server?)');
        return;
      }
      const line = this.#line + bytes.toString('latin1', i, newline);
      this.#line = '';
      i = newline + 1;
      this.#header(line.endsWith('\r') ? line.slice(0, -1) : line);
    }
  }

  #header(text: string): void {
    const type = text[0];
    const rest = text.slice(1);
    if (type === '+' || type === ':') this.#onReply({ kind: 'line', text: rest });
    else if (type === '-') this.#onReply({ kind: 'error', message: rest });
    else if (type === '$') {
      const length = Number(rest);
      if (!Number.isSafeInteger(length) || length < -1 || length > MAX_BULK)
        throw new Error(`RESP: bad bulk length ${JSON.stringify(rest)}`);
      if (length === -1) this.#onReply({ kind: 'bulk', value: null });
      else if (length === 0) {
        this.#skip = 2;
        this.#onReply({ kind: 'bulk', value: Buffer.alloc(0) });
      } else {
        const given = this.#alloc?.(length);
        if (given !== undefined && given.byteLength !== length)
          throw new Error(`RESP: alloc gave ${given.byteLength} bytes for a ${length}-byte reply`);
        this.#bulk = given ?? Buffer.allocUnsafeSlow(length);
        this.#filled = 0;
      }
    } else throw new Error(`RESP: unexpected reply type ${JSON.stringify(text.slice(0, 20))}`);
  }
}
