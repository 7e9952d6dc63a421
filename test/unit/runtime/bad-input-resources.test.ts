/**
 * Bad input to the argument brands of resources and to timeouts; Resource disposal, sticky statuses
 * and host pages
 * (no GPU; the GPU half is test/gpu/runtime/bad-input-*.test.ts). Each row: the call, the error
 * class, and a pattern the message must match (it names the problem).
 */
import koffi from 'koffi';
import { CudaError } from '../../../src/ffi/errors.js';
import { CUresult } from '../../../src/ffi/generated/types.js';
import { describe, expect, it } from 'vitest';
import { HostPages } from '../../../src/runtime/memory/host-pages.js';
import { DisposedError, expectResource, Resource } from '../../../src/runtime/resource.js';
import { checkTimeoutMs } from '../../../src/runtime/timeout.js';
import { itRefusesEachRow, type Row } from '../../setup/bad-input-rows.js';

/** A stand-in resource (the real ones need a GPU): the brand checks are Resource's own. */
class Thing extends Resource {
  released = 0;
  constructor(label?: string) {
    super('Thing', label);
  }
  protected releaseNative(): void {
    this.released++;
  }
}
class Other extends Resource {
  constructor() {
    super('Other', undefined);
  }
  protected releaseNative(): void {}
}
const disposedThing = new Thing('gone');
disposedThing.dispose();

const brandRows: Row[] = [
  [
    'plain object for a resource',
    () => expectResource({ handle: 1n, label: 'fake', disposed: false }, Thing, 'stream'),
    TypeError,
    /stream must be a Thing, got a plain Object/,
  ],
  ['null for a resource', () => expectResource(null, Thing, 'stream'), TypeError, /stream must be a Thing, got null/],
  ['number for a resource', () => expectResource(5, Thing, 'event'), TypeError, /event must be a Thing, got number/],
  [
    'undefined for a resource',
    () => expectResource(undefined, 'Thing', 'event'),
    TypeError,
    /event must be a Thing, got undefined/,
  ],
  [
    'wrong family',
    () => expectResource(new Other(), 'Thing', 'buffer'),
    TypeError,
    /buffer must be a Thing, got Other "Other#\d+"/,
  ],
  [
    'object with a forged kind',
    () => expectResource({ kind: 'Thing', disposed: false }, 'Thing', 'x'),
    TypeError,
    /must be a Thing, got a plain Object/,
  ],
  [
    'prototype-forged object',
    () => expectResource(Object.create(Thing.prototype), 'Thing', 'x'),
    TypeError,
    /must be a Thing/,
  ],
  [
    'disposed resource by class',
    () => expectResource(disposedThing, Thing, 'stream'),
    DisposedError,
    /Thing "gone" was disposed and cannot be used/,
  ],
  [
    'disposed resource by family',
    () => expectResource(disposedThing, 'Thing', 'stream'),
    DisposedError,
    /Thing "gone" was disposed/,
  ],
  ['label not a string', () => new Thing(42 as never), TypeError, /Thing label must be a string, got number/],
];

const timeoutRows: Row[] = [
  [
    'timeout 2^31',
    () => checkTimeoutMs(2 ** 31, 'waitForAny timeoutMs'),
    RangeError,
    /waitForAny timeoutMs must be 0\.\.2147483647 ms \(the most a Node timer holds\), got 2147483648/,
  ],
  ['timeout 30 days', () => checkTimeoutMs(30 * 86_400_000, 'timeoutMs'), RangeError, /got 2592000000/],
  ['timeout -1', () => checkTimeoutMs(-1, 'timeoutMs'), RangeError, /got -1/],
  ['timeout NaN', () => checkTimeoutMs(Number.NaN, 'timeoutMs'), RangeError, /got NaN/],
  ['timeout Infinity not allowed', () => checkTimeoutMs(Infinity, 'timeoutMs'), RangeError, /got Infinity/],
  [
    'timeout string',
    () => checkTimeoutMs('100', 'timeoutMs'),
    TypeError,
    /must be a number of milliseconds, got string/,
  ],
  ['timeout bigint', () => checkTimeoutMs(100n, 'timeoutMs'), TypeError, /got bigint/],
];

const rows: Row[] = [...timeoutRows, ...brandRows];

describe('bad input to pure runtime validation: argument brands, disposed resources, timeouts', () => {
  it('has a row per case', () => {
    expect(rows.length).toBeGreaterThanOrEqual(17);
  });
  itRefusesEachRow(rows);
});

describe('sticky statuses', () => {
  it('counts only the statuses the driver documents as sticky (a stale handle is not a lost context)', () => {
    expect(new CudaError('driver', CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, 'cuEventQuery').sticky).toBe(true);
    expect(new CudaError('driver', CUresult.CUDA_ERROR_CONTEXT_IS_DESTROYED, 'cuEventQuery').sticky).toBe(false);
    expect(new CudaError('driver', CUresult.CUDA_ERROR_INVALID_HANDLE, 'cuEventQuery').sticky).toBe(false);
    expect(new CudaError('driver', CUresult.CUDA_ERROR_CONTAINED, 'cuEventQuery').sticky).toBe(true);
    expect(new CudaError('driver', CUresult.CUDA_ERROR_LAUNCH_FAILED, 'cuEventQuery').sticky).toBe(true);
  });
});

describe('Resource', () => {
  it('disposes once: a second dispose() is a no-op', () => {
    const t = new Thing();
    t.dispose();
    t.dispose();
    t[Symbol.dispose]();
    expect(t.released).toBe(1);
    expect(() => t.checkAlive()).toThrow(DisposedError);
  });
});

describe('host pages (the memory behind HostBuffer.array)', () => {
  it('are freed only when the owner and every array are gone', () => {
    const ptr = koffi.alloc('uint8', 256) as bigint;
    let freed = 0;
    const pages = new HostPages(Number(ptr), 256, () => {
      freed++;
      koffi.free(ptr);
    });
    const a = new Float32Array(pages.buffer());
    expect(pages.buffer()).toBe(a.buffer); // one array buffer while it lives
    expect(pages.holds).toBe(2);
    pages.drop(); // the owner is disposed: the array still holds the pages
    expect(freed).toBe(0);
    a[3] = 7; // still the caller's, never freed memory
    expect(a[3]).toBe(7);
    pages.drop(); // what the array's FinalizationRegistry does once it is collected
    expect(freed).toBe(1);
    expect(pages.released).toBe(true);
    pages.drop();
    expect(freed).toBe(1);
    expect(() => pages.buffer()).toThrow(/already released/);
  });
  it('free at once when no array was handed out', () => {
    let freed = 0;
    const pages = new HostPages(4096, 64, () => freed++);
    pages.drop();
    expect(freed).toBe(1);
  });
});
