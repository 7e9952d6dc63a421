/**
 * The package as a consumer gets it: build, `npm pack`, install the tarball into a fresh project
 * with fresh dependencies (resolved by npm as a user's install resolves them, from the npm cache
 * where it can: never this checkout's node_modules), then type-check every entry point with the
 * strictest options and no skipLibCheck on the oldest and newest TypeScript the README supports,
 * import every entry point as ESM and from CommonJS, run a user's `node script.ts` (Node 24+) and
 * `npx tscuda --help`.
 */
import { execa } from 'execa';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERY_ENTRY_TS, SCRIPT_TS, STRICT_TS } from './consumer-sources.js';

const root = join(import.meta.dirname, '..', '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  version: string;
  exports: Record<string, unknown>;
};
const work = mkdtempSync(join(tmpdir(), 'tscuda-consumer-'));
const stage = join(work, 'stage');
const consumer = join(work, 'consumer');
let packed: string[] = [];

const [major] = process.versions.node.split('.').map(Number) as [number];
/** Node runs a .ts file as it is (type stripping) with `using` natively from 24. */
const nodeRunsTypeScript = major >= 24;

/**
 * The TypeScript range the README states: its oldest (fastify's types need NoInfer, 5.4) and the
 * newest, this checkout's own compiler. Each is installed fresh into the consumer under an alias.
 */
const TYPESCRIPT = {
  oldest: '5.4.5',
  newest: (
    JSON.parse(readFileSync(join(root, 'node_modules', 'typescript', 'package.json'), 'utf8')) as { version: string }
  ).version,
};
/** Node's types of the oldest supported line: what a consumer on any supported line may use. */
const NODE_TYPES = '22';

function stagePackage(): void {
  mkdirSync(stage, { recursive: true });
  for (const f of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md'])
    if (existsSync(join(root, f))) copyFileSync(join(root, f), join(stage, f));
  cpSync(join(root, 'bin'), join(stage, 'bin'), { recursive: true });
  mkdirSync(join(stage, 'src', 'kernels'), { recursive: true });
  for (const f of readdirSync(join(root, 'src', 'kernels')).filter((f) => f.endsWith('.cu')))
    copyFileSync(join(root, 'src', 'kernels', f), join(stage, 'src', 'kernels', f));
  if (existsSync(join(root, 'kernels', 'build')))
    cpSync(join(root, 'kernels', 'build'), join(stage, 'kernels', 'build'), { recursive: true });
}

/** The tsconfig of a strict consumer: every strictness option this package promises to satisfy, and its dependencies' types checked too. */
const STRICT_TSCONFIG = {
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
  files: ['strict.ts', 'every-entry.ts'],
};

beforeAll(async () => {
  stagePackage();
  // Build with this checkout's compiler into the staged package (the checkout's own dist/ is untouched).
  const build = await execa(
    join(root, 'node_modules', '.bin', 'tsc'),
    ['-p', join(root, 'tsconfig.build.json'), '--outDir', join(stage, 'dist')],
    { cwd: root, reject: false },
  );
  if (!existsSync(join(stage, 'dist', 'index.js')))
    throw new Error(`the build produced no dist/index.js:\n${build.stdout}\n${build.stderr}`);
  const pack = await execa('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: stage });
  const info = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
  packed = info[0]!.files.map((f) => f.path);
  const tarball = join(work, info[0]!.filename);
  // A fresh project: npm resolves the package's dependencies itself (from its cache where it can,
  // the registry otherwise), as a user's install does; the compilers and Node's types beside them.
  mkdirSync(consumer, { recursive: true });
  writeFileSync(
    join(consumer, 'package.json'),
    JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }),
  );
  await execa(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      tarball,
      `@types/node@${NODE_TYPES}`,
      `ts-oldest@npm:typescript@${TYPESCRIPT.oldest}`,
      `ts-newest@npm:typescript@${TYPESCRIPT.newest}`,
    ],
    { cwd: consumer, timeout: 240_000 },
  );
  writeFileSync(join(consumer, 'strict.ts'), STRICT_TS);
  writeFileSync(join(consumer, 'every-entry.ts'), EVERY_ENTRY_TS);
  writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify(STRICT_TSCONFIG));
}, 300_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The package's entry points as a user imports them: `tscuda`, `tscuda/ffi`, ... */
function entryPoints(): string[] {
  return Object.keys(pkg.exports)
    .filter((s) => s !== './package.json')
    .map((s) => (s === '.' ? 'tscuda' : `tscuda/${s.slice(2)}`));
}

describe('the packed package', () => {
  it('ships the build, the CLI, the kernels and the docs, without source maps or TypeScript sources', () => {
    for (const f of [
      'package.json',
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
      'bin/tscuda.js',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/cli/main.js',
    ])
      expect(packed).toContain(f);
    expect(packed.filter((f) => f.endsWith('.map'))).toEqual([]);
    // ...and nothing shipped points at a map that is not there.
    const dangling = packed.filter(
      (f) =>
        /\.(js|d\.ts)$/.test(f) &&
        f.startsWith('dist/') &&
        readFileSync(join(stage, f), 'utf8').includes('//# sourceMappingURL='),
    );
    expect(dangling).toEqual([]);
    expect(packed.filter((f) => f.startsWith('src/') && !f.endsWith('.cu'))).toEqual([]);
    if (existsSync(join(root, 'kernels', 'build'))) {
      for (const f of readdirSync(join(root, 'kernels', 'build')).filter((f) => f.endsWith('.fatbin')))
        expect(packed).toContain(`kernels/build/${f}`);
    }
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (typeof target === 'string') continue;
      expect(Object.keys(target as object), subpath).toEqual(['types', 'import', 'default']);
    }
  });

  it.each(Object.entries(TYPESCRIPT))(
    'type-checks every entry point in a strict consumer (strict, exactOptionalPropertyTypes, noUncheckedIndexedAccess, no skipLibCheck) with the %s TypeScript the README supports',
    async (which, version) => {
      const tsc = join(consumer, 'node_modules', `ts-${which}`, 'bin', 'tsc');
      expect(
        (
          JSON.parse(readFileSync(join(consumer, 'node_modules', `ts-${which}`, 'package.json'), 'utf8')) as {
            version: string;
          }
        ).version,
      ).toBe(version);
      const r = await execa('node', [tsc, '-p', consumer], { cwd: consumer, reject: false, timeout: 180_000 });
      expect(`${r.stdout}${r.stderr}`).toBe('');
      expect(r.exitCode).toBe(0);
    },
    200_000,
  );

  it('the README states the oldest TypeScript this test checks', () => {
    const [oldestMajor, oldestMinor] = TYPESCRIPT.oldest.split('.');
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain(
      `TypeScript ${oldestMajor}.${oldestMinor} or newer`,
    );
  });

  it('imports every subpath as ESM', async () => {
    const subpaths = entryPoints();
    expect(subpaths).toHaveLength(10);
    writeFileSync(
      join(consumer, 'esm.mjs'),
      `${subpaths.map((s, i) => `import * as m${i} from '${s}';`).join('\n')}\nconsole.log([${subpaths.map((_, i) => `Object.keys(m${i}).length`).join(', ')}].join(' '));\n`,
    );
    const r = await execa('node', ['esm.mjs'], { cwd: consumer });
    for (const n of r.stdout.trim().split(' ')) expect(Number(n)).toBeGreaterThan(0);
  }, 30_000);

  it('require()s every subpath from CommonJS (every supported Node line loads an ES module so)', async () => {
    const subpaths = entryPoints();
    writeFileSync(
      join(consumer, 'cjs.cjs'),
      `const names = ${JSON.stringify(subpaths)};\nconsole.log(names.map((n) => Object.keys(require(n)).length).join(' '));\n`,
    );
    const r = await execa('node', ['--no-warnings', 'cjs.cjs'], { cwd: consumer });
    const counts = r.stdout.trim().split(' ').map(Number);
    expect(counts).toHaveLength(subpaths.length);
    for (const n of counts) expect(n).toBeGreaterThan(0);
  }, 30_000);

  const scriptTitle = "runs a user's `node script.ts` against the installed package (type stripping, native `using`)";
  it.runIf(nodeRunsTypeScript)(
    nodeRunsTypeScript
      ? scriptTitle
      : `${scriptTitle} (skipped: Node ${process.versions.node} runs .ts files only from 24; the README says to use tsx or tsc there)`,
    async () => {
      writeFileSync(join(consumer, 'script.ts'), SCRIPT_TS);
      const r = await execa('node', ['--no-warnings', 'script.ts'], { cwd: consumer, timeout: 30_000 });
      expect(r.stdout.trim()).toBe('used,disposed function boolean');
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
      const r = await execa('node', [join(consumer, 'node_modules', 'tscuda', 'bin', 'tscuda.js'), c, '--help'], {
        cwd: consumer,
      });
      expect(r.stdout, c).toMatch(new RegExp(`^usage: tscuda ${c}`));
    }
  }, 120_000);
});
