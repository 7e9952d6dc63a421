/**
 * Request bodies read into reused memory (the runtime's BufferPool, by power-of-two size class,
 * pinned when the engine lends pinned arrays): a multi-megabyte body read into a fresh Buffer each
 * time costs the page faults of new memory and garbage collections that stall the event loop.
 * Bodies are handed back once nothing reads them. CUDA-free.
 */

import type { BufferPool } from '../../runtime/memory/buffer-pool.js';

/** A body-reading error the server's error handler turns into its 4xx answer. */
export function bodyError(
  statusCode: 400 | 408 | 413,
  code: string,
  message: string,
): Error & { statusCode: number; code: string } {
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
  /** Sees each chunk as it arrives, in order (a scan); what it throws refuses the body at once. */
  onChunk?: ((chunk: Buffer) => void) | undefined;
  /** The refusal of a body over `limitBytes`; default a 413 naming the limit (FST_ERR_CTP_BODY_TOO_LARGE, as fastify's own). */
  tooLarge?: (() => Error) | undefined;
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
export function readPooledBody(
  stream: BodyStream,
  contentLength: string | undefined,
  limitBytes: number,
  pool: BufferPool,
  options: ReadBodyOptions = {},
): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const announced = contentLength === undefined ? undefined : Number(contentLength);
    const tooLarge =
      options.tooLarge ??
      ((): Error =>
        bodyError(413, 'FST_ERR_CTP_BODY_TOO_LARGE', `Request body is too large (limit ${limitBytes} bytes)`));
    if (announced !== undefined && !(/^\d{1,16}$/.test(contentLength!) && Number.isSafeInteger(announced))) {
      stream.resume();
      reject(
        bodyError(
          400,
          'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
          `content-length: ${contentLength!.slice(0, 100)} is not a byte count`,
        ),
      );
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
        finish(
          announced === undefined
            ? tooLarge()
            : bodyError(
                400,
                'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
                `body: more than the ${announced} bytes its content-length announced`,
              ),
        );
        return;
      }
      if (options.onChunk !== undefined) {
        try {
          options.onChunk(chunk);
        } catch (error) {
          received = total;
          finish(error instanceof Error ? error : new Error(String(error)));
          return;
        }
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
        if (received !== announced)
          finish(
            bodyError(
              400,
              'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
              `body: ${received} bytes, its content-length announced ${announced}`,
            ),
          );
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
    const aborted = (): void =>
      finish(
        bodyError(
          400,
          'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
          'body: the client aborted the request before sending all of it',
        ),
      );
    stream.on('aborted', aborted);
    // Closed before its end: however the stream ended, the body is incomplete (after 'end' this is a no-op).
    stream.on('close', aborted);
  });
}

/** Options of IdleTrim. */
export interface IdleTrimOptions {
  /** A pool left untouched this long, ms, is trimmed (checked every `idleMs`, so trimmed within twice that). */
  idleMs: number;
  /** Bytes of free buffers kept through a trim. */
  keepBytes: number;
}

/**
 * Hands a body pool's memory back after a burst: once no body has been taken for `idleMs`, the
 * pool keeps at most `keepBytes` of free buffers. Without it a burst of large bodies leaves the
 * pool's whole budget held for as long as the process lives.
 */
export class IdleTrim {
  readonly #pool: BufferPool;
  readonly #keepBytes: number;
  readonly #timer: NodeJS.Timeout;
  #touched = false;

  constructor(pool: BufferPool, options: IdleTrimOptions) {
    this.#pool = pool;
    this.#keepBytes = options.keepBytes;
    this.#timer = setInterval(() => this.#tick(), options.idleMs);
    // A timer of housekeeping: it must not keep the process alive.
    this.#timer.unref();
  }

  /** Marks the pool as in use (a body is being read): the next check leaves it whole. */
  touch(): void {
    this.#touched = true;
  }

  /** Stops the checks (the server's close()). */
  stop(): void {
    clearInterval(this.#timer);
  }

  #tick(): void {
    if (!this.#touched && this.#pool.cachedBytes > this.#keepBytes) this.#pool.trim(this.#keepBytes);
    this.#touched = false;
  }
}
