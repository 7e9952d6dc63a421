/**
 * The fault suite (issue 10): misuse that used to kill the process with SIGSEGV, corrupt memory
 * or hang. Each case runs in its own child process (test/gpu/fixtures/fault-cases.ts), which
 * must exit normally (no signal, exit code 0) printing the expected named error or measurement;
 * afterwards the library still works in this process (a copy round trip and a kernel).
 */
import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Stream } from '../../../src/runtime/stream.js';
import { loadBasicKernels } from '../../kernels/launchers.generated.js';
import { gpu } from '../gpu-available.js';
import { randomF32, ROOT } from '../helpers.js';

type Outcome = {
  case: string;
  ok?: boolean;
  threw?: boolean;
  name?: string;
  message?: string;
  status?: string;
} & Record<string, unknown>;
type Expect = { error: string; message: RegExp } | ((o: Outcome) => void);

const reuseIntact = (o: Outcome): void => {
  expect(o.ok).toBe(true);
  expect(o.wrong, 'elements B read after the memory was handed to A').toBe(0);
};

const CASES: Record<string, Expect> = {
  'kernel-after-module-dispose': {
    error: 'DisposedError',
    message: /Kernel "fill_f32" was disposed \(its module "basic\.fatbin" was disposed\)/,
  },
  'setarg-after-module-dispose': { error: 'DisposedError', message: /Kernel "fill_f32" was disposed \(its module/ },
  'record-disposed-stream': { error: 'DisposedError', message: /Stream "gone" was disposed/ },
  'wait-disposed-event': { error: 'DisposedError', message: /Event "gone" was disposed/ },
  'elapsed-disposed-start': { error: 'DisposedError', message: /Event "gone" was disposed/ },
  'event-disposed-while-awaited': {
    error: 'DisposedError',
    message: /Event "awaited" was disposed while done\(\) was pending/,
  },
  'copy2d-disposed-buffer': { error: 'DisposedError', message: /DeviceBuffer "dst gone" was disposed/ },
  'view-of-disposed-buffer': { error: 'DisposedError', message: /its buffer "parent" was disposed/ },
  'alloc-from-disposed-pool': { error: 'DisposedError', message: /MemoryPool "gone pool" was disposed/ },
  'fft-disposed-buffer': { error: 'DisposedError', message: /DeviceBuffer "gone x" was disposed/ },
  'graph-disposed-stream': { error: 'DisposedError', message: /Stream "gone" was disposed/ },
  'double-dispose': (o) => expect(o.disposed).toBe(true),
  'fake-stream': { error: 'TypeError', message: /launch stream must be a Stream, got a plain Object/ },
  'fake-buffer-argument': {
    error: 'TypeError',
    message: /argument 1 \(ptr\): expected a DeviceBuffer or a device address, got a plain Object/,
  },
  'fake-host-buffer': { error: 'TypeError', message: /expected a HostBuffer or a TypedArray, got a plain Object/ },
  'fake-event': { error: 'TypeError', message: /waitEvent\(event\) must be an Event, got a plain Object/ },
  'host-array-after-dispose': (o) => {
    expect(o.intact).toBe(true);
    expect(o.roundTrip).toBe(true);
  },
  'host-array-owner-collected': (o) => expect(o.intact).toBe(true),
  'managed-array-after-dispose': (o) => expect(o.intact).toBe(true),
  'managed-array-owner-collected': (o) => expect(o.intact).toBe(true),
  'reuse-after-free-on-stream': reuseIntact,
  'reuse-after-free-pool-no-stream': reuseIntact,
  'reuse-after-collection': (o) => {
    reuseIntact(o);
    expect(o.collected, 'x was garbage-collected (the FinalizationRegistry freed it)').toBe(true);
  },
  'reuse-after-stream-disposed': reuseIntact,
  'kernel-int-out-of-range': {
    error: 'RangeError',
    message: /argument 2 \(i32\): 2147483648 is outside the i32 range/,
  },
  'kernel-u64-2-64': {
    error: 'RangeError',
    message: /argument 0 \(u64\): 18446744073709551616n is outside the u64 range/,
  },
  'kernel-u64-negative': { error: 'RangeError', message: /argument 0 \(u64\): -1n is outside the u64 range/ },
  'wrap-nan-address': { error: 'RangeError', message: /wrap address: NaN is not a device address/ },
  'module-not-an-image': { error: 'TypeError', message: /module image junk is not a cubin \(ELF\), fatbin or PTX/ },
  'overlapping-copy': { error: 'RangeError', message: /overlap/ },
  'shared-memory-over-limit': {
    error: 'RangeError',
    message: /dynamic shared memory 200000 is outside 0\.\.\d+ bytes/,
  },
  'graph-bad-mode': { error: 'TypeError', message: /unknown capture mode "sometimes"/ },
  // Issue 22: every object standing for a handle is checked before the driver sees it (fault-cases-handles.ts).
  'graph-node-made-up': {
    error: 'TypeError',
    message: /node must be a node of graph "g" \(from its kernelNodes\(\)\), got 0xdeadbeef0/,
  },
  'graph-node-plain-object': { error: 'TypeError', message: /node must be a node of graph "g" .*got a plain Object/ },
  'graph-node-of-another-graph': { error: 'TypeError', message: /node must be a node of graph "a"/ },
  'graph-node-wrong-kernel': { error: 'TypeError', message: /does not launch kernel "scale_f32"/ },
  'graph-node-not-a-kernel': { error: 'TypeError', message: /of graph "g" is not a kernel launch/ },
  'graph-node-after-graph-dispose': { error: 'DisposedError', message: /its graph "g" was disposed/ },
  'graph-exec-constructed': { error: 'TypeError', message: /GraphExec is made by graph\.instantiate\(\)/ },
  'graph-launch-fake-stream': { error: 'TypeError', message: /launch\(stream\) must be a Stream, got a plain Object/ },
  'graph-launch-disposed-stream': { error: 'DisposedError', message: /Stream "gone" was disposed/ },
  'graph-kernel-nodes-fake-kernel': {
    error: 'TypeError',
    message: /kernelNodes\(kernel\) must be a Kernel, got a plain Object/,
  },
  'set-kernel-args-fake-kernel': {
    error: 'TypeError',
    message: /setKernelArgs kernel must be a Kernel, got a plain Object/,
  },
  'graph-capture-prototype-stream': {
    error: 'TypeError',
    message: /Graph\.capture stream must be a Stream, got a plain Stream/,
  },
  'kernel-from-fake-module': {
    error: 'TypeError',
    message: /Kernel\.fromLibrary module \(for kernel "fill_f32"\) must be a Module, got a plain Object/,
  },
  'kernel-from-disposed-module': { error: 'DisposedError', message: /Module "basic\.fatbin" was disposed/ },
  'kernel-launch-prototype-stream': {
    error: 'TypeError',
    message: /launch stream must be a Stream, got a plain Stream/,
  },
  'kernel-arg-prototype-buffer': {
    error: 'TypeError',
    message: /argument 1 \(ptr\): expected a DeviceBuffer or a device address, got a plain DeviceBuffer/,
  },
  'event-record-fake-stream': { error: 'TypeError', message: /record\(stream\) must be a Stream, got a plain Object/ },
  'elapsed-fake-event': { error: 'TypeError', message: /elapsedSince\(start\) must be an Event, got a plain Object/ },
  'stream-record-fake-event': { error: 'TypeError', message: /record\(event\) must be an Event, got a plain Object/ },
  'event-pool-release-fake': { error: 'TypeError', message: /release\(event\) must be given an Event/ },
  'stream-on-complete-disposed': { error: 'DisposedError', message: /Stream "gone" was disposed/ },
  'fft-fake-stream': { error: 'TypeError', message: /forward stream must be a Stream, got a plain Object/ },
  'fft-set-stream-fake': { error: 'TypeError', message: /setStream\(stream\) must be a Stream, got a plain Object/ },
  'fft-create-fake-stream': {
    error: 'TypeError',
    message: /FftPlan\.create stream must be a Stream, got a plain Object/,
  },
  'fft-disposed-plan': { error: 'DisposedError', message: /FftPlan "gone plan" was disposed/ },
  'profiler-fake-stream': { error: 'TypeError', message: /prof begin\(stream\) must be a Stream, got a plain Object/ },
  'pool-run-fake-stream': {
    error: 'TypeError',
    message: /pool: the stream work is submitted to must be a Stream, got a plain Object/,
  },
  'pool-metrics-fake-stream': { error: 'TypeError', message: /pool: stream must be a Stream, got a plain Object/ },
  'pool-bogus-strategy': {
    error: 'TypeError',
    message: /pool: strategy must be one of RoundRobin, LoadBalanced, Priority, Workload; got "Bogus"/,
  },
  'pool-prototype-stream-spec': {
    error: 'TypeError',
    message: /pool: streams\[0\]\.stream must be a Stream, got a plain Stream/,
  },
  'coordinator-foreign-stream': { error: 'Error', message: /stream "outsider" of "op" is not one of pool's streams/ },
  'coordinator-fake-stream': {
    error: 'TypeError',
    message: /operation "op": stream must be a Stream, got a plain Object/,
  },
  'sticky-quiet-unwind': (o) => {
    expect(o.pendingError).toBe('CUDA_ERROR_ILLEGAL_ADDRESS');
    expect(o.lostWith).toBe('CUDA_ERROR_ILLEGAL_ADDRESS');
    expect(o.sticky).toBe('CUDA_ERROR_ILLEGAL_ADDRESS');
    expect(o.newWorkName).toBe('ContextLostError');
    expect(o.newWorkSaysRestart).toBe(true);
    expect(o.doneAfter).toBe('ContextLostError');
    expect(o.unhandled).toBe(0);
  },
};

async function runCase(
  name: string,
): Promise<{ outcome: Outcome; exitCode: number | undefined; signal: string | undefined; stderr: string }> {
  const r = await execa(
    'node',
    ['--expose-gc', '--import', 'tsx', join(ROOT, 'test/gpu/fixtures/fault-cases.ts'), name],
    { cwd: ROOT, timeout: 90_000, reject: false },
  );
  const line = r.stdout.trim().split('\n').pop() ?? '';
  let outcome: Outcome;
  try {
    outcome = JSON.parse(line) as Outcome;
  } catch {
    outcome = { case: name, message: `no JSON line; stdout: ${r.stdout.slice(-500)} stderr: ${r.stderr.slice(-2000)}` };
  }
  return { outcome, exitCode: r.exitCode, signal: r.signal, stderr: r.stderr };
}

describe.skipIf(!gpu.available)(
  `fault suite: misuse in a child process${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
    it.each(Object.keys(CASES))(
      '%s: exits normally with the named outcome',
      async (name) => {
        const { outcome, exitCode, signal, stderr } = await runCase(name);
        expect(signal, `signal (stderr: ${stderr.slice(-1500)})`).toBeUndefined();
        expect(exitCode, `exit code (stderr: ${stderr.slice(-1500)})`).toBe(0);
        expect(outcome.case).toBe(name);
        const want = CASES[name]!;
        if (typeof want === 'function') {
          expect(outcome.threw, `it threw: ${outcome.name}: ${outcome.message}`).toBeUndefined();
          want(outcome);
        } else {
          expect(outcome.threw, JSON.stringify(outcome)).toBe(true);
          expect(outcome.name, outcome.message).toBe(want.error);
          expect(outcome.message).toMatch(want.message);
        }
      },
      120_000,
    );

    it('leaves this process working: a copy round trip and a kernel', async () => {
      const k = loadBasicKernels();
      const s = new Stream();
      const n = 4096;
      const x = randomF32(n);
      const y = randomF32(n);
      const dx = DeviceBuffer.from('f32', x, { stream: s });
      const dy = DeviceBuffer.from('f32', y, { stream: s });
      k.saxpy_f32({ grid: 16, block: 256, stream: s }, n, 2, dx, dy);
      await s.done();
      const got = dy.read();
      for (let i = 0; i < n; i++) expect(got[i]).toBeCloseTo(2 * x[i]! + y[i]!, 5);
      expect(Array.from(dx.read())).toEqual(Array.from(x));
      k.module.dispose();
    });
  },
);
