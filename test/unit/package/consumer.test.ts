/**
 * The package as a consumer gets it: build, `npm pack`, install the tarball into a fresh project
 * (offline: the dependencies are linked from this checkout's node_modules, so npm has nothing to
 * fetch), then type-check a strict consumer with exactOptionalPropertyTypes, import it as ESM,
 * require() it from CommonJS and run `npx tscuda --help`.
 */
import { execa } from 'execa';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string>; exports: Record<string, unknown> };
const work = mkdtempSync(join(tmpdir(), 'tscuda-consumer-'));
const stage = join(work, 'stage');
const consumer = join(work, 'consumer');
let packed: string[] = [];

const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
/** require() of an ES module without a flag: Node 20.19+, 22.12+, 23+. */
const requireEsm = (major === 20 && minor >= 19) || (major === 22 && minor >= 12) || major >= 23;

function stagePackage(): void {
  mkdirSync(stage, { recursive: true });
  for (const f of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md']) if (existsSync(join(root, f))) copyFileSync(join(root, f), join(stage, f));
  cpSync(join(root, 'bin'), join(stage, 'bin'), { recursive: true });
  mkdirSync(join(stage, 'src', 'kernels'), { recursive: true });
  for (const f of readdirSync(join(root, 'src', 'kernels')).filter((f) => f.endsWith('.cu'))) copyFileSync(join(root, 'src', 'kernels', f), join(stage, 'src', 'kernels', f));
  if (existsSync(join(root, 'kernels', 'build'))) cpSync(join(root, 'kernels', 'build'), join(stage, 'kernels', 'build'), { recursive: true });
}

const CONSUMER_TS = `
import { DeviceBuffer, FftPlan, HostBuffer, Program, Stream, elementwise, reduction, toF16, type DType, type Device } from 'tscuda';
import { cu } from 'tscuda/ffi';
import { Coordinator, StreamPool } from 'tscuda/orchestration';
import { stft } from 'tscuda/signal';

// What an application has at hand: values that may be undefined, passed on as they are.
declare const maybeStream: Stream | undefined;
declare const maybeDevice: Device | undefined;
declare const label: string | undefined;
declare const priority: 'high' | 'normal' | 'low' | undefined;

export function scale(x: DeviceBuffer<'f32'>, host: Float32Array, pinned: HostBuffer<'f32'>): DType {
  using stream = new Stream({ device: maybeDevice, label, priority });
  const y = DeviceBuffer.alloc('f32', x.length, { stream: maybeStream, label, device: maybeDevice });
  y.write(host, { stream: maybeStream });
  y.write(pinned, { stream: maybeStream, offset: undefined });
  y.read(host, { stream: maybeStream });
  y.copyFrom(x, { stream: maybeStream });
  using pinned2 = HostBuffer.alloc('f32', 4, { device: maybeDevice, label });
  // Device-rooted factories and peer access, added to Device by the package's side-effect modules.
  if (maybeDevice) {
    using s2 = maybeDevice.createStream({ label });
    using b2 = maybeDevice.alloc('f32', 4, { stream: s2 });
    const peer: boolean = maybeDevice.canAccessPeer(maybeDevice);
    void b2;
    void peer;
  }
  const kernel = new Program({ source: 'extern "C" __global__ void k(float* p) {}', name: label }).kernel('k', ['ptr']);
  kernel.launch({ grid: 1, block: 1, stream: maybeStream, sharedMemBytes: undefined }, y);
  using plan = FftPlan.create({ shape: [8], type: 'R2C', stream: maybeStream, device: maybeDevice });
  const axpy = elementwise({ inputs: 'const float x', params: 'float a', outputs: 'float y', operation: 'y = a * x' });
  axpy(x, 2, y, { stream: maybeStream });
  // @ts-expect-error a double buffer where float is declared
  axpy(DeviceBuffer.alloc('f64', 1), 2, y);
  const sum = reduction({ inputs: 'const float x', output: 'float y', map: 'x', reduce: 'a + b', identity: '0', post: undefined });
  sum(x, y, { stream: maybeStream });
  const { Zxx } = stft(x, { fs: 100, nperseg: 16, stream: maybeStream, window: undefined });
  const pool = new StreamPool({ label, device: maybeDevice });
  const coordinator = new Coordinator(pool, { label });
  coordinator.add({ name: 'copy', kind: 'kernel', stream: maybeStream, after: undefined, run: (s) => void y.copyFrom(x, { stream: s }) });
  void [toF16([1]), cu, stream, pinned2, plan, Zxx];
  return y.dtype;
}
`;

beforeAll(async () => {
  stagePackage();
  // Build with this checkout's compiler into the staged package (the checkout's own dist/ is untouched).
  const build = await execa(join(root, 'node_modules', '.bin', 'tsc'), ['-p', join(root, 'tsconfig.build.json'), '--outDir', join(stage, 'dist')], { cwd: root, reject: false });
  if (!existsSync(join(stage, 'dist', 'index.js'))) throw new Error(`the build produced no dist/index.js:\n${build.stdout}\n${build.stderr}`);
  const pack = await execa('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: stage });
  const info = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
  packed = info[0]!.files.map((f) => f.path);
  const tarball = join(work, info[0]!.filename);
  // The consumer: its dependencies linked from this checkout so that the install needs no network.
  mkdirSync(join(consumer, 'node_modules', '@types'), { recursive: true });
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
  for (const dep of Object.keys(pkg.dependencies)) {
    const link = join(consumer, 'node_modules', dep);
    mkdirSync(dirname(link), { recursive: true }); // scoped packages (@fastify/...) live one folder down
    symlinkSync(join(root, 'node_modules', dep), link);
  }
  await execa('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock', tarball], { cwd: consumer });
  // After the install, which would prune it as extraneous: Node's types for the type check.
  mkdirSync(join(consumer, 'node_modules', '@types'), { recursive: true });
  symlinkSync(join(root, 'node_modules', '@types', 'node'), join(consumer, 'node_modules', '@types', 'node'));
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the packed package', () => {
  it('ships the build, the CLI, the kernels and the docs, without source maps or TypeScript sources', () => {
    for (const f of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'bin/tscuda.js', 'dist/index.js', 'dist/index.d.ts', 'dist/cli/main.js']) expect(packed).toContain(f);
    expect(packed.filter((f) => f.endsWith('.map'))).toEqual([]);
    // ...and nothing shipped points at a map that is not there.
    const dangling = packed.filter((f) => /\.(js|d\.ts)$/.test(f) && f.startsWith('dist/') && readFileSync(join(stage, f), 'utf8').includes('//# sourceMappingURL='));
    expect(dangling).toEqual([]);
    expect(packed.filter((f) => f.startsWith('src/') && !f.endsWith('.cu'))).toEqual([]);
    if (existsSync(join(root, 'kernels', 'build'))) {
      for (const f of readdirSync(join(root, 'kernels', 'build')).filter((f) => f.endsWith('.fatbin'))) expect(packed).toContain(`kernels/build/${f}`);
    }
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (typeof target === 'string') continue;
      expect(Object.keys(target as object), subpath).toEqual(['types', 'import', 'default']);
    }
  });

  it('type-checks a strict consumer with exactOptionalPropertyTypes passing { stream: maybeStream }', async () => {
    writeFileSync(join(consumer, 'index.ts'), CONSUMER_TS);
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2023', 'ESNext.Disposable'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true,
          skipLibCheck: false,
          noEmit: true,
          types: ['node'],
        },
        files: ['index.ts'],
      }),
    );
    const r = await execa(join(root, 'node_modules', '.bin', 'tsc'), ['-p', consumer], { cwd: consumer, reject: false });
    expect(`${r.stdout}${r.stderr}`).toBe('');
    expect(r.exitCode).toBe(0);
  }, 60_000);

  it('imports every subpath as ESM', async () => {
    const subpaths = Object.keys(pkg.exports)
      .filter((s) => s !== './package.json')
      .map((s) => (s === '.' ? 'tscuda' : `tscuda/${s.slice(2)}`));
    writeFileSync(
      join(consumer, 'esm.mjs'),
      `${subpaths.map((s, i) => `import * as m${i} from '${s}';`).join('\n')}\nconsole.log([${subpaths.map((_, i) => `Object.keys(m${i}).length`).join(', ')}].join(' '));\n`,
    );
    const r = await execa('node', ['esm.mjs'], { cwd: consumer });
    for (const n of r.stdout.trim().split(' ')) expect(Number(n)).toBeGreaterThan(0);
  }, 30_000);

  const cjsTitle = "require('tscuda') from CommonJS (Node >= 20.19)";
  it.runIf(requireEsm)(
    requireEsm ? cjsTitle : `${cjsTitle} (skipped: Node ${process.versions.node} cannot require() ES modules without a flag)`,
    async () => {
      writeFileSync(
        join(consumer, 'cjs.cjs'),
        "const t = require('tscuda');\nconst ffi = require('tscuda/ffi');\nconsole.log(typeof t.Stream, typeof t.DeviceBuffer, typeof t.elementwise, typeof ffi.cu);\n",
      );
      const r = await execa('node', ['--no-warnings', 'cjs.cjs'], { cwd: consumer });
      expect(r.stdout.trim()).toBe('function function function function');
    },
    30_000,
  );

  it('runs `npx tscuda --help`, `--version` and every command help from the installed package', async () => {
    const help = await execa('npx', ['--no-install', 'tscuda', '--help'], { cwd: consumer });
    expect(help.stdout).toMatch(/^usage: tscuda <command>/);
    const version = await execa('npx', ['--no-install', 'tscuda', '--version'], { cwd: consumer });
    expect(version.stdout.trim()).toBe(pkg.version);
    const commands = [...help.stdout.matchAll(/^ {2}(\w+) {2,}/gm)].map((m) => m[1]!);
    expect(commands).toContain('info');
    for (const c of commands) {
      const r = await execa('node', [join(consumer, 'node_modules', 'tscuda', 'bin', 'tscuda.js'), c, '--help'], { cwd: consumer });
      expect(r.stdout, c).toMatch(new RegExp(`^usage: tscuda ${c}`));
    }
  }, 30_000);
});
