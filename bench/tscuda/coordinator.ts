/**
 * coordinator_edge_us: one cross-stream dependency, as the Coordinator lowers it: an event
 * recorded on s1 and waited for by s2 (Event.record + Stream.waitEvent), in a loop of --iters
 * edges then both streams synchronised (bench.cu's m_coordinator_edge).
 */
import { Event, Stream } from '../../src/runtime/index.js';
import { driver as driverApi } from '../../src/ffi/index.js';
import { pairedWithFloor } from './timing.js';
import { disposeAll, type BenchContext, type MeasuredMetric } from './types.js';

export function coordinatorEdge(ctx: BenchContext): MeasuredMetric {
  const s1 = new Stream({ label: 'bench edge s1' });
  const s2 = new Stream({ label: 'bench edge s2' });
  const ev = new Event({ label: 'bench edge' });
  try {
    const run = (n: number): void => {
      for (let i = 0; i < n; i++) {
        ev.record(s1);
        s2.waitEvent(ev);
      }
    };
    const d = driverApi();
    const [record, wait] = [d.cuEventRecord, d.cuStreamWaitEvent];
    const [eh, h1, h2] = [ev.handle, s1.handle, s2.handle];
    const floor = (n: number): void => {
      for (let i = 0; i < n; i++) {
        record(eh, h1);
        wait(h2, eh, 0);
      }
    };
    const sync = (): void => {
      s1.synchronize();
      s2.synchronize();
    };
    const f = pairedWithFloor(
      ctx.timing,
      'coordinator_edge_us',
      run,
      floor,
      sync,
      'cuEventRecord + cuStreamWaitEvent',
      ctx.log,
    );
    return {
      pass: f.pass,
      floor: f.floor,
      notes: ['Event.record(s1) + s2.waitEvent(event): the two calls a Coordinator edge lowers to', ...f.notes],
    };
  } finally {
    disposeAll(s1, s2, ev);
  }
}
