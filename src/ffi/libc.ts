/**
 * The C library's memcpy, run on libuv's thread pool through koffi's asynchronous calls: large
 * host copies (a plain array into pinned staging and back) then leave the event loop free and
 * run several at once. koffi passes a TypedArray's own memory to the call (no copy), so the
 * caller keeps both arrays alive and untouched until the promise settles. CUDA-free.
 */
import koffi from 'koffi';

type KoffiFunction = ReturnType<ReturnType<typeof koffi.load>['func']>;

let memcpy: KoffiFunction | null | undefined;

/** memcpy from libc.so.6, or null where it cannot be loaded (the callers then copy in place). */
function libcMemcpy(): KoffiFunction | null {
  if (memcpy === undefined) {
    try {
      memcpy = koffi.load('libc.so.6').func('void *memcpy(void *dst, const void *src, size_t n)');
    } catch {
      memcpy = null;
    }
  }
  return memcpy;
}

/** Whether memcpyAsync runs off the event loop here (libc.so.6 loads). */
export function hasThreadedMemcpy(): boolean {
  return libcMemcpy() !== null;
}

/**
 * Copies `source`'s bytes into `target` (same byte length) on a thread-pool thread. Resolves when
 * the copy is done; where libc cannot be loaded it copies in place and resolves at once.
 */
export function memcpyAsync(target: Uint8Array, source: Uint8Array): Promise<void> {
  if (target.byteLength !== source.byteLength)
    return Promise.reject(
      new RangeError(`memcpyAsync: target holds ${target.byteLength} bytes, source ${source.byteLength}`),
    );
  const fn = libcMemcpy();
  if (!fn) {
    target.set(source);
    return Promise.resolve();
  }
  return new Promise<void>((resolve, reject) => {
    fn.async(target, source, source.byteLength, (error: unknown) =>
      error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(),
    );
  });
}
