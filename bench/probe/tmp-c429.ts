import { createServer as createHttp } from 'node:http';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from '/work/main/src/server/index.js';
import { FakeEngine } from '/work/main/test/unit/server/fake-engine.js';
const body = Buffer.alloc(65536, 1);
writeFileSync('/tmp/probe/body.bin', body);
const mode = process.argv[2];
let base: string;
if (mode === 'raw') {
  const payload = Buffer.from(JSON.stringify({ error: { code: 'too_many_requests', message: 'x' } }));
  const s = createHttp((req, res) => { res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1', 'content-length': payload.length }); res.end(payload); });
  await new Promise<void>((r) => s.listen(8941, '127.0.0.1', r));
  base = 'http://127.0.0.1:8941';
} else {
  const engine = new FakeEngine({ manual: true });
  const s = createServer({ engine, limits: { maxPending: 1 } });
  base = await s.listen({ port: 8942, host: '127.0.0.1' });
  void fetch(`${base}/v1/stft`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(64) });
  await new Promise((r) => setTimeout(r, 200));
}
const { spawn } = await import('node:child_process');
const p = spawn('npx', ['autocannon', '-c', '64', '-d', '5', '-m', 'POST', '-H', 'content-type=application/octet-stream', '-i', '/tmp/probe/body.bin', `${base}/v1/stft`], { stdio: ['ignore', 'pipe', 'pipe'] });
let out = ''; p.stderr.on('data', (d) => (out += d)); p.stdout.on('data', (d) => (out += d));
await new Promise((r) => p.on('exit', r));
console.log(mode, out.split('\n').filter((l) => /Req\/Sec|requests in|non 2xx|Latency/.test(l)).join('\n'));
process.exit(0);
