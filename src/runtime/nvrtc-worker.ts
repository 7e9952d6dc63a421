/**
 * NVRTC's compile step on a worker thread, so `Program.compileAsync()` leaves the event loop free.
 *
 * The program is created and read back on the main thread; only nvrtcCompileProgram runs on the
 * worker, which shares the process's memory and so the program handle. The worker is plain
 * JavaScript evaluated from a string (it loads koffi and the same libnvrtc by path), so it works
 * the same from the built package, under tsx and under test runners. One worker serves every
 * compile, one at a time; it keeps the process alive only while a compile is pending.
 * (koffi's own asynchronous calls were tried first: a compile of about a second crashed them.)
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import koffi from 'koffi';
import { libraryStatus } from '../ffi/index.js';

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const koffi = require(workerData.koffi);
const lib = koffi.load(workerData.library);
const compile = lib.func('int nvrtcCompileProgram(void *prog, int numOptions, const char **options)');
parentPort.on('message', ({ id, prog, options }) => {
  try {
    parentPort.postMessage({ id, status: compile(prog, options.length, options) });
  } catch (e) {
    parentPort.postMessage({ id, error: String((e && e.message) || e) });
  }
});
`;

interface Pending {
  resolve: (status: number) => void;
  reject: (error: Error) => void;
}

let worker: Worker | undefined;
let nextId = 1;
const pending = new Map<number, Pending>();

function failAll(error: Error): void {
  for (const p of pending.values()) p.reject(error);
  pending.clear();
  worker = undefined;
}

function compileWorker(): Worker {
  if (worker) return worker;
  const status = libraryStatus('nvrtc');
  if (!status.found) throw new Error('NVRTC is not loaded: compile synchronously once, or check `tscuda info`');
  const w = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { koffi: createRequire(import.meta.url).resolve('koffi'), library: status.path },
  });
  w.unref();
  w.on('message', (m: { id: number; status?: number | undefined; error?: string | undefined }) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (pending.size === 0) w.unref();
    if (m.error !== undefined) p.reject(new Error(`nvrtcCompileProgram on the compile thread failed: ${m.error}`));
    else p.resolve(m.status ?? -1);
  });
  w.on('error', (e) => failAll(e instanceof Error ? e : new Error(String(e))));
  w.on('exit', (code) => failAll(new Error(`the NVRTC compile thread exited (code ${code})`)));
  worker = w;
  return w;
}

/** Runs nvrtcCompileProgram(prog, options) on the compile thread; resolves with its nvrtcResult. */
export function compileOnWorker(prog: unknown, options: readonly string[]): Promise<number> {
  const w = compileWorker();
  const address = typeof prog === 'bigint' ? prog : (koffi.address(prog as never) as bigint);
  const id = nextId++;
  return new Promise<number>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    w.ref();
    w.postMessage({ id, prog: address, options: [...options] });
  });
}
