/**
 * Worker processes of the queue bench and its probes (bench/queue/worker-child.ts): started with
 * the engine asked for, awaited until they take jobs, their completions collected from stdout
 * (the fault run counts them per process), their CPU time read on request (SIGUSR2).
 */
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';

const ROOT = join(import.meta.dirname, '..', '..');
const CHILD = join(import.meta.dirname, 'worker-child.ts');

/** A running worker process. */
export interface WorkerChild {
  process: ResultPromise;
  /** Job ids it reported completed. */
  completed: string[];
  /** The process's CPU time so far, ms (it answers SIGUSR2). */
  cpuMs(): Promise<number>;
}

/** What a worker process runs. */
export interface WorkerChildOptions {
  redisUrl: string;
  queue: string;
  name: string;
  device: number;
  lanes: number;
  lockMs: number;
  /** FakeEngine jobs of this many ms, or SimEngine at this many ns per sample; neither: the GPU's JobEngine. */
  fakeMs?: number | undefined;
  simNs?: number | undefined;
  /** More arguments for worker-child.ts. */
  extra?: readonly string[] | undefined;
}

/** Starts a worker process; resolves once it takes jobs. */
export async function startWorkerProcess(o: WorkerChildOptions): Promise<WorkerChild> {
  const args = ['--import', 'tsx', CHILD, '--redis', o.redisUrl, '--queue', o.queue, '--name', o.name];
  args.push('--devices', String(o.device), '--lanes', String(o.lanes), '--lock-ms', String(o.lockMs), ...(o.extra ?? []));
  if (o.fakeMs !== undefined) args.push('--fake', String(o.fakeMs));
  if (o.simNs !== undefined) args.push('--sim', String(o.simNs));
  const child = execa('node', args, { cwd: ROOT, reject: false, buffer: false, stderr: 'inherit' });
  const completed: string[] = [];
  const cpuWaiters: ((ms: number) => void)[] = [];
  await new Promise<void>((resolve, reject) => {
    let rest = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      rest += chunk.toString();
      const lines = rest.split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        if (line === 'ready') resolve();
        else if (line.startsWith('completed ')) completed.push(line.slice(10));
        else if (line.startsWith('cpu ')) {
          const [user, system] = line.slice(4).split(' ').map(Number);
          cpuWaiters.shift()?.((user! + system!) / 1000);
        }
      }
    });
    void child.then((r) => reject(new Error(`worker ${o.name} exited ${String(r.exitCode)} before it was ready`)));
  });
  const cpuMs = (): Promise<number> =>
    new Promise((resolve) => {
      cpuWaiters.push(resolve);
      child.kill('SIGUSR2');
    });
  return { process: child, completed, cpuMs };
}

/** SIGTERM to each (they finish what they hold), then waits for all to exit. */
export async function stopWorkers(children: readonly WorkerChild[]): Promise<void> {
  for (const c of children) c.process.kill('SIGTERM');
  await Promise.allSettled(children.map((c) => c.process));
}
