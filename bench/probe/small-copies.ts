/**
 * Do a job's small copies back cost the link more than their bytes (issue 26)? Not a benchmark
 * with goals: a probe. The 16-bit STFT job moves 8 MiB in and 8 MiB out per job, and three small
 * results back besides (a 64 KiB preview, 2 KiB of band powers, 2 KiB of dominant cycles), each a
 * copy of its own on the copy engine that carries the wave. This runs the job's copies alone, no
 * kernels, on a set of streams with every job enqueued at once, with and without the small
 * copies, and with them packed into one copy, the variants alternated over rounds:
 *   tsx bench/probe/small-copies.ts [--rounds 3] [--jobs 400] [--streams 4]
 * One line per variant and round: Gsamples/s of 2-byte samples (the i16 job's unit) and the time
 * per job; if "separate" is slower than "none" by more than "packed" is, packing is worth doing.
 */
import { parseArgs } from 'node:util';
import { DeviceBuffer, HostBuffer, Stream } from '../../src/runtime/index.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    jobs: { type: 'string', default: '400' },
    streams: { type: 'string', default: '4' },
  },
});
const ROUNDS = Number(values.rounds);
const JOBS = Number(values.jobs);
const STREAMS = Number(values.streams);
/** The bench's i16 job: 64 x 65536 samples of 2 bytes each way. */
const SAMPLES = 64 * 65536;
/** Its small results, bytes: the preview (64 x 256 f32), band powers (64 x 4 f64), dominant cycles (64 x 4 f64). */
const SMALL = [64 * 256 * 4, 64 * 4 * 8, 64 * 4 * 8];
const SMALL_TOTAL = SMALL.reduce((a, b) => a + b, 0);

type Variant = 'none' | 'separate' | 'packed';

interface Set {
  stream: Stream;
  hostIn: HostBuffer<'u16'>;
  hostOut: HostBuffer<'u16'>;
  hostSmall: HostBuffer<'u8'>;
  input: DeviceBuffer<'u16'>;
  output: DeviceBuffer<'u16'>;
  small: DeviceBuffer<'u8'>;
}

const sets: Set[] = Array.from({ length: STREAMS }, (_, i) => {
  const stream = new Stream({ label: `copies ${i}` });
  const hostIn = HostBuffer.alloc('u16', SAMPLES, { label: `in ${i}` });
  hostIn.array.fill(0x3c00);
  return {
    stream,
    hostIn,
    hostOut: HostBuffer.alloc('u16', SAMPLES, { label: `out ${i}` }),
    hostSmall: HostBuffer.alloc('u8', SMALL_TOTAL, { label: `small ${i}` }),
    input: DeviceBuffer.alloc('u16', SAMPLES, { label: `input ${i}` }),
    output: DeviceBuffer.alloc('u16', SAMPLES, { label: `output ${i}` }),
    small: DeviceBuffer.alloc('u8', SMALL_TOTAL, { label: `small ${i}` }),
  };
});

/** Enqueues `JOBS` jobs' copies round-robin over the sets and waits for all of them; seconds. */
async function run(variant: Variant): Promise<number> {
  const t0 = performance.now();
  for (let j = 0; j < JOBS; j++) {
    const s = sets[j % sets.length]!;
    const stream = s.stream;
    s.input.write(s.hostIn, { stream });
    s.output.read(s.hostOut, { stream });
    if (variant === 'separate') {
      let offset = 0;
      for (const bytes of SMALL) {
        s.small.read(s.hostSmall, { stream, offset, otherOffset: offset, length: bytes });
        offset += bytes;
      }
    } else if (variant === 'packed') s.small.read(s.hostSmall, { stream, length: SMALL_TOTAL });
  }
  await Promise.all(sets.map((s) => s.stream.done()));
  return (performance.now() - t0) / 1000;
}

const variants: Variant[] = ['none', 'separate', 'packed'];
await run('separate'); // warm up: pages touched, the copy engines awake
const results: Record<Variant, number[]> = { none: [], separate: [], packed: [] };
for (let round = 1; round <= ROUNDS; round++) {
  for (const v of variants) {
    const seconds = await run(v);
    const gsamples = (JOBS * SAMPLES) / seconds / 1e9;
    results[v].push(gsamples);
    console.log(
      `round ${round} ${v.padEnd(8)} ${gsamples.toFixed(2)} Gsamples/s (2 B each way), ${((seconds / JOBS) * 1e6).toFixed(1)} µs a job`,
    );
  }
}
console.log(JSON.stringify({ jobs: JOBS, streams: STREAMS, smallBytes: SMALL, results }));
for (const s of sets) {
  for (const b of [s.input, s.output, s.small, s.hostIn, s.hostOut, s.hostSmall]) b.dispose();
  s.stream.dispose();
}
