/**
 * The shared objects of the GPU bad-input tables (bad-input-*.test.ts, one per family of entry
 * points; the pure checks are in test/unit/runtime/bad-input-*.test.ts), made on first use, and the
 * suite each table runs. Every row is refused before its handle or value reaches the driver; the
 * cases that used to crash the process are also in the fault suite (test/gpu/fault/).
 */
import { describe, expect, it } from 'vitest';
import { Event, EventPool } from '../../../src/runtime/event.js';
import { FftPlan } from '../../../src/runtime/fft/plan.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { HostBuffer } from '../../../src/runtime/memory/host-buffer.js';
import { ManagedBuffer } from '../../../src/runtime/memory/managed-buffer.js';
import { MemoryPool } from '../../../src/runtime/memory/memory-pool.js';
import { Program } from '../../../src/runtime/program.js';
import { Stream } from '../../../src/runtime/stream.js';
import { type BasicKernels, loadBasicKernels } from '../../kernels/launchers.generated.js';
import { gpu } from '../gpu-available.js';
import { itRefusesEachRow, type Row } from '../../setup/bad-input-rows.js';

/** Shared objects, made on first use (rows are built before the GPU check skips them). */
export interface Fixtures {
  s: Stream;
  goneStream: Stream;
  buf: DeviceBuffer<'f32'>;
  gone: DeviceBuffer<'f32'>;
  host: HostBuffer<'f32'>;
  goneHost: HostBuffer<'f32'>;
  managed: ManagedBuffer<'f32'>;
  pool: MemoryPool;
  k: BasicKernels;
  timed: Event;
  untimed: Event;
  plan: FftPlan<'C2C'>;
  c64: DeviceBuffer<'c64'>;
  program: Program;
  goneProgram: Program;
  events: EventPool;
}
let made: Fixtures | undefined;
export function fx(): Fixtures {
  if (made) return made;
  const goneStream = new Stream({ label: 'gone stream' });
  goneStream.dispose();
  const gone = DeviceBuffer.alloc('f32', 8, { label: 'gone buffer' });
  gone.dispose();
  const goneHost = HostBuffer.alloc('f32', 8, { label: 'gone host' });
  goneHost.dispose();
  const goneProgram = new Program({ source: 'extern "C" __global__ void k() {}', label: 'gone program' });
  goneProgram.dispose();
  const s = new Stream({ label: 's' });
  const timed = new Event({ timing: true, label: 'timed' }).record(s);
  s.synchronize();
  made = {
    s,
    goneStream,
    buf: DeviceBuffer.alloc('f32', 100, { label: 'buf' }),
    gone,
    host: HostBuffer.alloc('f32', 100, { label: 'host' }),
    goneHost,
    managed: ManagedBuffer.alloc('f32', 16, { label: 'managed' }),
    pool: new MemoryPool({ label: 'pool' }),
    k: loadBasicKernels(),
    timed,
    untimed: new Event({ label: 'untimed' }),
    plan: FftPlan.create({ shape: [64], type: 'C2C', label: 'plan64' }),
    c64: DeviceBuffer.alloc('c64', 64, { label: 'c64' }),
    program: new Program({ source: 'extern "C" __global__ void k() {}', label: 'prog' }),
    goneProgram,
    events: new EventPool({ label: 'events' }),
  };
  return made;
}
/** A plain object that looks like a resource (a handle and a label), where a real one belongs. */
export const plain = { handle: 1n, label: 'fake', disposed: false, context: undefined };

/**
 * The suite of one table of GPU bad input (`what` names it): at least `minRows` rows (none may
 * vanish unnoticed), each refused as its row says, and good input accepted afterwards (nothing
 * refused broke the context).
 */
export function describeBadInput(what: string, rows: readonly Row[], minRows: number): void {
  describe.skipIf(!gpu.available)(
    `bad input to the runtime's GPU entry points: ${what}${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
    () => {
      it('has a row per case', () => {
        expect(rows.length).toBeGreaterThanOrEqual(minRows);
      });
      itRefusesEachRow(rows);
      it('accepts the same calls with good input afterwards (nothing above broke the context)', async () => {
        const { buf, s } = fx();
        const x = new Float32Array(100).map(() => Math.random() + 1);
        buf.write(x, { stream: s });
        const back = new Float32Array(100);
        buf.read(back, { stream: s });
        await s.done();
        expect(Array.from(back)).toEqual(Array.from(x));
      });
    },
  );
}
