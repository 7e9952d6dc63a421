// Self time by function and by file of a V8 .cpuprofile: `node tools/cpuprofile-top.mjs FILE [N]`.
import { readFileSync } from 'node:fs';

const [file, count = '25'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const byFunction = new Map();
const byFile = new Map();
let total = 0;
const short = (url) => url.replace(/.*node_modules\//, 'nm/').replace(/^file:\/\/.*?\/(src|bench|test)\//, '$1/');
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  const { functionName, url, lineNumber } = nodes.get(id).callFrame;
  total += dt;
  const key = `${functionName || '(anonymous)'} ${short(url)}:${lineNumber + 1}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + dt);
  const where = short(url).startsWith('nm/') ? short(url).split('/').slice(0, 2).join('/') : short(url) || '(native)';
  byFile.set(where, (byFile.get(where) ?? 0) + dt);
});
const top = (map) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(count))
    .map(([k, t]) => `${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`)
    .join('\n');
console.log(`${(total / 1e6).toFixed(2)} s sampled\n-- by function\n${top(byFunction)}\n-- by file\n${top(byFile)}`);
