/** Size classes of the StreamOrderedAllocator: powers of two from MIN_CLASS_BYTES, so a freed block fits many requests. */
export const MIN_CLASS_BYTES = 256;

/** The size class (power of two, at least MIN_CLASS_BYTES) a request of `bytes` is served from. */
export function sizeClass(bytes: number): number {
  if (!Number.isSafeInteger(bytes) || bytes <= 0)
    throw new RangeError(`allocation size must be a positive integer number of bytes, got ${bytes}`);
  if (bytes <= MIN_CLASS_BYTES) return MIN_CLASS_BYTES;
  // Bit arithmetic up to 1 GiB: log2 and pow cost a tenth of an allocation on the allocator's hot path.
  if (bytes <= 2 ** 30) return 1 << (32 - Math.clz32(bytes - 1));
  return 2 ** Math.ceil(Math.log2(bytes));
}
