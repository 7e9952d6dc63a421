/**
 * Fast exact checks for large arrays, and a bound on how long a GPU wait may take.
 *
 * Why: vitest's `toEqual` walks a TypedArray element by element through its generic deep
 * equality, at about 6 µs an element (measured: 1 Mi floats take 6.5 s, 8 Mi take ~50 s). The
 * "hangs" of the two-GPU tests in issue 23 were that: four 8 Mi-float `toEqual`s in one test
 * (~200 s, past any timeout) and eight 1 Mi-float ones in another. `expectSameValues` compares
 * the bytes (memcmp speed: milliseconds for 32 MiB) and, when they differ, names the first
 * differing element and how many differ.
 */
import { expect } from 'vitest';

/** The same element type, the same length and the same bytes (NaN poison included), or a failure naming the first difference. */
export function expectSameValues(actual: ArrayBufferView, expected: ArrayBufferView, what = 'array'): void {
  expect(actual.constructor.name, `${what}: element type`).toBe(expected.constructor.name);
  expect(actual.byteLength, `${what}: byte length`).toBe(expected.byteLength);
  const a = Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength);
  const e = Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength);
  if (a.equals(e)) return;
  const x = actual as unknown as ArrayLike<number>;
  const y = expected as unknown as ArrayLike<number>;
  const bytesPer = (actual as unknown as { BYTES_PER_ELEMENT?: number }).BYTES_PER_ELEMENT ?? 1;
  const av = new Uint8Array(actual.buffer, actual.byteOffset, actual.byteLength);
  const ev = new Uint8Array(expected.buffer, expected.byteOffset, expected.byteLength);
  let first = -1;
  let differing = 0;
  for (let i = 0; i < av.length; i += bytesPer) {
    let same = true;
    for (let b = 0; b < bytesPer; b++) if (av[i + b] !== ev[i + b]) same = false;
    if (!same) {
      if (first < 0) first = i / bytesPer;
      differing++;
    }
  }
  expect.fail(
    `${what}: ${differing} of ${av.length / bytesPer} elements differ; the first at [${first}]: got ${String(x[first])}, expected ${String(y[first])}`,
  );
}

/**
 * `promise`, or a rejection naming `what` once `ms` have passed: a GPU wait that never settles is
 * then a red test with a reason, not a test that runs into the suite's timeout (or hangs it).
 */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
