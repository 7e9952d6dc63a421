import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedLoop, openLoop, type LoadRequest, type LoopReport } from '../../../bench/serve/load.js';
import { closedLoopProcesses, mergeLoopReports } from '../../../bench/serve/load-processes.js';

// A server that answers every third POST 429 and the rest 200 after `delayMs`, and counts bodies.
let server: Server;
let base = '';
let posts = 0;
let bodyBytes = 0;
const delayMs = 5;
beforeAll(async () => {
  server = createServer((req, res) => {
    let n = 0;
    req.on('data', (c: Buffer) => (n += c.byteLength));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.end('live');
      posts++;
      bodyBytes += n;
      const status = posts % 3 === 0 ? 429 : 200;
      setTimeout(() => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: status === 200 }));
      }, delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const request = (): LoadRequest => ({
  base,
  path: '/x',
  method: 'POST',
  headers: { 'content-type': 'application/octet-stream' },
  body: Buffer.alloc(1000, 7),
});

function answered(r: LoopReport): number {
  return Object.values(r.byStatus).reduce((a, b) => a + b, 0);
}

describe('serve bench load generators', () => {
  it('closed loop: every request answered, counted by status, latencies at least the server delay', async () => {
    const before = posts;
    const r = await closedLoop(request(), 4, 0.3, { warmPath: '/live', keepSamples: true });
    expect(answered(r)).toBe(r.sent);
    expect(posts - before).toBe(r.sent);
    expect(r.byStatus['429']).toBeGreaterThan(0);
    expect(r.byStatus['200']).toBeGreaterThan(r.byStatus['429']!);
    expect(r.latencyMs['200']!.p50).toBeGreaterThanOrEqual(delayMs - 1);
    expect(r.samples!['200']!.length + r.samples!['429']!.length + r.firstSamples!.length).toBe(r.sent);
  });

  it('open loop: starts requests at the asked rate whatever the answers do, and waits for all', async () => {
    const before = posts;
    const bytesBefore = bodyBytes;
    const r = await openLoop(request(), 200, 0.5, { connections: 8, warmPath: '/live' });
    expect(r.sent).toBe(100);
    expect(answered(r)).toBe(100);
    expect(posts - before).toBe(100);
    expect(bodyBytes - bytesBefore).toBe(100 * 1000);
    expect(r.unanswered).toEqual({});
  });

  it('merges reports: counts added, percentiles over every sample', () => {
    const a: LoopReport = {
      sent: 3,
      byStatus: { '200': 3 },
      unanswered: {},
      latencyMs: {},
      firstRequestMs: { p50: 0, p90: 0, p99: 0, max: 0 },
      nonRetryable503: 0,
      samples: { '200': [1, 2, 3] },
      firstSamples: [9],
    };
    const b: LoopReport = {
      sent: 2,
      byStatus: { '200': 1, '429': 1 },
      unanswered: { ECONNRESET: 1 },
      latencyMs: {},
      firstRequestMs: { p50: 0, p90: 0, p99: 0, max: 0 },
      nonRetryable503: 1,
      samples: { '200': [100], '429': [5] },
      firstSamples: [],
    };
    const m = mergeLoopReports([a, b]);
    expect(m).toMatchObject({
      sent: 5,
      byStatus: { '200': 4, '429': 1 },
      unanswered: { ECONNRESET: 1 },
      nonRetryable503: 1,
    });
    expect(m.latencyMs['200']).toEqual({ p50: 3, p90: 100, p99: 100, max: 100 });
    expect(m.latencyMs['429']!.max).toBe(5);
    expect(m.firstRequestMs.max).toBe(9);
  });

  it('splits a closed loop over client processes that start together', async () => {
    const before = posts;
    const r = await closedLoopProcesses(request(), 4, 0.5, 2);
    expect(r.sent).toBeGreaterThan(0);
    expect(answered(r)).toBe(r.sent);
    expect(posts - before).toBe(r.sent);
  }, 30_000);
});
