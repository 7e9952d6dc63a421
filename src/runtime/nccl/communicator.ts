/**
 * NCCL communicators: one per rank (a GPU of this process, or one process per GPU or per node),
 * with collectives enqueued on tscuda streams and awaited like every other piece of GPU work.
 * The safe form of NCCL's API, as FftPlan is cuFFT's: the collectives are the communicator's own
 * methods (orchestration re-exports the class; it coordinates work across devices around it).
 */
import { ncclChecked, statusError } from '../../ffi/checked.js';
import type { ncclComm_t, ncclUniqueId } from '../../ffi/generated/types.js';
import { disableNvlinkMulticast, NcclError } from '../../ffi/nccl.js';
import type { Context } from '../context.js';
import { resolveContext } from '../defaults.js';
import { Device } from '../device.js';
import type { DeviceBuffer } from '../memory/device-buffer.js';
import { describeValue, expectResource, isLive, Resource } from '../resource.js';
import type { Stream } from '../stream.js';
import {
  checkBuffers,
  checkCount,
  checkFits,
  checkInteger,
  collectiveStream,
  type CollectiveOptions,
  type PeerOptions,
  type ReduceOptions,
  type RootOptions,
} from './collective-options.js';
import { NcclRangeError } from './errors.js';
import { completion, group, inGroup, restoreCurrentContext, restoringContext } from './group.js';
import { ncclMoveType, ncclReduceType } from './types.js';
import { NcclUniqueId } from './unique-id.js';

/** What initRank is given: the clique's id (the same on every rank), this rank, the number of ranks, and the GPU. */
export interface InitRankDescriptor {
  id: NcclUniqueId;
  rank: number;
  size: number;
  /** This rank's GPU (default device 0). */
  device?: Device | number | undefined;
  label?: string | undefined;
}

/** The device of a rank, by the runtime's one placement rule (runtime/defaults.ts: default device 0). */
function resolveDevice(device: Device | number | undefined, what: string): Device {
  if (device !== undefined && typeof device !== 'number' && !(device instanceof Device))
    throw new TypeError(`${what}: device must be a Device or an ordinal, got ${describeValue(device)}`);
  return resolveContext({ device }).device;
}

/**
 * The receiver check of every public method: a real Communicator (TypeError for anything else,
 * `Communicator.prototype.allReduce.call({}, ...)` say) that is still alive (DisposedError after
 * dispose() or abort()), before NCCL sees a handle.
 */
function live(self: unknown, method: string): Communicator {
  return isLive(self, Communicator) ? self : expectResource(self, Communicator, `Communicator ${method}: the receiver`);
}

const toPointer = (address: number): bigint => BigInt(address);

/**
 * One rank of an NCCL clique. Collectives (`allReduce`, `broadcast`, `reduce`, `allGather`,
 * `reduceScatter`, `send`/`recv`) check their dtypes, reduction, counts, ranks and streams
 * before NCCL sees them, enqueue on the given stream and return a promise of their completion
 * (awaiting it is optional: it never rejects unhandled). A failed call throws NcclError with
 * NCCL's last-error message.
 *
 * Several communicators driven from one process (initAll) must enqueue their share of a
 * collective inside `Communicator.group(() => ...)`: NCCL then launches them together.
 */
export class Communicator extends Resource {
  readonly handle: ncclComm_t;
  readonly rank: number;
  readonly size: number;
  readonly device: Device;
  readonly context: Context;

  private constructor(handle: ncclComm_t, rank: number, size: number, device: Device, label: string | undefined) {
    super('Communicator', label ?? `nccl rank ${rank}/${size} on device ${device.ordinal}`);
    this.handle = handle;
    this.rank = rank;
    this.size = size;
    this.device = device;
    this.context = device.context;
    const name = this.label;
    this.track(() => restoringContext(() => ncclChecked().ncclCommDestroy(handle, name)));
  }

  /**
   * One communicator per device, in one process (ncclCommInitAll): rank i drives devices[i].
   * The devices must be distinct (NCCL keeps one rank per GPU).
   */
  static initAll(devices: readonly (Device | number)[], options: { label?: string | undefined } = {}): Communicator[] {
    if (!Array.isArray(devices) || devices.length === 0)
      throw new NcclRangeError(
        `Communicator.initAll needs a non-empty array of devices, got ${Array.isArray(devices) ? 'an empty array' : describeValue(devices)}`,
      );
    const resolved = devices.map((d, i) => resolveDevice(d, `Communicator.initAll devices[${i}]`));
    const ordinals = resolved.map((d) => d.ordinal);
    const dup = ordinals.find((o, i) => ordinals.indexOf(o) !== i);
    if (dup !== undefined)
      throw new NcclRangeError(`Communicator.initAll: device ${dup} is listed twice; NCCL keeps one rank per GPU`);
    disableNvlinkMulticast();
    for (const d of resolved) void d.context; // retain each primary context first: NCCL's runtime calls then use the same ones
    const cells: (ncclComm_t | null)[] = resolved.map(() => null);
    const during = `devices ${ordinals.join(', ')}`;
    restoringContext(() => ncclChecked().ncclCommInitAll(cells, resolved.length, Int32Array.from(ordinals), during));
    return cells.map(
      (h, i) =>
        new Communicator(
          h!,
          i,
          resolved.length,
          resolved[i]!,
          options.label === undefined ? undefined : `${options.label}[${i}]`,
        ),
    );
  }

  /**
   * This process's rank of a clique of `size` ranks (ncclCommInitRank, the id passed by value).
   * Blocks the calling thread until every rank has joined (as MPI_Init does): start all ranks
   * together. In one process, ranks of the same clique must be initialised inside `group()`.
   */
  static initRank(descriptor: InitRankDescriptor): Communicator {
    if (typeof descriptor !== 'object' || descriptor === null)
      throw new TypeError(`Communicator.initRank takes { id, rank, size, device }, got ${describeValue(descriptor)}`);
    const { id } = descriptor;
    if (!(id instanceof NcclUniqueId))
      throw new TypeError(
        `Communicator.initRank id must be an NcclUniqueId (NcclUniqueId.fromBase64 on the other ranks), got ${describeValue(id)}`,
      );
    const size = checkInteger(descriptor.size, 1, 2 ** 31 - 1, 'Communicator.initRank size');
    const rank = checkInteger(descriptor.rank, 0, size - 1, 'Communicator.initRank rank');
    const device = resolveDevice(descriptor.device, 'Communicator.initRank');
    disableNvlinkMulticast();
    // NCCL takes the device current on the calling thread.
    device.context.makeCurrent();
    const during = `rank ${rank} of ${size} on device ${device.ordinal}`;
    const struct = id.toStruct() as unknown as ncclUniqueId;
    const handle = restoringContext(() => ncclChecked().ncclCommInitRank(size, struct, rank, during));
    return new Communicator(handle, rank, size, device, descriptor.label);
  }

  /** ncclGroupStart/End around `enqueue` (see group.ts); resolves when the group's collectives complete. */
  static group(enqueue: () => void): Promise<void> {
    return group(enqueue);
  }

  /** NCCL's version code (22809 for 2.28.9). */
  static version(): number {
    return ncclChecked().ncclGetVersion();
  }

  /** What NCCL itself says of the communicator: its rank count, CUDA device and rank (ncclCommCount/CuDevice/UserRank). */
  describe(): { count: number; cudaDevice: number; rank: number } {
    live(this, 'describe');
    const [api, h] = [ncclChecked(), this.handle];
    return { count: api.ncclCommCount(h), cudaDevice: api.ncclCommCuDevice(h), rank: api.ncclCommUserRank(h) };
  }

  /** An asynchronous error NCCL recorded on the communicator (a peer gone, a network failure), or undefined. */
  asyncError(): NcclError | undefined {
    live(this, 'asyncError');
    // The status NCCL recorded is data here, not this call's failure: it becomes an error through statusError.
    const code: number = ncclChecked().ncclCommGetAsyncError(this.handle) ?? 0;
    return code === 0 || code === 7 ? undefined : statusError('nccl', code, 'ncclCommGetAsyncError', this.label);
  }

  /** Sum (or `op`) of every rank's `send`, into every rank's `recv` (in place when they are the same buffer). */
  allReduce<T extends DeviceBuffer>(send: T, recv: T, options: ReduceOptions): Promise<void> {
    live(this, 'allReduce');
    const what = `${this.label} allReduce`;
    const stream = this.#stream(options, what);
    // The average over one rank is the value itself: NCCL's sum copies it exactly. (NCCL 2.28.3's
    // ncclAvg of float64 on one rank left the last of 4099 elements unwritten on an H100.)
    const op = options.op === 'avg' && this.size === 1 ? 'sum' : (options.op ?? 'sum');
    const t = ncclReduceType(send?.dtype, op, what);
    checkBuffers(stream, what, send, recv);
    const count = checkCount(options.count, send.length, what);
    checkFits(recv, count, 'recv', what);
    return this.#enqueue(stream, [send, recv], (sh) =>
      ncclChecked().ncclAllReduce(
        toPointer(send.address),
        toPointer(recv.address),
        count * t.scale,
        t.datatype,
        t.op,
        this.handle,
        sh,
        enqueueDuring,
        this,
        stream,
      ),
    );
  }

  /** The root's `send` into every rank's `recv` (`send` may be null on other ranks; the same buffer as `recv` for in place). */
  broadcast<T extends DeviceBuffer>(send: T | null, recv: T, options: CollectiveOptions & RootOptions): Promise<void> {
    live(this, 'broadcast');
    const what = `${this.label} broadcast`;
    const stream = this.#stream(options, what);
    const root = checkInteger(options.root, 0, this.size - 1, `${what} root`);
    const source = this.rank === root ? send : null;
    if (this.rank === root && !send)
      throw new TypeError(`${what}: rank ${root} is the root and must give a send buffer`);
    const t = ncclMoveType(recv?.dtype, what);
    checkBuffers(stream, what, source ?? recv, recv);
    const count = checkCount(options.count, (source ?? recv).length, what);
    checkFits(recv, count, 'recv', what);
    const src = source ?? recv;
    return this.#enqueue(stream, source ? [source, recv] : [recv], (sh) =>
      ncclChecked().ncclBroadcast(
        toPointer(src.address),
        toPointer(recv.address),
        count * t.scale,
        t.datatype,
        root,
        this.handle,
        sh,
        enqueueDuring,
        this,
        stream,
      ),
    );
  }

  /** Sum (or `op`) of every rank's `send` into the root's `recv` (`recv` may be null on other ranks). */
  reduce<T extends DeviceBuffer>(send: T, recv: T | null, options: ReduceOptions & RootOptions): Promise<void> {
    live(this, 'reduce');
    const what = `${this.label} reduce`;
    const stream = this.#stream(options, what);
    const root = checkInteger(options.root, 0, this.size - 1, `${what} root`);
    const t = ncclReduceType(send?.dtype, options.op ?? 'sum', what);
    const target = this.rank === root ? recv : null;
    if (this.rank === root && !recv)
      throw new TypeError(`${what}: rank ${root} is the root and must give a recv buffer`);
    checkBuffers(stream, what, send, target ?? send);
    const count = checkCount(options.count, send.length, what);
    if (target) checkFits(target, count, 'recv', what);
    return this.#enqueue(stream, target ? [send, target] : [send], (sh) =>
      ncclChecked().ncclReduce(
        toPointer(send.address),
        target ? toPointer(target.address) : null,
        count * t.scale,
        t.datatype,
        t.op,
        root,
        this.handle,
        sh,
        enqueueDuring,
        this,
        stream,
      ),
    );
  }

  /** Every rank's `count` elements of `send`, concatenated by rank into every rank's `recv` (size x count elements). */
  allGather<T extends DeviceBuffer>(send: T, recv: T, options: CollectiveOptions): Promise<void> {
    live(this, 'allGather');
    const what = `${this.label} allGather`;
    const stream = this.#stream(options, what);
    const t = ncclMoveType(send?.dtype, what);
    checkBuffers(stream, what, send, recv);
    const count = checkCount(options.count, send.length, what);
    checkFits(recv, count * this.size, 'recv', what);
    return this.#enqueue(stream, [send, recv], (sh) =>
      ncclChecked().ncclAllGather(
        toPointer(send.address),
        toPointer(recv.address),
        count * t.scale,
        t.datatype,
        this.handle,
        sh,
        enqueueDuring,
        this,
        stream,
      ),
    );
  }

  /** The reduction of every rank's `send` (size x count elements), rank r keeping block r in `recv` (count elements, default recv.length). */
  reduceScatter<T extends DeviceBuffer>(send: T, recv: T, options: ReduceOptions): Promise<void> {
    live(this, 'reduceScatter');
    const what = `${this.label} reduceScatter`;
    const stream = this.#stream(options, what);
    const t = ncclReduceType(send?.dtype, options.op ?? 'sum', what);
    checkBuffers(stream, what, send, recv);
    const count = checkCount(options.count, recv.length, what);
    checkFits(send, count * this.size, 'send', what);
    return this.#enqueue(stream, [send, recv], (sh) =>
      ncclChecked().ncclReduceScatter(
        toPointer(send.address),
        toPointer(recv.address),
        count * t.scale,
        t.datatype,
        t.op,
        this.handle,
        sh,
        enqueueDuring,
        this,
        stream,
      ),
    );
  }

  /** Sends `count` elements (default all) of `buffer` to `peer`, which must recv them; pair them inside group() when both sides run in one thread. */
  send(buffer: DeviceBuffer, options: PeerOptions): Promise<void> {
    live(this, 'send'); // before a private member: a plain object's call names the receiver
    return this.#peerMove('send', buffer, options);
  }

  /** Receives `count` elements (default the buffer's length) from `peer` into `buffer`. */
  recv(buffer: DeviceBuffer, options: PeerOptions): Promise<void> {
    live(this, 'recv'); // before a private member: a plain object's call names the receiver
    return this.#peerMove('recv', buffer, options);
  }

  /** send() and recv(): the same checks and call, to or from `peer`. */
  #peerMove(kind: 'send' | 'recv', buffer: DeviceBuffer, options: PeerOptions): Promise<void> {
    const what = `${this.label} ${kind}`;
    const stream = this.#stream(options, what);
    const peer = checkInteger(options.peer, 0, this.size - 1, `${what} peer`);
    const t = ncclMoveType(buffer?.dtype, what);
    checkBuffers(stream, what, buffer);
    const count = checkCount(options.count, buffer.length, what);
    const move = kind === 'send' ? ncclChecked().ncclSend : ncclChecked().ncclRecv;
    return this.#enqueue(stream, [buffer], (sh) =>
      move(toPointer(buffer.address), count * t.scale, t.datatype, peer, this.handle, sh, enqueueDuring, this, stream),
    );
  }

  /** Aborts in-flight operations and frees the communicator (ncclCommAbort): the way out after a peer failed. */
  abort(): void {
    if (!(this instanceof Communicator)) live(this, 'abort');
    if (this.disposed) return;
    try {
      restoringContext(() => ncclChecked().ncclCommAbort(this.handle, this.label));
    } finally {
      // Whatever the abort reported, dispose() must not call ncclCommDestroy on the handle after it.
      this.#aborted = true;
      this.dispose();
    }
  }

  #aborted = false;

  #stream(options: CollectiveOptions | PeerOptions, what: string): Stream {
    this.assertAlive();
    return collectiveStream(options, what, this.context, this.device.ordinal);
  }

  /** Runs `invoke` (a checked collective on the stream's handle) and records its buffers' use. */
  #enqueue(
    stream: Stream,
    buffers: readonly DeviceBuffer[],
    invoke: (stream: Stream['handle']) => void,
  ): Promise<void> {
    const sh = stream.use();
    try {
      invoke(sh);
    } finally {
      // A collective outside a group is a group of one: NCCL may have switched the device meanwhile.
      if (!inGroup()) restoreCurrentContext();
    }
    for (const b of buffers) b.recordUse(stream);
    return completion(stream);
  }

  /** ncclCommDestroy: flushes what was enqueued (ncclCommFinalize) and frees the communicator. */
  protected releaseNative(): void {
    if (this.#aborted) return;
    restoringContext(() => ncclChecked().ncclCommDestroy(this.handle, this.label));
  }
}

/** What a failed collective was doing, built only when it fails (src/ffi/checked-call.ts). */
const enqueueDuring = (comm: Communicator, stream: Stream): string => `${comm.label}, stream "${stream.label}"`;
