import { describe, expect, it } from 'vitest';
import { StageRegistrationError, StageRegistry } from '../../../src/engine/stages.js';
import { validateJob } from '../../../src/engine/validate.js';

describe('StageRegistry', () => {
  it('registers stages that jobs can then name as flags', () => {
    const r = new StageRegistry();
    r.register('supdem', { after: 'fft', run: () => 1 });
    r.register('post.v2', { after: 'inverse', run: () => 2 });
    expect([...r.names()]).toEqual(['supdem', 'post.v2']);
    expect(r.get('supdem')?.after).toBe('fft');
    const job = validateJob(
      { data: new Float32Array(64).fill(1), flags: ['post.v2', 'stft', 'supdem'], stageParams: { supdem: 3 } },
      { stages: r.names() },
    );
    expect(job.stages).toEqual(['post.v2', 'supdem']);
    expect(job.stageParams).toEqual({ supdem: 3 });
  });

  it('refuses bad names, built-in flags, duplicates and malformed stages', () => {
    const r = new StageRegistry();
    r.register('a', { after: 'fft', run: () => 0 });
    expect(() => r.register('a', { after: 'fft', run: () => 0 })).toThrow(/already registered/);
    expect(() => r.register('cycles', { after: 'fft', run: () => 0 })).toThrow(/built-in/);
    expect(() => r.register('has space', { after: 'fft', run: () => 0 })).toThrow(StageRegistrationError);
    expect(() => r.register('b', { after: 'middle' as 'fft', run: () => 0 })).toThrow(/'fft' or 'inverse'/);
    expect(() => r.register('c', { after: 'fft' } as never)).toThrow(/run\(ctx\)/);
  });
});
