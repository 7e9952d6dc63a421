/**
 * NCCL's part of the fault suite: a communicator, buffer or stream that is fake or disposed is
 * refused with a named error before NCCL sees a handle (issue 24: brand and liveness checks on
 * every public method of a communicator). Each case runs in its own child process
 * (test/gpu/fixtures/nccl-fault-cases.ts), which must exit normally printing the expected error.
 * Needs one GPU and NCCL.
 */
import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers.js';
import { ncclReady, titled } from '../multi/multi-available.js';

type Outcome = { case: string; ok?: boolean; threw?: boolean; name?: string; message?: string } & Record<
  string,
  unknown
>;
type Expect = { error: string; message: RegExp } | ((o: Outcome) => void);

const CASES: Record<string, Expect> = {
  'disposed-communicator': { error: 'DisposedError', message: /Communicator "fault comm\[0\]" was disposed/ },
  'aborted-communicator': { error: 'DisposedError', message: /Communicator "fault comm\[0\]" was disposed/ },
  'fake-receiver': {
    error: 'TypeError',
    message: /Communicator allReduce: the receiver must be a Communicator, got a plain Object/,
  },
  'fake-buffer': { error: 'TypeError', message: /allReduce: expected a DeviceBuffer, got a plain Object/ },
  'disposed-buffer': { error: 'DisposedError', message: /DeviceBuffer "gone" was disposed/ },
  'disposed-stream': { error: 'DisposedError', message: /Stream "gone" was disposed/ },
  'fake-stream': { error: 'TypeError', message: /options\.stream must be a Stream of device 0, got a plain Object/ },
  'works-after-refusals': (o) => {
    expect(o.refused).toBe(2);
    expect(o.wrong, 'elements of the one-rank sum that differ from the input').toBe(0);
  },
};

async function runCase(
  name: string,
): Promise<{ outcome: Outcome; exitCode: number | undefined; signal: string | undefined; stderr: string }> {
  const r = await execa('node', ['--import', 'tsx', join(ROOT, 'test/gpu/fixtures/nccl-fault-cases.ts'), name], {
    cwd: ROOT,
    timeout: 90_000,
    reject: false,
  });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  let outcome: Outcome;
  try {
    outcome = JSON.parse(line) as Outcome;
  } catch {
    outcome = { case: name, message: `no JSON line; stdout: ${r.stdout.slice(-500)} stderr: ${r.stderr.slice(-2000)}` };
  }
  return { outcome, exitCode: r.exitCode, signal: r.signal, stderr: r.stderr };
}

describe.skipIf(!ncclReady.ok)(titled('NCCL fault suite: misuse in a child process', ncclReady), () => {
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
});
