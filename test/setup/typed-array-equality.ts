/**
 * vitest's generic `equals` walks a typed array element by element through its iterator and custom
 * testers: about 3.6 s per million float32 elements on a CI core. GPU tests compare results of
 * millions of samples, and a test comparing 4 x 8 M elements spent minutes in `toEqual` and looked
 * like a hang on a two-GPU host. This tester gives the same answer (same constructor, same length,
 * every element `Object.is`-equal, so NaN equals NaN and +0 differs from -0) in one tight loop.
 */
import { expect } from 'vitest';

type Indexed = ArrayLike<number | bigint>;

function isTypedArray(value: unknown): value is ArrayBufferView & Indexed {
  return ArrayBuffer.isView(value) && !(value instanceof DataView);
}

function typedArraysEqual(a: unknown, b: unknown): boolean | undefined {
  if (!isTypedArray(a) || !isTypedArray(b)) return undefined;
  if (a.constructor !== b.constructor || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

expect.addEqualityTesters([typedArraysEqual]);
