/**
 * The GPU side of `tscuda filter` (loaded by filter.ts once the options, the input and the
 * output's folder are good): the channels spread over the GPUs (channel c on the (c mod GPUs)-th),
 * each GPU's channels filtered as one batch by signal.sosfilt (zero initial state, scipy's
 * default) or sosfiltfilt, then the WAV written.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { resolvePlacement } from '../../runtime/defaults.js';
import type { Device } from '../../runtime/device.js';
import { DeviceBuffer } from '../../runtime/memory/device-buffer.js';
import { PlacementError } from '../../runtime/placement-rules.js';
import { Stream } from '../../runtime/stream.js';
import type { RealBuffer } from '../../signal/buffers.js';
import { sosfilt, sosfiltfilt } from '../../signal/iir.js';
import { gpuUnavailableLine } from '../gpu-errors.js';
import { CommandReport } from '../report.js';
import { encodeWavFloat32 } from '../signal-input.js';
import type { FilterPlan } from './filter-plan.js';

/** One GPU's share of the channels. */
interface DeviceShare {
  device: number;
  name: string;
  channels: number[];
  seconds: number;
}

/** Filters the plan's channels and writes the WAV; resolves with the exit status. */
export async function runFilter(
  plan: FilterPlan,
  report: CommandReport = new CommandReport('filter', plan.options.json),
): Promise<number> {
  const { options: o, channels, fs, sos } = plan;
  const n = channels[0]!.length;
  let devices: Device[];
  try {
    // The one placement rule: every GPU by default; a device the machine lacks is refused with its count.
    devices = resolvePlacement({ devices: o.devices }, '--devices');
  } catch (e) {
    if (e instanceof PlacementError) return report.fail(e.message, 2, e.name);
    const line = gpuUnavailableLine('filter', e);
    if (line === undefined) throw e;
    return report.fail(line, 1, 'GpuUnavailable');
  }
  const first = channels[0]!;
  if (first.format === 'wav' && first.fsSource === 'option')
    report.note(`--fs ${fs} replaces the WAV header's sampling rate`);
  if (first.fsSource === 'default')
    report.note(
      'no --fs given for a raw/CSV signal: fs = 1 (cutoffs in cycles per sample; the WAV is written at 1 Hz)',
    );
  const shares: DeviceShare[] = devices.map((d, k) => ({
    device: d.ordinal,
    name: d.name,
    channels: channels.map((_, c) => c).filter((c) => c % devices.length === k),
    seconds: 0,
  }));
  const streams = devices.map((d) => new Stream({ device: d, label: `tscuda filter GPU ${d.ordinal}` }));
  const filtered: Float64Array[] = new Array<Float64Array>(channels.length);
  const Array_ = o.precision === 'f64' ? Float64Array : Float32Array;
  try {
    await Promise.all(
      shares.map(async (share, k) => {
        const batch = share.channels.length;
        if (batch === 0) return;
        const stream = streams[k]!;
        const t0 = performance.now();
        const host = new Array_(batch * n);
        share.channels.forEach((c, j) => host.set(channels[c]!.samples, j * n));
        const x = DeviceBuffer.alloc(o.precision, batch * n, { stream, label: 'filter input' }) as RealBuffer;
        let y: RealBuffer | undefined;
        try {
          (x as DeviceBuffer<'f32'>).write(host as Float32Array, { stream });
          const call = { batch, stream };
          y = o.zeroPhase ? sosfiltfilt(sos, x, call) : sosfilt(sos, x, call);
          (y as DeviceBuffer<'f32'>).read(host as Float32Array, { stream });
          await stream.done();
        } finally {
          y?.dispose();
          x.dispose();
        }
        share.channels.forEach((c, j) => (filtered[c] = Float64Array.from(host.subarray(j * n, (j + 1) * n))));
        share.seconds = (performance.now() - t0) / 1000;
      }),
    );
    const out = resolve(o.out);
    writeFileSync(out, encodeWavFloat32(filtered.length === 1 ? filtered[0]! : filtered, fs));
    const summary = {
      file: o.file,
      format: first.format,
      encoding: first.encoding ?? null,
      channels: channels.length,
      channelNote: channels.length > 1 ? `each of ${channels.length} channels` : first.channelNote,
      fs,
      fsSource: first.fsSource,
      samples: n,
      precision: o.precision,
      filter: {
        design: o.design,
        btype: o.btype,
        cutoffHz: o.cutoff,
        order: o.order,
        ...(o.design === 'cheby1' ? { rp: o.rp } : o.design === 'cheby2' ? { rs: o.rs } : {}),
        sections: sos.length,
        zeroPhase: o.zeroPhase,
        scipy: o.zeroPhase ? 'sosfiltfilt' : 'sosfilt',
      },
      devices: shares,
      out,
    };
    const cutoff = typeof o.cutoff === 'number' ? `${o.cutoff} Hz` : `${o.cutoff[0]}-${o.cutoff[1]} Hz`;
    report.say(
      `${o.file}: ${n} samples at ${fs} Hz (${first.format}${first.encoding ? ` ${first.encoding}` : ''}, ${summary.channelNote})`,
    );
    report.say(
      `filter: ${o.design} ${o.btype} ${cutoff}, order ${o.order} (${sos.length} sections), ${o.zeroPhase ? 'zero phase (sosfiltfilt)' : 'forward from a zero state (sosfilt)'}`,
    );
    if (devices.length > 1)
      for (const d of shares)
        report.say(
          `  GPU ${d.device} (${d.name}): channels ${d.channels.join(', ') || 'none'}, ${d.seconds.toFixed(3)} s`,
        );
    report.say(`wrote ${out} (32-bit float WAV, ${channels.length} channel${channels.length === 1 ? '' : 's'})`);
    report.result(summary);
    return 0;
  } catch (e) {
    const line = gpuUnavailableLine('filter', e);
    if (line !== undefined) return report.fail(line, 1, 'GpuUnavailable');
    if (e instanceof RangeError) return report.fail(e.message, 1, e.name);
    throw e;
  } finally {
    for (const stream of streams) stream.dispose();
  }
}
