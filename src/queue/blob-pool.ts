/**
 * BlobPool: the connections that carry a process's samples and results (raw bytes under their own
 * keys) to and from Redis. One connection is a serial pipe: a 1 MiB value crosses it in many
 * socket-buffer rounds, each a wake-up of both ends, and every other value waits behind it.
 * Measured (bench/probe/queue-costs.ts, 1 MiB values, 32 in flight from one process on a 2-vCPU
 * host): 1 connection 177 GETs/s and 264 SETs/s at 2.3-2.5 ms of client CPU and 0.5-1.1 ms of
 * Redis CPU each; 8 connections 534 GETs/s and 1281 SETs/s at 1.2 and 0.4 ms of client CPU and
 * 0.4 and 0.2 ms of Redis CPU: the same bytes in fewer, fuller rounds. So a value goes on the
 * ready connection with the fewest bytes in flight; small commands go on the first.
 */
import type { Redis } from 'ioredis';
import { BlobChannel, channelTarget } from './blob-channel.js';
import { joinPieces } from './codec.js';
import { createRedis, PATIENT, type QueueConnection, type RedisPatience } from './connection.js';

/** Connections of a BlobPool by default. */
export const DEFAULT_BLOB_CONNECTIONS = 4;
/** Most connections of a BlobPool. */
export const MAX_BLOB_CONNECTIONS = 64;

/** A value as its pieces. */
function piecesOf(value: Buffer | readonly Uint8Array[]): readonly Uint8Array[] {
  return value instanceof Uint8Array ? [value] : (value as readonly Uint8Array[]);
}

/** What carries values: a BlobChannel, or an ioredis client where the connection needs ioredis. */
interface Carrier {
  readonly ready: boolean;
  /** SET (with NX when `onlyIfAbsent`): true when stored, false when NX found the key holding a value. */
  set(key: string, value: Buffer | readonly Uint8Array[], ttlMs: number, onlyIfAbsent: boolean): Promise<boolean>;
  get(key: string, into?: (bytes: number) => Buffer): Promise<Buffer | null>;
  close(): void;
}

function channelCarrier(channel: BlobChannel): Carrier {
  return {
    get ready() {
      return channel.ready;
    },
    async set(key, value, ttlMs, onlyIfAbsent) {
      const reply = await channel.send(
        onlyIfAbsent ? ['SET', key, value, 'PX', String(ttlMs), 'NX'] : ['SET', key, value, 'PX', String(ttlMs)],
      );
      // OK when stored; a null bulk when NX found the key there.
      return reply.kind === 'line';
    },
    async get(key, into) {
      const reply = await channel.send(['GET', key], into);
      if (reply.kind !== 'bulk') throw new Error(`GET ${key}: unexpected reply ${JSON.stringify(reply)}`);
      return reply.value;
    },
    close: () => channel.close(),
  };
}

function ioredisCarrier(client: Redis): Carrier {
  return {
    get ready() {
      return client.status === 'ready';
    },
    async set(key, value, ttlMs, onlyIfAbsent) {
      const bytes = value instanceof Buffer ? value : joinPieces(piecesOf(value));
      return (
        (await (onlyIfAbsent ? client.set(key, bytes, 'PX', ttlMs, 'NX') : client.set(key, bytes, 'PX', ttlMs))) ===
        'OK'
      );
    },
    // ioredis reads into memory of its own: `into` is not used.
    get: (key) => client.getBuffer(key),
    close: () => client.disconnect(),
  };
}

/** A process's blob connections to one Redis, and one ioredis client for the small commands. */
export class BlobPool {
  readonly #control: Redis;
  readonly #carriers: Carrier[];
  /** Bytes of values under way on each carrier (sent or awaited). */
  readonly #inFlight: number[];

  /** `patience`: how its ioredis clients wait for Redis (connection.ts); the channels' commands are bounded by their owner. */
  constructor(connection: QueueConnection, name: string, size: number, patience: RedisPatience = PATIENT) {
    this.#control = createRedis(connection, name, patience);
    const target = channelTarget(connection);
    this.#carriers = Array.from({ length: size }, (_, i) =>
      target !== undefined
        ? channelCarrier(new BlobChannel(target, `${name}-blob${i}`))
        : ioredisCarrier(createRedis(connection, `${name}-blob${i}`, patience)),
    );
    this.#inFlight = this.#carriers.map(() => 0);
  }

  /** The ioredis client for small commands (EXISTS, DEL, markers, PING); its state is the pool's readiness. */
  get control(): Redis {
    return this.#control;
  }

  /** Whether Redis answers now (the carriers reconnect alongside the control client). */
  get ready(): boolean {
    return this.#control.status === 'ready';
  }

  /** Stores `value` (bytes, or pieces sent back to back as one value) under `key` for `ttlMs`. */
  async set(key: string, value: Buffer | readonly Uint8Array[], ttlMs: number): Promise<void> {
    await this.#store(key, value, ttlMs, false);
  }

  /**
   * Stores `value` under `key` for `ttlMs` unless `key` holds a value already (SET NX): true when
   * stored. Sent again after a reconnection like every command, so a false may also mean that this
   * very value landed before the connection dropped: callers that must tell look at the key.
   */
  setIfAbsent(key: string, value: Buffer | readonly Uint8Array[], ttlMs: number): Promise<boolean> {
    return this.#store(key, value, ttlMs, true);
  }

  /** A SET on the least busy carrier, its bytes counted as under way until it is answered. */
  async #store(
    key: string,
    value: Buffer | readonly Uint8Array[],
    ttlMs: number,
    onlyIfAbsent: boolean,
  ): Promise<boolean> {
    const i = this.#pick();
    const bytes = piecesOf(value).reduce((sum, p) => sum + p.byteLength, 0);
    this.#inFlight[i]! += bytes;
    try {
      return await this.#carriers[i]!.set(key, value, ttlMs, onlyIfAbsent);
    } finally {
      this.#inFlight[i]! -= bytes;
    }
  }

  /**
   * The bytes under `key` (null when there are none), in memory of their own or, where the
   * connection reads replies itself, in `into(bytes)` (memory of exactly that many bytes, e.g.
   * pooled); `expectedBytes` weighs the choice of connection.
   */
  async get(key: string, expectedBytes: number, into?: (bytes: number) => Buffer): Promise<Buffer | null> {
    const i = this.#pick();
    this.#inFlight[i]! += expectedBytes;
    try {
      return await this.#carriers[i]!.get(key, into);
    } finally {
      this.#inFlight[i]! -= expectedBytes;
    }
  }

  /** The ready carrier with the fewest bytes in flight (the first when none is ready: its command waits for the reconnection). */
  #pick(): number {
    let best = 0;
    let bestBytes = Infinity;
    for (let i = 0; i < this.#carriers.length; i++) {
      if (!this.#carriers[i]!.ready) continue;
      const bytes = this.#inFlight[i]!;
      if (bytes < bestBytes) {
        best = i;
        bestBytes = bytes;
        if (bytes === 0) break;
      }
    }
    return best;
  }

  /** Drops every connection (each caller awaited its own commands: nothing is left to flush). */
  disconnect(): void {
    this.#control.disconnect();
    for (const carrier of this.#carriers) carrier.close();
  }
}
