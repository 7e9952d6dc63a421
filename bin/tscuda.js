#!/usr/bin/env node
// The `tscuda` executable. Installed from npm it runs the built CLI (dist/); in a source checkout
// (src/ present, tsx installed) it runs the TypeScript sources, so a stale dist/ is never used there.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'src', 'cli', 'main.ts');
const built = join(root, 'dist', 'cli', 'main.js');

async function tsxApi() {
  try {
    return await import('tsx/esm/api');
  } catch {
    return undefined;
  }
}

const tsx = existsSync(source) ? await tsxApi() : undefined;
if (tsx) {
  tsx.register();
  await import(pathToFileURL(source).href);
} else if (existsSync(built)) {
  await import(pathToFileURL(built).href);
} else {
  console.error(
    'tscuda: neither dist/cli/main.js nor tsx with src/cli/main.ts was found; run `npm run build` (or `npm install` in a checkout)',
  );
  process.exitCode = 1;
}
