/**
 * `tscuda serve` lifecycle on the GPU (the CUDA-free cases are in test/unit/server/serve-*.test.ts):
 * a device ordinal that does not exist is a failed start (one line, exit 1), not a crash loop or
 * a server without an engine; a request accepted before SIGTERM is computed (200 with its
 * result), not refused, and the drain then completes (exit 0). Child processes throughout.
 */
import { execa } from 'execa';
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Device } from '../../../src/runtime/device.js';
import { gpu } from '../gpu-available.js';
import { ROOT, randomF32 } from '../helpers.js';
import { BIN, freePort, lines, spawnServe, startServe, type ServeProcess } from '../../unit/server/serve-process.js';

const running: ServeProcess[] = [];
afterEach(() => {
  for (const s of running.splice(0)) if (s.child.exitCode === null) s.child.kill('SIGKILL');
});

describe.skipIf(!gpu.available)(
  `tscuda serve lifecycle on the GPU${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
    for (const workers of [0, 1]) {
      it(`--workers ${workers} --devices <one past the last>: one line, exit 1`, async () => {
        const missing = Device.count();
        const port = await freePort();
        const r = await execa(
          'node',
          [BIN, 'serve', '--workers', String(workers), '--devices', String(missing), '--port', String(port)],
          {
            cwd: ROOT,
            reject: false,
            timeout: 90_000,
          },
        );
        expect(r.exitCode, r.stderr).toBe(1);
        expect(lines(r.stderr), r.stderr).toHaveLength(1);
        expect(r.stderr).toMatch(/the GPU engine could not be built/);
      }, 100_000);
    }

    it('a request accepted before SIGTERM is computed (200), then the drain completes: exit 0', async () => {
      const s = await startServe(['--workers', '1']);
      running.push(s);
      const signal = Array.from(randomF32(4096), (v) => Math.round(v * 1e4) / 1e4);
      const body = JSON.stringify({ signal, fs: 1000, flags: ['stft'] });
      const req = request({
        host: '127.0.0.1',
        port: s.port,
        path: '/v1/stft',
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      });
      const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
        req.on('response', (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        });
        req.on('error', reject);
      });
      req.flushHeaders();
      req.write(body.slice(0, 100));
      // The headers are in: the request is accepted. The stop begins while its body still arrives.
      await new Promise((r) => setTimeout(r, 300));
      s.child.kill('SIGTERM');
      await s.waitFor(/SIGTERM: stopping the workers gracefully/, 10_000);
      for (let i = 100; i < body.length; i += 4096) {
        req.write(body.slice(i, i + 4096));
        await new Promise((r) => setTimeout(r, 20));
      }
      req.end();
      const t0 = performance.now();
      const { status, text } = await answer;
      const end = await s.child;
      expect(status, text).toBe(200);
      const json = JSON.parse(text) as { filtered: number[][] | number[] };
      expect(json.filtered.flat().length).toBe(4096);
      expect(end.exitCode, s.stderr()).toBe(0);
      expect(performance.now() - t0).toBeLessThan(15_000);
    }, 120_000);

    it('SIGTERM with nothing in flight exits 0 promptly and leaves no worker', async () => {
      const s = spawnServe(['--workers', '2', '--port', String(await freePort())]);
      running.push(s);
      await s.waitFor(/worker\(s\) on /, 90_000);
      s.child.kill('SIGTERM');
      const t0 = performance.now();
      expect((await s.child).exitCode, s.stderr()).toBe(0);
      expect(performance.now() - t0).toBeLessThan(15_000);
    }, 120_000);
  },
);
