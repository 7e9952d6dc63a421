/** detrend's type argument is checked before anything touches the buffer, with a message that names it. */
import { describe, expect, it } from 'vitest';
import { detrend } from '../../../src/signal/index.js';
import { stftGeometry } from '../../../src/signal/stft.js';

describe('detrend(x, type)', { timeout: 10_000 }, () => {
  it('names `type` and the current form when given the older options object, even one holding a BigInt', () => {
    const older = { type: 'linear', handle: 1n } as never;
    expect(() => detrend({} as never, older)).toThrow(
      new TypeError(
        "detrend: type (the second argument) must be 'constant' or 'linear', got an object (detrend(x, { type }) is the older form: write detrend(x, 'linear', options))",
      ),
    );
  });

  it('names `type` for any other value, a BigInt included', () => {
    expect(() => detrend({} as never, 5n as never)).toThrow(
      new TypeError("detrend: type (the second argument) must be 'constant' or 'linear', got 5n"),
    );
    expect(() => detrend({} as never, 'quadratic' as never)).toThrow(/got "quadratic"$/);
  });

  it("stft's detrend option quotes a BigInt instead of failing to serialise it", () => {
    expect(() => stftGeometry(64, { fs: 1, nperseg: 16, detrend: 1n as never })).toThrow(
      /detrend must be 'constant', 'linear' or false, got 1n/,
    );
  });
});
