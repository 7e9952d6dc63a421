/**
 * Enqueues sosfilt's kernels (filter.cu, "second-order sections in parallel along time") for `batch`
 * series: each series' start state, then per group of at most GROUP_SECTIONS sections the tiles' end
 * states from zero starts, their two-level scan along the series, and every tile again from its true
 * start. sosfilt runs it once; sosfiltfilt twice, on its padded float64 copy (the second pass backwards).
 * Checks nothing: iir.ts has checked the buffers and the filter.
 */
import type { Context } from '../runtime/context.js';
import type { Precision } from '../runtime/fft/precision.js';
import type { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { DType } from '../runtime/memory/dtype.js';
import type { Stream } from '../runtime/stream.js';
import type { RealBuffer } from './buffers.js';
import { derivedTable } from './filter-tables.js';
import { elementwise, perWarp } from './launch.js';
import {
  GROUP_SECTIONS,
  groupTransitions,
  scanGeometry,
  scanScratch,
  SECTION_STRIDE,
  sectionTable,
  TILE_THREADS,
} from './sos-scan.js';
import { signalWorkspace as ws } from './workspace.js';

/** Where each series starts: a zero state, scipy's zi (sections, batch, 2), or the steady state zi (sections, 2, float64) times the series' first sample in filtering order (sosfiltfilt). */
export type SosStart = { kind: 'zero' } | { kind: 'zi'; zi: RealBuffer } | { kind: 'steady'; zi: DeviceBuffer<'f64'> };

const START_MODES = { zero: 0, zi: 1, steady: 2 } as const;

/** One sosfilt over `batch` series of `length` samples of `x` (precision `p`) into `y` (may be x). */
export interface SosRun {
  context: Context;
  stream: Stream;
  p: Precision;
  x: RealBuffer;
  y: RealBuffer;
  batch: number;
  length: number;
  /** The checked sections, flat (6 a row), and their coefficientDigest (the key of the tables made from them). */
  sos: Float64Array;
  sections: number;
  digest: string;
  start: SosStart;
  /** The final state, scipy's layout (sections, batch, 2); may be the zi of `start`. */
  zf?: RealBuffer | undefined;
  /** Filter each series from its last sample to its first (sosfiltfilt's second pass). */
  reverse: boolean;
}

/** A group's part of a buffer laid out section after section: the buffer itself when one group holds every section (no view made). */
function part<T extends DType>(
  buffer: DeviceBuffer<T>,
  oneGroup: boolean,
  offset: number,
  length: number,
): DeviceBuffer<T> {
  return oneGroup ? buffer : buffer.view(offset, length);
}

/** Enqueues `run` on its stream. */
export function enqueueSosfilt(run: SosRun): void {
  const { context: ctx, stream, p, x, y, batch, length, sections, start } = run;
  const scratch = scanScratch(length, sections, p);
  const init = ws.scratch(ctx, stream, 'sosfilt-init', 'f64', batch * scratch.init);
  // Unused pointer arguments get a buffer of the right dtype that is never read.
  ws.filterKernel(ctx, `sos_initial_state_${p}`)(
    elementwise(batch * scratch.init, stream),
    x,
    start.kind === 'zero' ? x : start.zi,
    init,
    batch,
    length,
    sections,
    START_MODES[start.kind],
    run.reverse ? 1 : 0,
  );
  if (scratch.wide === 0) return cascade(run, p, x, y, init, run.zf);
  // Float32 series through more than one launch of sections: the launches pass float64 between them, as one
  // launch keeps its sections' intermediate values, so the output rounds once, at the end.
  const work = ws.scratch(ctx, stream, 'sosfilt-wide', 'f64', batch * scratch.wide);
  ws.filterKernel(ctx, `series_to_f64_${p}`)(elementwise(batch * length, stream), x, work, batch, length, 0, 0);
  const states = sections * batch * 2;
  const zf = run.zf === undefined ? undefined : ws.scratch(ctx, stream, 'sosfilt-wide-zf', 'f64', states);
  cascade(run, 'f64', work, work, init, zf);
  ws.filterKernel(ctx, `series_from_f64_${p}`)(elementwise(batch * length, stream), work, y, batch, length, 0);
  if (zf !== undefined && run.zf !== undefined)
    ws.filterKernel(ctx, `series_from_f64_${p}`)(elementwise(states, stream), zf, run.zf, 1, states, 0);
}

/** The cascade in launches of at most GROUP_SECTIONS sections over series of precision `p`, from the start states `init`. */
function cascade(
  run: SosRun,
  p: Precision,
  x: RealBuffer,
  y: RealBuffer,
  init: DeviceBuffer<'f64'>,
  zfAll: RealBuffer | undefined,
): void {
  const { context: ctx, stream, batch, length, sections } = run;
  const { tiles, group, groups } = scanGeometry(length);
  const scratch = scanScratch(length, sections, p);
  const reverse = run.reverse ? 1 : 0;
  const table = derivedTable(ctx, 'sos-sections', run.digest, '', () => sectionTable(run.sos, sections), stream);
  const ends = tiles > 1 ? ws.scratch(ctx, stream, 'sosfilt-ends', 'f64', batch * scratch.ends) : init;
  const carries = groups > 1 ? ws.scratch(ctx, stream, 'sosfilt-carries', 'f64', batch * scratch.carries) : ends;
  const oneGroup = sections <= GROUP_SECTIONS;
  for (let first = 0; first < sections; first += GROUP_SECTIONS) {
    const count = Math.min(GROUP_SECTIONS, sections - first);
    const source = first === 0 ? x : y; // later launches filter the earlier ones' output
    const rows = part(table, oneGroup, first * SECTION_STRIDE, count * SECTION_STRIDE);
    const starts = part(init, oneGroup, first * batch * 2, count * batch * 2);
    const zf = zfAll === undefined ? y : part(zfAll, oneGroup, first * batch * 2, count * batch * 2);
    if (tiles > 1) {
      ws.filterKernel(ctx, `sos_tile_final_${p}`)(
        perWarp(batch * (tiles - 1), TILE_THREADS, stream),
        source,
        rows,
        ends,
        batch,
        length,
        count,
        reverse,
      );
      const transitions = derivedTable(
        ctx,
        'sos-transitions',
        run.digest,
        `${first}:${count}:${group}`,
        () => groupTransitions(run.sos.subarray(6 * first, 6 * (first + count)), count, group),
        stream,
      );
      if (groups > 1) {
        const warps = perWarp(batch * (groups - 1), TILE_THREADS, stream);
        ws.filterKernel(ctx, 'sos_group_final')(warps, ends, carries, transitions, batch, tiles, group, count);
        const series = perWarp(batch, TILE_THREADS, stream);
        ws.filterKernel(ctx, 'sos_group_scan')(series, carries, starts, transitions, batch, groups, count);
      }
      ws.filterKernel(ctx, 'sos_group_apply')(
        perWarp(batch * groups, TILE_THREADS, stream),
        ends,
        carries,
        starts,
        transitions,
        batch,
        tiles,
        group,
        count,
      );
    }
    ws.filterKernel(ctx, `sos_tile_apply_${p}`)(
      perWarp(batch * tiles, TILE_THREADS, stream),
      source,
      y,
      rows,
      ends,
      starts,
      zf,
      batch,
      length,
      count,
      reverse,
      zfAll === undefined ? 0 : 1,
    );
  }
}
