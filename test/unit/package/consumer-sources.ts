/**
 * The programs the consumer test (consumer.test.ts) writes into a project that installed the packed
 * package: kept as text, since they import 'tscuda' by name, which resolves only there.
 */

/** A strict consumer of the core nouns: type-checked only, never run. */
export const STRICT_TS = `// A strict consumer's use of the core nouns: values that may be undefined passed on as they are
// (exactOptionalPropertyTypes), \`using\`, typed kernels. Type-checked only, never run.
import { DeviceBuffer, FftPlan, HostBuffer, Program, Stream, elementwise, reduction, toF16, type DType, type Device } from 'tscuda';
import { cu } from 'tscuda/ffi';
import { Coordinator, StreamPool } from 'tscuda/orchestration';
import { stft } from 'tscuda/signal';

// What an application has at hand: values that may be undefined, passed on as they are.
declare const maybeStream: Stream | undefined;
declare const maybeDevice: Device | undefined;
declare const label: string | undefined;
declare const priority: 'high' | 'normal' | 'low' | undefined;

export function scale(x: DeviceBuffer<'f32'>, host: Float32Array, pinned: HostBuffer<'f32'>): DType {
  using stream = new Stream({ device: maybeDevice, label, priority });
  const y = DeviceBuffer.alloc('f32', x.length, { stream: maybeStream, label, device: maybeDevice });
  y.write(host, { stream: maybeStream });
  y.write(pinned, { stream: maybeStream, offset: undefined });
  y.read(host, { stream: maybeStream });
  y.copyFrom(x, { stream: maybeStream });
  using pinned2 = HostBuffer.alloc('f32', 4, { device: maybeDevice, label });
  // Device-rooted factories and peer access, added to Device by the package's side-effect modules.
  if (maybeDevice) {
    using s2 = maybeDevice.createStream({ label });
    using b2 = maybeDevice.alloc('f32', 4, { stream: s2 });
    const peer: boolean = maybeDevice.canAccessPeer(maybeDevice);
    void b2;
    void peer;
  }
  const kernel = new Program({ source: 'extern "C" __global__ void k(float* p) {}', name: label }).kernel('k', ['ptr']);
  kernel.launch({ grid: 1, block: 1, stream: maybeStream, sharedMemBytes: undefined }, y);
  using plan = FftPlan.create({ shape: [8], type: 'R2C', stream: maybeStream, device: maybeDevice });
  const axpy = elementwise({ inputs: 'const float x', params: 'float a', outputs: 'float y', operation: 'y = a * x' });
  axpy(x, 2, y, { stream: maybeStream });
  // @ts-expect-error a double buffer where float is declared
  axpy(DeviceBuffer.alloc('f64', 1), 2, y);
  const sum = reduction({ inputs: 'const float x', output: 'float y', map: 'x', reduce: 'a + b', identity: '0', post: undefined });
  sum(x, y, { stream: maybeStream });
  const { Zxx } = stft(x, { fs: 100, nperseg: 16, stream: maybeStream, window: undefined });
  const pool = new StreamPool({ label, device: maybeDevice });
  const coordinator = new Coordinator(pool, { label });
  coordinator.add({ name: 'copy', kind: 'kernel', stream: maybeStream, after: undefined, run: (s) => void y.copyFrom(x, { stream: s }) });
  void [toF16([1]), cu, stream, pinned2, plan, Zxx];
  return y.dtype;
}
`;

/** Every entry point imported and used by a strict consumer: type-checked only, never run. */
export const EVERY_ENTRY_TS = `// Every entry point, and a name a program uses from each, type-checked by a strict consumer:
// nothing any of them reaches (the queue's ioredis and BullMQ types, fastify's) may fail to compile.
import { Device } from 'tscuda';
import { cu } from 'tscuda/ffi';
import { DeviceBuffer, type DeviceAvailability, type DType } from 'tscuda/runtime';
import { elementwise } from 'tscuda/kernels';
import { StreamPool } from 'tscuda/orchestration';
import { stft } from 'tscuda/signal';
import { Batcher } from 'tscuda/pipeline';
import { JobEngine, type JobSpec } from 'tscuda/engine';
import { JobQueue, type QueueConnection } from 'tscuda/queue';
import { createServer } from 'tscuda/server';

declare const connection: QueueConnection | undefined;

export async function everyEntry(spec: JobSpec): Promise<DType | undefined> {
  const availability: DeviceAvailability = Device.available({ needs: ['cufft'] });
  if (!availability.ok || connection === undefined) return undefined;
  const engine = new JobEngine({ lanes: 1 });
  const queue = new JobQueue({ connection });
  const server = createServer({ engine });
  const buffer = DeviceBuffer.alloc('f32', 16);
  void [cu, elementwise, StreamPool, stft, Batcher, queue.submit(spec), server];
  await server.close();
  await engine.close();
  return buffer.dtype;
}
`;

/** A user's script that Node 24+ runs as it is (`node script.ts`); prints one line. */
export const SCRIPT_TS = `// A user's own TypeScript run by Node itself (\`node script.ts\`, Node 24+): types stripped, \`using\`
// native, the installed package imported by name. Prints one line.
import { Device } from 'tscuda';
import type { DeviceAvailability } from 'tscuda/runtime';
import { JobEngine } from 'tscuda/engine';

interface Probe {
  readonly available: boolean;
}

const order: string[] = [];
{
  using probe = { [Symbol.dispose]: (): void => void order.push('disposed') };
  void probe;
  order.push('used');
}
const availability: DeviceAvailability = Device.available({ needs: ['cufft'] });
const probe: Probe = { available: availability.ok };
console.log(\`\${order.join(',')} \${typeof JobEngine} \${typeof probe.available}\`);
`;
