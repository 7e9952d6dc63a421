/**
 * Supervision without a GPU: a primary with fake-engine workers (node:cluster). A request with
 * the test-only flag `fault` makes its worker lose the context; every request still gets an
 * answer (200 or 503 retryable), the worker is replaced, and the service is ready again within
 * 5 s; SIGTERM stops everything with exit code 0.
 */
import { execa, type ResultPromise } from 'execa';
import { createServer as netServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const FIXTURES = join(import.meta.dirname, 'fixtures');

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = netServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const children: ResultPromise[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

async function startService(workers: number): Promise<{ child: ResultPromise; base: string; stderr: () => string }> {
  const port = await freePort();
  const child = execa('node', ['--import', 'tsx', join(FIXTURES, 'supervise.ts'), String(workers), join(FIXTURES, 'fake-worker.ts'), String(port)], { reject: false, buffer: true, all: false });
  children.push(child);
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the service did not start: ${err}`)), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('"started":true')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return { child, base: `http://127.0.0.1:${port}`, stderr: () => err };
}

async function stft(base: string, flags: string[] = []): Promise<{ status: number; body: { error?: { code: string; retryable: boolean } } }> {
  const res = await fetch(`${base}/v1/stft`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ signal: [1, 2, 3, 4, 5, 6, 7, 8], ...(flags.length > 0 ? { flags } : {}) }) });
  return { status: res.status, body: (await res.json()) as { error?: { code: string; retryable: boolean } } };
}

async function readyWithin(base: string, ms: number): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    try {
      const res = await fetch(`${base}/v2/health/ready`);
      await res.arrayBuffer();
      if (res.status === 200) return performance.now() - t0;
    } catch {
      // A connection closed by a leaving worker: ask again.
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return Infinity;
}

describe('supervised workers (fake engines, no GPU)', () => {
  for (const workers of [1, 2]) {
    it(`${workers} worker(s): a context loss answers every request, the worker is replaced, ready again within 5 s, SIGTERM exits 0`, async () => {
      const { child, base, stderr } = await startService(workers);
      expect((await fetch(`${base}/v2/health/ready`)).status).toBe(200);
      const before = (await (await fetch(`${base}/v1/info`)).json()) as { pid: number };

      // Load from several clients while one request faults its worker.
      const load = Array.from({ length: 40 }, (_, i) => stft(base, i === 10 ? ['fault'] : []));
      const answers = await Promise.all(load);
      for (const a of answers) {
        expect([200, 503]).toContain(a.status);
        if (a.status === 503) expect(a.body.error).toMatchObject({ code: 'gpu_lost', retryable: true });
      }
      expect(answers.filter((a) => a.status === 503).length).toBeGreaterThan(0);

      const recoveryMs = await readyWithin(base, 5000);
      expect(recoveryMs).toBeLessThan(5000);
      // Served again, by a worker that is not the lost one when there was only one.
      await expect.poll(async () => (await stft(base)).status, { timeout: 5000 }).toBe(200);
      await expect.poll(() => stderr(), { timeout: 5000 }).toMatch(/left \(code 0\)/);
      if (workers === 1) {
        const after = (await (await fetch(`${base}/v1/info`)).json()) as { pid: number };
        expect(after.pid).not.toBe(before.pid);
      }
      expect(stderr()).toMatch(/lost its GPU context/);

      child.kill('SIGTERM');
      const result = await child;
      expect(result.exitCode).toBe(0);
      expect(String(result.stdout)).toContain('"stopped":true');
    }, 60_000);
  }
});
