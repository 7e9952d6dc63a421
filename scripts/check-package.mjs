#!/usr/bin/env node
// Run by `npm pack` / `npm publish` (prepack) after the build: fails instead of shipping a package
// without its kernels. Every src/kernels/<name>.cu needs a non-empty kernels/build/<name>.fatbin
// (`npm run build:kernels` needs nvcc; it skips without one, so this check is what stops the pack),
// and the build must have produced dist/index.js and dist/cli/main.js.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const problems = [];
const sources = readdirSync(join(root, 'src', 'kernels')).filter((f) => f.endsWith('.cu'));
for (const file of sources) {
  const fatbin = join(root, 'kernels', 'build', file.replace(/\.cu$/, '.fatbin'));
  if (!existsSync(fatbin) || statSync(fatbin).size === 0)
    problems.push(`kernels/build/${file.replace(/\.cu$/, '.fatbin')} is missing (built from src/kernels/${file})`);
  else if (statSync(fatbin).mtimeMs < statSync(join(root, 'src', 'kernels', file)).mtimeMs)
    problems.push(`kernels/build/${file.replace(/\.cu$/, '.fatbin')} is older than src/kernels/${file}`);
}
for (const built of ['dist/index.js', 'dist/index.d.ts', 'dist/cli/main.js'])
  if (!existsSync(join(root, built))) problems.push(`${built} is missing`);
// package.json's "files" leaves the maps out, so no shipped file may point at one.
const walk = (dir) =>
  existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
      )
    : [];
for (const file of walk(join(root, 'dist')).filter((f) => /\.(js|d\.ts)$/.test(f))) {
  if (/\/\/# sourceMappingURL=/.test(readFileSync(file, 'utf8'))) {
    problems.push(
      `${file.slice(root.length + 1)} ends with a sourceMappingURL comment, but maps are not shipped (tsconfig.build.json: sourceMap false)`,
    );
    break;
  }
}
if (problems.length > 0) {
  console.error(
    `prepack: refusing to pack tscuda:\n  ${problems.join('\n  ')}\nRun \`npm run build:kernels\` on a machine with nvcc (CUDA 13), then \`npm run build\`, and pack again.`,
  );
  process.exit(1);
}
console.log(`prepack: ${sources.length} fatbin(s) and the build are present`);
