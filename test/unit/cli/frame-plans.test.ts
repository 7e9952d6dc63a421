// The engine's chunk plan of a framed job and `tscuda stft`'s chunk plan both run the one framing
// of the signal layer: for the same series and parameters they hold the same geometry, and every
// chunk of either reads exactly the samples its frames span (frameSpan) of the extended, padded
// series, which framesGeometry frames as the chunk's stft does.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { frameChunks, parseStftOptions, planStft } from '../../../src/cli/commands/stft.js';
import { planJobChunks } from '../../../src/engine/capacity.js';
import type { LaneRunner } from '../../../src/engine/lane-runner.js';
import { validateJob } from '../../../src/engine/validate.js';
import { frameSpan, framesGeometry, type SpectralGeometry } from '../../../src/signal/geometry.js';

const dir = mkdtempSync(join(tmpdir(), 'tscuda-frame-plans-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The framing fields (what both plans read), without the window and the per-call choices (detrend). */
function framingOf(g: SpectralGeometry): Record<string, unknown> {
  const { length, nperseg, noverlap, hop, nfft, extension, boundary, padding, extendedLength, frames, freqs } = g;
  return { length, nperseg, noverlap, hop, nfft, extension, boundary, padding, extendedLength, frames, freqs };
}

/** A lane that holds `maxFrames` frames per chunk (the engine's planner asks nothing else of it). */
const lane = (maxFrames: number): LaneRunner => ({ maxFrames: () => maxFrames, maxRows: () => 1 }) as never;

describe('the engine and tscuda stft plan their chunks over the same geometry', { timeout: 20_000 }, () => {
  // [N, nperseg, noverlap, frames per chunk]: odd and even nperseg, hops that divide it and not.
  const CASES: [number, number, number, number][] = [
    [1000, 64, 32, 5],
    [1001, 63, 40, 7],
    [4096, 256, 192, 11],
    [37, 8, 7, 9],
    [300, 30, 0, 4],
  ];
  for (const [n, nperseg, noverlap, perChunk] of CASES)
    it(`N ${n}, nperseg ${nperseg}, noverlap ${noverlap}, ${perChunk} frames per chunk`, () => {
      const samples = Float32Array.from({ length: n }, (_, i) => Math.sin(i / 7));
      const window = noverlap === 0 ? 'boxcar' : 'hann'; // hann without overlap violates NOLA (the engine refuses it)
      const file = join(dir, `x-${n}-${nperseg}.f32`);
      writeFileSync(file, new Uint8Array(samples.buffer));
      const args = [file, '--nperseg', `${nperseg}`, '--noverlap', `${noverlap}`, '--window', window];
      const options = parseStftOptions(args);
      if (options === 'help') throw new Error('unexpected help');
      const cli = planStft(options).geometry;
      const job = validateJob({ data: samples, flags: ['stft'], nperseg, noverlap, window }, { stages: new Set() });
      const engine = job.framing!;
      expect(framingOf(engine)).toEqual(framingOf(cli));

      // tscuda stft: runs of whole frames, each frame once, each reading its span of the extended signal.
      const runs = frameChunks(cli, perChunk);
      let next = 0;
      for (const r of runs) {
        expect(r.start).toBe(next);
        expect({ start: r.inputStart, length: r.inputLength }).toEqual(frameSpan(cli, r.start, r.count));
        expect(framesGeometry(cli, r.count).length).toBe(r.inputLength);
        expect(r.inputStart + r.inputLength).toBeLessThanOrEqual(cli.extendedLength);
        next += r.count;
      }
      expect(next).toBe(cli.frames);

      // The engine: overlapping runs of whole frames of every series, owning every sample of the padded series once.
      const chunks = planJobChunks(job, lane(perChunk));
      let owned = 0;
      for (const { rows, frames: c } of chunks) {
        expect(rows).toBe(1);
        expect({ start: c!.inputStart, length: c!.inputLength }).toEqual(frameSpan(engine, c!.frameStart, c!.frames));
        expect(framesGeometry(engine, c!.frames).length).toBe(c!.inputLength);
        expect(c!.outputStart).toBe(owned);
        owned += c!.outputLength;
      }
      const last = chunks.at(-1)!.frames!;
      expect(last.frameStart + last.frames).toBe(engine.frames);
      expect(owned).toBe(engine.extendedLength);
    });
});
