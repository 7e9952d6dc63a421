/**
 * Reused memory for binary request bodies and results: a multi-megabyte body read into a fresh
 * Buffer each time costs the page faults of new memory and, worse, garbage collections of
 * external memory that stall the event loop. Bodies are read into pooled Buffers instead (by
 * power-of-two size class) and handed back once nothing reads them. With an engine that lends
 * pinned arrays, the pool's memory is pinned: jobs copy it to and from the GPU directly. CUDA-free.
 */

import { sizeClass } from '../../runtime/memory/size-classes.js';

/** Smallest pooled allocation; smaller bodies are pooled at this size. */
const MIN_CLASS_BYTES = 1 << 16;

/** Where a pool's memory comes from, when not from Buffer.allocUnsafeSlow (e.g. an engine's pinned arrays). */
export interface BodyAllocator {
  /** A Buffer of exactly `bytes` (a power of two of at least 64 KiB), 8-byte aligned. */
  allocate(bytes: number): Buffer;
  /** Frees a Buffer from allocate() that the pool no longer keeps. */
  free(buffer: Buffer): void;
}

/** Buffers kept for reuse, by size class, up to a byte budget. */
export class BodyPool {
  readonly #free = new Map<number, Buffer[]>();
  /** The whole pooled allocation behind each body handed out. */
  readonly #backing = new WeakMap<Buffer, Buffer>();
  readonly #maxCachedBytes: number;
  readonly #allocator: BodyAllocator | undefined;
  #cachedBytes = 0;

  /**
   * @param maxCachedBytes bytes of free buffers kept for reuse; more are freed (left to the garbage collector, or the allocator's free()).
   * @param allocator where the memory comes from; default Buffer.allocUnsafeSlow.
   */
  constructor(maxCachedBytes: number, allocator?: BodyAllocator) {
    if (!Number.isSafeInteger(maxCachedBytes) || maxCachedBytes < 0) throw new RangeError(`maxCachedBytes must be a non-negative integer, got ${String(maxCachedBytes)}`);
    this.#maxCachedBytes = maxCachedBytes;
    this.#allocator = allocator;
  }

  /** Bytes of free buffers kept now. */
  get cachedBytes(): number {
    return this.#cachedBytes;
  }

  /** A Buffer of exactly `bytes` (its own memory, 8-byte aligned, contents unspecified). */
  take(bytes: number): Buffer {
    if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`body size must be a non-negative integer, got ${String(bytes)}`);
    const size = Math.max(MIN_CLASS_BYTES, sizeClass(Math.max(1, bytes)));
    const free = this.#free.get(size);
    let backing = free?.pop();
    if (backing) this.#cachedBytes -= size;
    // allocUnsafeSlow: an ArrayBuffer of its own (offset 0, so any float view is aligned), never the shared pool.
    else backing = this.#allocator ? this.#allocator.allocate(size) : Buffer.allocUnsafeSlow(size);
    const body = backing.subarray(0, bytes);
    this.#backing.set(body, backing);
    return body;
  }

  /** Hands back a Buffer from take() (others are ignored); nothing may read or write it afterwards. */
  release(body: Buffer): void {
    const backing = this.#backing.get(body);
    if (!backing) return;
    this.#backing.delete(body);
    if (this.#cachedBytes + backing.byteLength > this.#maxCachedBytes) {
      this.#allocator?.free(backing);
      return;
    }
    const list = this.#free.get(backing.byteLength) ?? [];
    list.push(backing);
    this.#free.set(backing.byteLength, list);
    this.#cachedBytes += backing.byteLength;
  }
}

/** A body-reading error the server's error handler turns into its 4xx answer. */
export function bodyError(statusCode: 400 | 408 | 413, code: string, message: string): Error & { statusCode: number; code: string } {
  return Object.assign(new Error(message), { statusCode, code });
}

/** What readPooledBody reads from: a request's body stream. */
export interface BodyStream {
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'end' | 'aborted' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeAllListeners(event: 'data' | 'end' | 'error' | 'aborted' | 'close'): unknown;
  resume(): unknown;
}

/** Options of readPooledBody. */
export interface ReadBodyOptions {
  /** The whole body must arrive within this many ms of the call (408 beyond); default: no bound. */
  timeoutMs?: number | undefined;
  /** Told of the bytes received, once, when reading ends (completed or not). */
  onBytes?: ((bytes: number) => void) | undefined;
}

/**
 * Reads a request body into a pooled Buffer, each byte copied once. Memory follows the bytes
 * received, never the length announced: a body with a Content-Length is gathered in chunks until
 * half of it has arrived, then copied into a pooled buffer of the announced size (at most twice
 * what arrived) that the rest is read straight into; one without is gathered in chunks and copied
 * once at its end. Rejects with a 413 (FST_ERR_CTP_BODY_TOO_LARGE,
 * as fastify's own limit) as soon as more than `limitBytes` arrive or are announced, a 400 when the
 * body is shorter or longer than announced, a 408 when it has not arrived within `timeoutMs`, and
 * the stream's error if it fails; the pooled Buffer goes back to the pool on every failure.
 */
export function readPooledBody(stream: BodyStream, contentLength: string | undefined, limitBytes: number, pool: BodyPool, options: ReadBodyOptions = {}): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const announced = contentLength === undefined ? undefined : Number(contentLength);
    const tooLarge = (): Error => bodyError(413, 'FST_ERR_CTP_BODY_TOO_LARGE', `Request body is too large (limit ${limitBytes} bytes)`);
    if (announced !== undefined && !(/^\d{1,16}$/.test(contentLength!) && Number.isSafeInteger(announced))) {
      stream.resume();
      reject(bodyError(400, 'FST_ERR_CTP_INVALID_CONTENT_LENGTH', `content-length: ${contentLength!.slice(0, 100)} is not a byte count`));
      return;
    }
    if (announced !== undefined && announced > limitBytes) {
      stream.resume();
      reject(tooLarge());
      return;
    }
    let body: Buffer | undefined;
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(
            () =>
              finish(
                bodyError(
                  408,
                  'FST_ERR_REQUEST_TIMEOUT',
                  `body: not received within ${options.timeoutMs} ms (${received} bytes${announced === undefined ? '' : ` of the ${announced} announced`} arrived)`,
                ),
              ),
            options.timeoutMs,
          );
    const finish = (error: Error | undefined, result?: Buffer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.onBytes?.(received);
      for (const event of ['data', 'end', 'error', 'aborted', 'close'] as const) stream.removeAllListeners(event);
      if (error) {
        if (body) pool.release(body);
        stream.resume(); // discard the rest
        reject(error);
      } else resolve(result!);
    };
    stream.on('data', (chunk: Buffer) => {
      if (settled) return;
      const total = received + chunk.byteLength;
      if (total > (announced ?? limitBytes)) {
        finish(announced === undefined ? tooLarge() : bodyError(400, 'FST_ERR_CTP_INVALID_CONTENT_LENGTH', `body: more than the ${announced} bytes its content-length announced`));
        return;
      }
      if (body === undefined && (announced === undefined || 2 * total < announced)) {
        // Kept as they came until half the announced bytes are in: nothing is reserved on a
        // promise, and nothing is copied twice (a buffer doubled as bytes arrived copied a 4 MiB
        // body about twice over: 0.40 against 0.13 ms of CPU per body in 64 KiB chunks).
        chunks.push(chunk);
        received = total;
        return;
      }
      if (body === undefined) {
        // Half of it is in: one pooled buffer of the announced size (at most twice the bytes
        // received) takes the chunks so far, and the rest is read straight into it.
        body = pool.take(announced!);
        let at = 0;
        for (const c of chunks) at += c.copy(body, at);
        chunks.length = 0;
      }
      chunk.copy(body, received);
      received = total;
    });
    stream.on('end', () => {
      if (announced !== undefined) {
        if (received !== announced) finish(bodyError(400, 'FST_ERR_CTP_INVALID_CONTENT_LENGTH', `body: ${received} bytes, its content-length announced ${announced}`));
        else if (body === undefined) finish(undefined, pool.take(0));
        else finish(undefined, body);
        return;
      }
      const whole = pool.take(received);
      let at = 0;
      for (const c of chunks) at += c.copy(whole, at);
      finish(undefined, whole);
    });
    stream.on('error', (error: Error) => finish(error));
    const aborted = (): void => finish(bodyError(400, 'FST_ERR_CTP_INVALID_CONTENT_LENGTH', 'body: the client aborted the request before sending all of it'));
    stream.on('aborted', aborted);
    // Closed before its end: however the stream ended, the body is incomplete (after 'end' this is a no-op).
    stream.on('close', aborted);
  });
}
