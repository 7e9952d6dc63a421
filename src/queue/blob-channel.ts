/**
 * BlobChannel: one Redis connection that only moves bytes (SET and GET of samples and results),
 * speaking RESP itself so that a value is written from the caller's memory without a joined copy
 * and a reply is read through one reused buffer into memory of its own (resp.ts says why: those
 * copies were most of a client's CPU time). It behaves as the queue's ioredis clients do: it
 * reconnects with the same capped backoff for as long as Redis is away, and a command sent but
 * not answered when the connection dropped is sent again once it is back (SET and GET are
 * idempotent), so callers see a slow command, never a lost one. Plain TCP, a Unix socket or TLS,
 * with AUTH and SELECT; any other connection option goes through ioredis (`channelTarget()` says
 * which).
 */
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions as TlsOptions } from 'node:tls';
import type { RedisOptions } from 'ioredis';
import { databaseOf, reconnectDelay, type QueueConnection } from './connection.js';
import { QueueUnavailableError } from './errors.js';
import { encodeCommand, RespReader, type RespArg, type RespReply } from './resp.js';

/** Where a channel connects, with what credentials and database. */
export interface ChannelTarget {
  host: string;
  port: number;
  path?: string | undefined;
  tls?: TlsOptions | undefined;
  username?: string | undefined;
  password?: string | undefined;
  db: number;
}

/** ioredis options a channel honours (or that only concern ioredis itself); any other one sends the blobs through ioredis. */
const CHANNEL_OPTIONS = new Set([
  'host',
  'port',
  'path',
  'family',
  'username',
  'password',
  'db',
  'tls',
  'connectionName',
  'connectTimeout',
  'keepAlive',
  'noDelay',
  'lazyConnect',
  'enableReadyCheck',
  'maxRetriesPerRequest',
  'retryStrategy',
  'enableOfflineQueue',
]);

/** The target of a connection a channel can serve, or undefined (Sentinel, Cluster, key prefixes, URL query options: ioredis then). */
export function channelTarget(connection: QueueConnection): ChannelTarget | undefined {
  if (typeof connection === 'string') {
    const url = new URL(connection);
    if (url.search !== '' || url.hash !== '') return undefined;
    const db = databaseOf(connection);
    if (!Number.isSafeInteger(db) || db < 0) return undefined;
    return {
      host: url.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1',
      port: url.port === '' ? 6379 : Number(url.port),
      ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
      username: url.username === '' ? undefined : decodeURIComponent(url.username),
      password: url.password === '' ? undefined : decodeURIComponent(url.password),
      db,
    };
  }
  const o: RedisOptions = connection;
  if (Object.keys(o).some((key) => !CHANNEL_OPTIONS.has(key))) return undefined;
  return {
    host: o.host ?? '127.0.0.1',
    port: o.port ?? 6379,
    path: o.path,
    tls: o.tls,
    username: o.username,
    password: o.password,
    db: databaseOf(o),
  };
}

/** An error reply of Redis to a blob command (named as ioredis names its own). */
export class BlobReplyError extends Error {
  override readonly name: string = 'ReplyError';
}

interface Pending {
  pieces: (string | Uint8Array)[];
  /** Where a bulk reply goes (memory of exactly its length), instead of fresh memory. */
  into?: ((bytes: number) => Buffer) | undefined;
  /** The memory `into` gave, kept so a command sent again after a reconnection reads into the same. */
  target?: Buffer | undefined;
  /** Handshake commands are the channel's own: their replies decide readiness. */
  internal: boolean;
  resolve(reply: RespReply): void;
  reject(error: Error): void;
}

/** Size of the reused read buffer: a socket read fills at most this much. */
const READ_BUFFER_BYTES = 256 * 1024;
/** How long to wait before asking again while Redis loads its data set. */
const LOADING_RETRY_MS = 100;

/** One connection that carries values (see the file's comment). */
export class BlobChannel {
  readonly #target: ChannelTarget;
  readonly #name: string;
  readonly #reader: RespReader;
  #socket: Socket | undefined;
  /** Sent and awaiting their replies, in order. */
  #sent: Pending[] = [];
  /** Waiting for the connection to be ready. */
  #waiting: Pending[] = [];
  #ready = false;
  #closed = false;
  #failures = 0;
  #loading = false;
  /** Why Redis refused the last handshake (a wrong password, a database it does not have), until the connection is dropped. */
  #refusal: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  readonly #readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);

  constructor(target: ChannelTarget, name: string) {
    this.#target = target;
    this.#name = name;
    this.#reader = new RespReader(
      (reply) => this.#reply(reply),
      (length) => this.#replyMemory(length),
    );
    this.#connect();
  }

  /** Whether the connection is up and past its handshake. */
  get ready(): boolean {
    return this.#ready;
  }

  /**
   * Sends a command; resolves with its reply (an error reply rejects with BlobReplyError). A bulk
   * reply is read into `into(bytes)` when given (memory of exactly that many bytes), else into
   * fresh memory.
   */
  send(args: readonly RespArg[], into?: (bytes: number) => Buffer): Promise<RespReply> {
    if (this.#closed) return Promise.reject(new QueueUnavailableError(`blob connection ${this.#name} is closed`));
    return new Promise<RespReply>((resolve, reject) => {
      const pending: Pending = { pieces: encodeCommand(args), into, internal: false, resolve, reject };
      if (this.#ready) this.#write(pending);
      else this.#waiting.push(pending);
    });
  }

  /** Closes the connection; commands not answered yet reject with QueueUnavailableError. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#ready = false;
    clearTimeout(this.#timer);
    this.#socket?.destroy();
    const error = new QueueUnavailableError(`blob connection ${this.#name} was closed`);
    for (const p of [...this.#sent, ...this.#waiting]) if (!p.internal) p.reject(error);
    this.#sent = [];
    this.#waiting = [];
  }

  #connect(): void {
    const t = this.#target;
    const onread = {
      buffer: this.#readBuffer,
      callback: (n: number): boolean => {
        this.#feed(this.#readBuffer, n);
        return true;
      },
    };
    let socket: Socket;
    if (t.tls !== undefined) {
      // TLS sockets do not take `onread`: their chunks come as 'data' events.
      socket = tlsConnect({ ...t.tls, host: t.host, port: t.port, ...(t.path ? { path: t.path } : {}) });
      socket.on('data', (chunk: Buffer) => this.#feed(chunk, chunk.length));
    } else
      socket =
        t.path !== undefined
          ? netConnect({ path: t.path, onread })
          : netConnect({ host: t.host, port: t.port, onread });
    this.#socket = socket;
    socket.setNoDelay(true);
    socket.on('error', () => undefined);
    socket.once(t.tls !== undefined ? 'secureConnect' : 'connect', () => this.#handshake(socket));
    socket.once('close', () => this.#lost(socket));
  }

  #feed(chunk: Buffer, length: number): void {
    try {
      this.#reader.feed(chunk, length);
    } catch {
      // Not RESP we understand: start over on a fresh connection (unanswered commands are resent).
      this.#socket?.destroy();
    }
  }

  /** AUTH, SELECT and a name in one write; PING last: its answer makes the channel ready. */
  #handshake(socket: Socket): void {
    const t = this.#target;
    const steps: string[][] = [];
    if (t.password !== undefined)
      steps.push(t.username !== undefined ? ['AUTH', t.username, t.password] : ['AUTH', t.password]);
    if (t.db !== 0) steps.push(['SELECT', String(t.db)]);
    steps.push(['CLIENT', 'SETNAME', this.#name], ['PING']);
    steps.forEach((args, i) => {
      const last = i === steps.length - 1;
      this.#write({
        pieces: encodeCommand(args),
        internal: true,
        resolve: (reply) => {
          // A name is only for CLIENT LIST: a user whose ACL refuses it still moves bytes.
          if (reply.kind === 'error' && args[0] !== 'CLIENT') return this.#refused(socket, reply.message);
          if (last && socket === this.#socket) this.#becomeReady();
        },
        reject: () => undefined,
      });
    });
  }

  #refused(socket: Socket, message: string): void {
    if (socket !== this.#socket) return;
    // A Redis still loading its data set answers LOADING: ask again shortly; anything else (a wrong
    // password, a database it does not have) waits the backoff, and fails the commands waiting now
    // with Redis' words: they would wait for a handshake that may never pass.
    this.#loading = message.startsWith('LOADING');
    if (!this.#loading) this.#refusal = message;
    socket.destroy();
  }

  #becomeReady(): void {
    this.#ready = true;
    this.#failures = 0;
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const p of waiting) this.#write(p);
  }

  #write(p: Pending): void {
    const socket = this.#socket!;
    this.#sent.push(p);
    socket.cork();
    for (const piece of p.pieces) socket.write(piece);
    socket.uncork();
  }

  /** Memory for the bulk reply now arriving: the one its command asked for (the oldest sent), else fresh (undefined). */
  #replyMemory(length: number): Buffer | undefined {
    const p = this.#sent[0];
    if (p?.into === undefined) return undefined;
    // A reply read again after a reconnection goes into the memory the first read was given.
    if (p.target === undefined || p.target.byteLength !== length) p.target = p.into(length);
    return p.target;
  }

  #reply(reply: RespReply): void {
    const p = this.#sent.shift();
    if (p === undefined) return;
    if (reply.kind === 'error' && !p.internal)
      p.reject(new BlobReplyError(`${reply.message} (blob connection ${this.#name})`));
    else p.resolve(reply);
  }

  /** The connection dropped: what was sent and not answered goes first in line again, and the channel reconnects after the backoff. */
  #lost(socket: Socket): void {
    if (socket !== this.#socket) return;
    this.#socket = undefined;
    this.#ready = false;
    this.#reader.reset();
    this.#waiting = [...this.#sent.filter((p) => !p.internal), ...this.#waiting];
    this.#sent = [];
    const refusal = this.#refusal;
    this.#refusal = undefined;
    if (refusal !== undefined)
      for (const p of this.#waiting.splice(0))
        p.reject(new BlobReplyError(`Redis refused blob connection ${this.#name}: ${refusal}`));
    if (this.#closed) return;
    const delay = this.#loading ? LOADING_RETRY_MS : reconnectDelay(this.#failures++);
    this.#loading = false;
    this.#timer = setTimeout(() => this.#connect(), delay);
  }
}
