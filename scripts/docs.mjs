#!/usr/bin/env node
// `npm run docs`: the API reference (docs/api/) from the doc comments, with typedoc.
//
// typedoc needs TypeScript's JavaScript API, which TypeScript 7 (the native compiler this project
// builds with) does not have, and its peer dependency (typescript < 7) cannot sit beside the
// project's typescript 7 in one node_modules. So typedoc and TypeScript 6 live in their own small
// package, scripts/docs/ (installed on first use, from its lockfile), and resolve each other there.
// The project's own TypeScript is untouched. Undocumented exports are listed as warnings.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tooling = join(root, 'scripts', 'docs');
const entry = join(tooling, 'node_modules', 'typedoc', 'dist', 'index.js');
if (!existsSync(entry)) {
  console.log('docs: installing typedoc and TypeScript 6 into scripts/docs/ (once)');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  execFileSync(npm, [existsSync(join(tooling, 'package-lock.json')) ? 'ci' : 'install', '--no-audit', '--no-fund'], {
    cwd: tooling,
    stdio: 'inherit',
  });
}
const { Application, LogLevel } = await import(pathToFileURL(entry).href);
process.chdir(root);
const app = await Application.bootstrapWithPlugins({ options: join(root, 'typedoc.json'), logLevel: LogLevel.Info });
const project = await app.convert();
if (!project) {
  console.error('docs: typedoc could not convert the project (see the errors above)');
  process.exit(1);
}
app.validate(project);
await app.generateDocs(project, app.options.getValue('out'));
const warnings = app.logger.warningCount;
console.log(
  `docs: wrote ${app.options.getValue('out')}${warnings ? ` (${warnings} warning(s): undocumented exports and broken links are listed above)` : ''}`,
);
process.exitCode = app.logger.errorCount > 0 ? 1 : 0;
