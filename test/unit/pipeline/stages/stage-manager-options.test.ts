/**
 * StageManager's descriptor is checked before the driver is asked for anything (this suite runs
 * without a GPU: a check made after the driver would surface as "no CUDA driver" instead).
 */
import { describe, expect, it } from 'vitest';
import { StageManager } from '../../../../src/pipeline/index.js';

describe('StageManager refuses a wrong descriptor before touching the driver', () => {
  it('a misspelt option is refused by name, with the known ones', () => {
    expect(() => new StageManager({ concurent: false } as never)).toThrow(TypeError);
    expect(() => new StageManager({ concurent: false } as never)).toThrow(
      'StageManager descriptor.concurent: unknown option (known: coordinator, profiler, statsWindow, concurrent, label)',
    );
  });

  it('a descriptor that is not an object', () => {
    expect(() => new StageManager(null as never)).toThrow('new StageManager() takes a descriptor object, got null');
    expect(() => new StageManager(5 as never)).toThrow('new StageManager() takes a descriptor object, got 5');
  });

  it('a statsWindow that is not a positive integer', () => {
    expect(() => new StageManager({ statsWindow: 0, label: 's' })).toThrow(
      'StageManager "s": statsWindow must be a positive integer, got 0',
    );
  });
});
