import { describe, expect, it } from 'vitest';
import { ProgressBar, renderBar } from '../../../src/cli/progress.js';
import { gpuUnavailableLine } from '../../../src/cli/gpu-errors.js';

function sink(isTTY: boolean) {
  const out: string[] = [];
  return { out, s: { isTTY, columns: 60, write: (t: string) => out.push(t) } };
}

describe('progress bar', () => {
  it('renders a bar', () => {
    expect(renderBar(0, 10)).toBe('[..........]   0%');
    expect(renderBar(0.456, 10)).toBe('[#####.....]  45%');
    expect(renderBar(2, 10)).toBe('[##########] 100%');
    expect(renderBar(Number.NaN, 4)).toBe('[....]   0%');
  });

  it('redraws in place on a terminal, at most every minIntervalMs, and ends the line', () => {
    const { out, s } = sink(true);
    let now = 0;
    const bar = new ProgressBar({ label: 'job', total: 10, sink: s, now: () => now, minIntervalMs: 100 });
    bar.update(1);
    now = 50;
    bar.update(2); // too soon: skipped
    now = 150;
    bar.update(5, '3 jobs');
    bar.finish('done in 1 s');
    bar.update(9);
    expect(out).toHaveLength(4);
    expect(out[0]).toMatch(/^\r\x1b\[2Kjob \[#+\.+\]  10%$/);
    expect(out[1]).toMatch(/ 50%  3 jobs$/);
    expect(out[2]).toMatch(/100%  done in 1 s$/);
    expect(out[3]).toBe('\n');
    for (const line of out) expect(line.replace(/^\r\x1b\[2K/, '').length).toBeLessThan(60);
  });

  it('prints plain lines at each quarter when stderr is not a terminal', () => {
    const { out, s } = sink(false);
    const bar = new ProgressBar({ label: 'stft a.wav', total: 100, sink: s });
    for (let i = 0; i <= 100; i += 5) bar.update(i);
    bar.finish();
    expect(out).toEqual(['stft a.wav: 25%\n', 'stft a.wav: 50%\n', 'stft a.wav: 75%\n', 'stft a.wav: done\n']);
  });

  it('says nothing when silent, and clears a half-drawn bar on abort', () => {
    const quiet = sink(true);
    const bar = new ProgressBar({ label: 'x', total: 1, sink: quiet.s, silent: true });
    bar.update(0.5);
    bar.finish();
    expect(quiet.out).toEqual([]);
    const { out, s } = sink(true);
    const b = new ProgressBar({ label: 'x', total: 1, sink: s });
    b.update(0.5);
    b.abort();
    expect(out.at(-1)).toBe('\r\x1b[2K');
  });
});

describe('GPU unavailability lines', () => {
  it('says what is missing in one line, and leaves other errors alone', () => {
    const noDriver = Object.assign(new Error('cuda library not found'), { name: 'CudaUnavailableError' });
    expect(gpuUnavailableLine('demo', noDriver)).toBe(
      'tscuda demo: no NVIDIA driver found (libcuda.so.1); demo needs a CUDA GPU and its driver',
    );
    const noDevice = Object.assign(new Error('cuInit failed'), {
      name: 'CudaError',
      status: 'CUDA_ERROR_NO_DEVICE',
      call: 'cuInit',
    });
    expect(gpuUnavailableLine('stft', noDevice)).toMatch(/^tscuda stft: no CUDA device is visible/);
    expect(gpuUnavailableLine('stft', new TypeError('bug'))).toBeUndefined();
    expect(gpuUnavailableLine('stft', 'not an error')).toBeUndefined();
  });
});
