/**
 * A worker of `tscuda serve --workers 2` killed with SIGKILL (no GPU needed): no connection is
 * left hanging in the primary (the one handed to the dying worker and never taken is answered
 * 503 worker_lost), and the service's counters never go backwards across the restart.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call, startServe, workerPids, type ServeProcess } from './serve-process.js';

const running: ServeProcess[] = [];
const stopped: number[] = [];
afterEach(() => {
  for (const pid of stopped.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const s of running.splice(0)) if (s.child.exitCode === null) s.child.kill('SIGKILL');
});

/** The sum of every series of a counter in a Prometheus text. */
function total(text: string, name: string): number {
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) sum += Number(m[1]);
  return sum;
}

async function metrics(base: string): Promise<string> {
  const r = await call(base, '/metrics');
  if (!('status' in r) || r.status !== 200) throw new Error(`/metrics: ${JSON.stringify(r)}`);
  return r.text;
}

describe('tscuda serve: a worker killed with SIGKILL', () => {
  it('the connection handed to it and never taken is answered (503 worker_lost), none hangs', async () => {
    const s = await startServe(['--workers', '2']);
    running.push(s);
    const [victim] = await workerPids(s.base, 2);
    expect(victim).toBeDefined();
    // Stopped, it takes no connection: the primary's hand-off to it stays unanswered, as when a worker dies mid-hand-off.
    process.kill(victim!, 'SIGSTOP');
    stopped.push(victim!);
    const requests = Array.from({ length: 4 }, () => call(s.base, '/v1/info', { timeoutMs: 15_000 }));
    await new Promise((r) => setTimeout(r, 1000));
    const t0 = performance.now();
    process.kill(victim!, 'SIGKILL');
    const answers = await Promise.all(requests);
    const settledMs = performance.now() - t0;
    // Before: the connection held by the primary hung for 150 s and more (here: the client's 15 s timeout).
    expect(settledMs).toBeLessThan(5000);
    for (const a of answers) expect('status' in a ? a.status : a.error).not.toBe('TIMEOUT');
    const lost = answers.filter((a) => 'status' in a && a.status === 503);
    expect(lost.length, JSON.stringify(answers)).toBeGreaterThanOrEqual(1);
    for (const a of lost)
      if ('text' in a) expect(JSON.parse(a.text)).toMatchObject({ error: { code: 'worker_lost', retryable: true } });
    await s.waitFor(/holding 1 connection\(s\) it had not read/, 10_000);
    s.child.kill('SIGTERM');
    expect((await s.child).exitCode, s.stderr()).toBe(0);
  }, 90_000);

  it("the service's counters do not go backwards when the worker is replaced", async () => {
    const s = await startServe(['--workers', '2']);
    running.push(s);
    const pids = await workerPids(s.base, 2);
    expect(pids).toHaveLength(2);
    for (let i = 0; i < 10; i++) await call(s.base, '/v1/info');
    const before = total(await metrics(s.base), 'tscuda_request_success_total');
    // The 10 above and the pid look-ups: both workers counted some.
    expect(before).toBeGreaterThanOrEqual(10);
    process.kill(pids[0]!, 'SIGKILL');
    await s.waitFor(/exited \(code SIGKILL\); replacing it/, 10_000);
    await s.waitFor(/listening on[\s\S]*listening on[\s\S]*listening on/, 45_000);
    const after = await metrics(s.base);
    expect(total(after, 'tscuda_request_success_total')).toBeGreaterThanOrEqual(before);
    // Series are labelled by slot (the place a replacement takes over), not by an ever-growing worker id.
    expect(new Set([...after.matchAll(/tscuda_request_success_total\{[^}]*worker="(\d+)"/g)].map((m) => m[1]))).toEqual(
      new Set(['0', '1']),
    );
    for (let i = 0; i < 4; i++) await call(s.base, '/v1/info');
    expect(total(await metrics(s.base), 'tscuda_request_success_total')).toBeGreaterThanOrEqual(before + 4);
    s.child.kill('SIGTERM');
    expect((await s.child).exitCode, s.stderr()).toBe(0);
  }, 90_000);
});
