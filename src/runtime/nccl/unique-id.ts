/** NCCL's 128-byte unique id (ncclUniqueId): made once by one rank, handed to every other rank (as base64), passed by value to ncclCommInitRank. */
import { ncclChecked } from '../../ffi/checked.js';
import { NcclUniqueIdError } from './errors.js';

/** NCCL_UNIQUE_ID_BYTES. */
export const NCCL_UNIQUE_ID_BYTES = 128;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The id that names one communicator clique. Rank 0 calls `NcclUniqueId.generate()` (which opens
 * NCCL's bootstrap listener on this host) and sends `id.toBase64()` to the other ranks (an
 * environment variable, a file, a socket: any channel); they rebuild it with `fromBase64()`.
 * It is a rendezvous address, not a secret, but whoever holds it can join the clique.
 */
export class NcclUniqueId {
  readonly #bytes: Uint8Array;

  private constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
  }

  /** From the 128 bytes NCCL produced (copied). */
  static fromBytes(bytes: Uint8Array): NcclUniqueId {
    if (!(bytes instanceof Uint8Array))
      throw new NcclUniqueIdError(
        `an NCCL unique id is a Uint8Array of ${NCCL_UNIQUE_ID_BYTES} bytes, got ${bytes === null ? 'null' : typeof bytes}`,
      );
    if (bytes.length !== NCCL_UNIQUE_ID_BYTES)
      throw new NcclUniqueIdError(`an NCCL unique id is ${NCCL_UNIQUE_ID_BYTES} bytes, got ${bytes.length}`);
    return new NcclUniqueId(new Uint8Array(bytes));
  }

  /** From `toBase64()`'s text: exactly 128 bytes of standard base64, or NcclUniqueIdError. */
  static fromBase64(text: string): NcclUniqueId {
    if (typeof text !== 'string')
      throw new NcclUniqueIdError(
        `an NCCL unique id in base64 must be a string, got ${text === null ? 'null' : typeof text}`,
      );
    const trimmed = text.trim();
    if (!BASE64.test(trimmed) || trimmed.length % 4 !== 0)
      throw new NcclUniqueIdError(
        `not base64: ${JSON.stringify(trimmed.slice(0, 24))}${trimmed.length > 24 ? '...' : ''}`,
      );
    const bytes = Buffer.from(trimmed, 'base64');
    if (bytes.length !== NCCL_UNIQUE_ID_BYTES)
      throw new NcclUniqueIdError(
        `an NCCL unique id is ${NCCL_UNIQUE_ID_BYTES} bytes, the base64 text holds ${bytes.length}`,
      );
    return new NcclUniqueId(new Uint8Array(bytes));
  }

  /** A copy of the 128 bytes. */
  get bytes(): Uint8Array {
    return new Uint8Array(this.#bytes);
  }

  /** The value koffi passes by value as `ncclUniqueId` (`{ internal: char[128] }`). */
  toStruct(): { internal: Uint8Array } {
    return { internal: new Uint8Array(this.#bytes) };
  }

  /** 172 characters of standard base64. */
  toBase64(): string {
    return Buffer.from(this.#bytes).toString('base64');
  }

  /** JSON carries it as base64. */
  toJSON(): string {
    return this.toBase64();
  }

  /** True when both hold the same 128 bytes (ids made or parsed separately compare equal). Throws TypeError when `other` is not an NcclUniqueId. */
  equals(other: NcclUniqueId): boolean {
    const b = other.#bytes;
    for (let i = 0; i < NCCL_UNIQUE_ID_BYTES; i++) if (b[i] !== this.#bytes[i]) return false;
    return true;
  }

  /** `NcclUniqueId(` and the first 12 base64 characters `...)`: enough to tell ids apart in logs without printing all 172 characters. */
  toString(): string {
    return `NcclUniqueId(${this.toBase64().slice(0, 12)}...)`;
  }
}

/**
 * A fresh id from NCCL (ncclGetUniqueId): call it on one rank only, then share it. Loads NCCL
 * (CudaUnavailableError naming where it looked when it is absent); needs no GPU.
 */
export function generateUniqueId(): NcclUniqueId {
  const id = ncclChecked().ncclGetUniqueId() as unknown as { internal: Uint8Array };
  return NcclUniqueId.fromBytes(id.internal);
}
