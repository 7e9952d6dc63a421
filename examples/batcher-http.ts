// Many small HTTP requests, batched onto the GPU: a Batcher packs concurrent requests into one
// kernel launch each (here lerp of 4-float vectors). The handler is plain node:http.
// Run: npx tsx examples/batcher-http.ts   (in your project: import from 'tscuda' and 'tscuda/pipeline')
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Device } from '../src/index.js';
import { lerpBatcher, type InterpolationItem } from '../src/pipeline/index.js';

// Without a GPU, say what is missing in one line.
const gpu = Device.available();
if (!gpu.ok) {
  console.error(`batcher-http: ${gpu.reason}`);
  process.exit(1);
}

const lerp = lerpBatcher({ dim: 4, maxBatchSize: 256, maxWaitMs: 2, channelSize: 4096 });

async function body(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text;
}

const server = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/lerp') return void res.writeHead(404).end();
  body(req)
    .then((text) => lerp.submitOne(JSON.parse(text) as InterpolationItem))
    .then((result) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Array.from(result))),
    )
    .catch((e: unknown) => res.writeHead(400).end(String(e)));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;

// 200 concurrent clients: lerp([i, i, i, i], [i + 10, ...], t = 0.5) = i + 5.
const answers = await Promise.all(
  Array.from({ length: 200 }, async (_, i) => {
    const item = { a: [i, i, i, i], b: [i + 10, i + 10, i + 10, i + 10], t: 0.5 };
    const r = await fetch(`http://127.0.0.1:${port}/lerp`, { method: 'POST', body: JSON.stringify(item) });
    return (await r.json()) as number[];
  }),
);
const correct = answers.every((v, i) => v.length === 4 && v.every((x) => x === i + 5));
const { batches } = lerp.metrics;
console.log(
  `200 requests: ${correct ? 'all correct' : 'WRONG'}; ${batches} GPU batch(es), ${(200 / batches).toFixed(1)} requests per batch`,
);
server.close();
await lerp.close();
