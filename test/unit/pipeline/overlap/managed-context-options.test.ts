import { describe, expect, it } from 'vitest';
import { ManagedContext } from '../../../../src/pipeline/overlap/managed-context.js';

// Options are checked before any device is touched, so these run without a GPU.
describe('ManagedContext options', () => {
  it('takes 3 to 16 slots, integers only, and names the bad value', () => {
    for (const slots of [0, 2, 17, 3.5, Number.NaN]) {
      expect(() => new ManagedContext({ mode: 'triple', slots, label: 'opts' }), `slots ${slots}`).toThrow(RangeError);
    }
    expect(() => new ManagedContext({ mode: 'triple', slots: 2, label: 'opts' })).toThrow(
      /slots must be an integer from 3 to 16, got 2/,
    );
  });
});
