/**
 * What fresh memory costs a process that reads MiB-sized results (a queue client, a server, the
 * engine's own result arrays): filling 1 MiB that was just allocated, against filling one reused
 * buffer. glibc hands out blocks this large with mmap and returns them with munmap, so every
 * fresh MiB is 256 page faults on first touch; with MALLOC_MMAP_THRESHOLD_ raised they come from
 * the heap and are reused. Compare:
 *   tsx bench/probe/fresh-memory.ts
 *   MALLOC_MMAP_THRESHOLD_=67108864 MALLOC_TRIM_THRESHOLD_=268435456 tsx bench/probe/fresh-memory.ts
 */
const MIB = 2 ** 20;
const chunk = Buffer.alloc(64 * 1024, 7); // what a socket read delivers at a time
const fill = (target: Buffer): void => {
  for (let offset = 0; offset < MIB; offset += chunk.length) chunk.copy(target, offset);
};
const reused = Buffer.allocUnsafeSlow(MIB);
const kept: Buffer[] = [];
const cases: [string, () => Buffer][] = [
  ['one reused buffer', () => reused],
  ['fresh, dropped at once', () => Buffer.allocUnsafeSlow(MIB)],
  [
    'fresh, the last 64 kept',
    () => {
      const b = Buffer.allocUnsafeSlow(MIB);
      kept.push(b);
      if (kept.length > 64) kept.shift();
      return b;
    },
  ],
];
console.log(
  `filling 1 MiB from 64 KiB reads; MALLOC_MMAP_THRESHOLD_=${process.env.MALLOC_MMAP_THRESHOLD_ ?? '(glibc default)'}`,
);
for (const [name, next] of cases) {
  for (let i = 0; i < 200; i++) fill(next());
  const t0 = performance.now();
  for (let i = 0; i < 2000; i++) fill(next());
  console.log(`${name.padEnd(26)} ${(((performance.now() - t0) / 2000) * 1000).toFixed(1).padStart(7)} µs per MiB`);
}
