import koffi from 'koffi';
import { PIP_SUFFIX } from '../../../src/ffi/cuda-version.js';
import { describe, expect, it } from 'vitest';
import { NCCL_FUNCTIONS } from '../../../src/ffi/generated/nccl.js';
import { registerKoffiTypes } from '../../../src/ffi/generated/types.js';
import { CudaUnavailableError } from '../../../src/ffi/errors.js';
import { nccl, NcclError, ncclStatusName } from '../../../src/ffi/nccl.js';
import { isLibraryAvailable } from '../../../src/ffi/libraries.js';
import { NcclUniqueIdError } from '../../../src/runtime/nccl/errors.js';
import { NCCL_UNIQUE_ID_BYTES, NcclUniqueId } from '../../../src/runtime/nccl/unique-id.js';

function randomId(): Uint8Array {
  const b = new Uint8Array(NCCL_UNIQUE_ID_BYTES);
  for (let i = 0; i < b.length; i++) b[i] = (Math.random() * 256) | 0;
  b[5] = 0; // a NUL inside: the id is bytes, never a C string
  return b;
}

describe('NcclUniqueId', () => {
  it('round-trips through base64 and JSON, byte for byte', () => {
    const bytes = randomId();
    const id = NcclUniqueId.fromBytes(bytes);
    const text = id.toBase64();
    expect(text).toHaveLength(172);
    const back = NcclUniqueId.fromBase64(text);
    expect(back.bytes).toEqual(bytes);
    expect(back.equals(id)).toBe(true);
    expect(NcclUniqueId.fromBase64(JSON.parse(JSON.stringify({ id })).id as string).equals(id)).toBe(true);
    expect(NcclUniqueId.fromBase64(`  ${text}\n`).equals(id)).toBe(true);
  });

  it('copies: changing the source or the bytes it hands out changes nothing', () => {
    const bytes = randomId();
    const id = NcclUniqueId.fromBytes(bytes);
    const before = id.toBase64();
    bytes[0] = bytes[0]! ^ 0xff;
    id.bytes[1] = 7;
    id.toStruct().internal[2] = 9;
    expect(id.toBase64()).toBe(before);
  });

  it('rejects anything that is not exactly 128 bytes', () => {
    expect(() => NcclUniqueId.fromBytes(new Uint8Array(127))).toThrow(NcclUniqueIdError);
    expect(() => NcclUniqueId.fromBytes([1, 2] as unknown as Uint8Array)).toThrow(/Uint8Array of 128 bytes/);
    expect(() => NcclUniqueId.fromBase64(Buffer.alloc(129).toString('base64'))).toThrow(/holds 129/);
    expect(() => NcclUniqueId.fromBase64('not base64 at all!')).toThrow(/not base64/);
    expect(() => NcclUniqueId.fromBase64('')).toThrow(NcclUniqueIdError);
    expect(() => NcclUniqueId.fromBase64(42 as unknown as string)).toThrow(NcclUniqueIdError);
  });

  it('passes by value through the C ABI exactly as ncclCommInitRank is declared (no GPU, no NCCL)', () => {
    registerKoffiTypes();
    expect(koffi.sizeof('ncclUniqueId')).toBe(128);
    const decl = NCCL_FUNCTIONS.find((d) => d[0] === 'ncclCommInitRank')!;
    expect(decl[3].map(([, type]) => type)).toEqual(['void **', 'int32', 'ncclUniqueId', 'int32']);
    // A C function pointer of the generated signature, implemented in JS: the call goes through
    // koffi's native by-value marshalling (the 128 bytes are copied onto the C stack) and back.
    const proto = koffi.proto(`int32 initRankProbe(${decl[3].map(([name, type]) => `${type} ${name}`).join(', ')})`);
    let seen: { size: number; bytes: Uint8Array; rank: number } | undefined;
    const ptr = koffi.register((_comm: unknown, size: number, commId: { internal: Uint8Array }, rank: number) => {
      seen = { size, bytes: new Uint8Array(commId.internal), rank };
      return 0;
    }, koffi.pointer(proto));
    try {
      const call = koffi.decode(ptr, proto) as (...args: unknown[]) => number;
      const id = NcclUniqueId.fromBytes(randomId());
      expect(call([null], 3, id.toStruct(), 2)).toBe(0);
      expect(seen!.size).toBe(3);
      expect(seen!.rank).toBe(2);
      expect(seen!.bytes).toEqual(id.bytes);
    } finally {
      koffi.unregister(ptr);
    }
  });
});

describe('NCCL library and errors', () => {
  it('names NCCL statuses and carries NCCL last-error message', () => {
    expect(ncclStatusName(4)).toBe('ncclInvalidArgument');
    expect(ncclStatusName(99)).toBe('ncclUnknownResult_99');
    const e = new NcclError(6, 'ncclAllReduce', { lastError: 'peer 1 closed the connection', during: 'rank 0' });
    expect(e.status).toBe('ncclRemoteError');
    expect(e.message).toMatch(
      /ncclAllReduce failed: ncclRemoteError \(6\).*NCCL: peer 1 closed the connection \[rank 0\]/,
    );
  });

  it('loads lazily: without NCCL the error names where it looked; with it NCCL_NVLS_ENABLE=0 is set first', () => {
    if (!isLibraryAvailable('nccl')) {
      expect(() => nccl()).toThrow(CudaUnavailableError);
      expect(() => nccl()).toThrow(
        new RegExp(`nccl library not found \\(searched: .*libnccl\\.so\\.2.*nvidia-nccl-${PIP_SUFFIX}`),
      );
      return;
    }
    const saved = process.env.NCCL_NVLS_ENABLE;
    try {
      expect(typeof nccl().ncclGetVersion).toBe('function');
      expect(process.env.NCCL_NVLS_ENABLE).toBe('0');
    } finally {
      if (saved === undefined) delete process.env.NCCL_NVLS_ENABLE;
      else process.env.NCCL_NVLS_ENABLE = saved;
    }
  });
});
