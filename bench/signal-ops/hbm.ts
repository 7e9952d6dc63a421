/**
 * The device's HBM bandwidth as this run measures it: a 1 GiB device-to-device copy timed with
 * events, bytes read + written per second (what the rows' compulsory traffic counts too), the
 * median of a few copies after a warm-up. Measured once per process and kept, so every row of a run
 * is judged against the same number.
 */
import { DeviceBuffer, Event, Stream } from '../../src/runtime/index.js';
import { summarize } from '../harness/stats.js';
import { disposeAll } from '../tscuda/types.js';

const COPY_BYTES = 2 ** 30;
const COPIES = 7;

let measured: number | undefined;

/** GB/s (1e9) of bytes read + written by a device-to-device copy on the current context's device. */
export function measuredHbmGBps(log: (line: string) => void): number {
  if (measured !== undefined) return measured;
  const stream = new Stream({ label: 'bench signal hbm' });
  const a = DeviceBuffer.alloc('u8', COPY_BYTES, { stream, label: 'bench signal hbm a' }).memset(1, { stream });
  const b = DeviceBuffer.alloc('u8', COPY_BYTES, { stream, label: 'bench signal hbm b' });
  const t0 = new Event({ timing: true, label: 'bench signal hbm t0' });
  const t1 = new Event({ timing: true, label: 'bench signal hbm t1' });
  try {
    const rates: number[] = [];
    for (let i = 0; i <= COPIES; i++) {
      t0.record(stream);
      b.copyFrom(a, { stream });
      t1.record(stream);
      t1.synchronize();
      // The first copy is a warm-up (clocks, TLB).
      if (i > 0) rates.push((2 * COPY_BYTES) / 1e9 / (Event.elapsedMs(t0, t1) / 1e3));
    }
    measured = summarize(rates).median;
    log(
      `[tscuda] HBM: a ${COPY_BYTES / 2 ** 30} GiB device-to-device copy moves ${measured.toFixed(0)} GB/s read + written`,
    );
    return measured;
  } finally {
    stream.synchronize();
    disposeAll(stream, a, b, t0, t1);
  }
}
