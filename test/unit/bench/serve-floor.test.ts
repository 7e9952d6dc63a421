/**
 * The serve bench's floor pieces, CUDA-free: the bare node:http floor answers each path with its
 * precomputed size after reading the whole body (2 processes through node:cluster), a server's
 * process tree's CPU time is read from /proc (workers included), and every worker's series of a
 * gauge is read from a cluster's /metrics.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startFloor } from '../../../bench/serve/floors.js';
import { treeCpuMs } from '../../../bench/serve/process-cpu.js';
import { gauges, waitReady } from '../../../bench/serve/services.js';

const ROOT = new URL('../../../', import.meta.url).pathname;

function post(base: string, path: string, body: Buffer): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const url = new URL(base + path);
    const r = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'POST',
        headers: { 'content-length': String(body.byteLength) },
      },
      (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.byteLength));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      },
    );
    r.on('error', reject);
    r.end(body);
  });
}

describe('the HTTP floor', () => {
  // Two processes (node:cluster): the one-process floor runs the same request handler without the primary.
  for (const workers of [2])
    it(`${workers} processes: each path answered with its precomputed size, the body read whole; health 200`, async () => {
      const port = 19_000 + Math.floor(Math.random() * 2000);
      const floor = startFloor(ROOT, port, workers, { '/v1/stft?a=1': 1000, '/v1/stft?a=2': 70_000 });
      try {
        expect((await waitReady(floor.base, 20_000, floor.child)).ready).toBe(true);
        const body = Buffer.alloc(300_000, 7);
        expect(await post(floor.base, '/v1/stft?a=1', body)).toEqual({ status: 200, bytes: 1000 });
        expect(await post(floor.base, '/v1/stft?a=2', body)).toEqual({ status: 200, bytes: 70_000 });
        expect(await post(floor.base, '/other', Buffer.alloc(10))).toEqual({ status: 200, bytes: 0 });
        expect(treeCpuMs(floor.child.pid!)).toBeGreaterThan(0);
      } finally {
        expect(await floor.stop()).toBe(0);
      }
    }, 30_000);
});

describe('process tree CPU and cluster gauges', () => {
  it('treeCpuMs grows with work done in the tree; null for a process that is not there', () => {
    const before = treeCpuMs(process.pid);
    if (before === null) return; // no /proc (not Linux): the rows say "not measured"
    // 150 ms of this process's own CPU time (not wall time: a busy host may run it for less).
    const t0 = process.cpuUsage();
    let x = 0;
    while (process.cpuUsage(t0).user < 150_000) for (let i = 0; i < 10_000; i++) x += Math.sqrt(x + 1);
    expect(x).toBeGreaterThan(0);
    expect(treeCpuMs(process.pid)! - before).toBeGreaterThanOrEqual(100);
    expect(treeCpuMs(2 ** 22 + 12345)).toBeNull();
  }, 10_000);

  it('gauges reads every worker series of a name, filtered by labels', () => {
    const text = [
      '# HELP tscuda_event_loop_delay_seconds x',
      'tscuda_event_loop_delay_seconds{stat="p99",worker="0"} 0.004',
      'tscuda_event_loop_delay_seconds{stat="p50",worker="0"} 0.001',
      'tscuda_event_loop_delay_seconds{stat="p99",worker="1"} 0.012',
      'tscuda_event_loop_delay_seconds_other{stat="p99"} 9',
    ].join('\n');
    expect(gauges(text, 'tscuda_event_loop_delay_seconds', 'stat="p99"')).toEqual([0.004, 0.012]);
    expect(gauges(text, 'missing')).toEqual([]);
  }, 5_000);
});
