#!/usr/bin/env node
// `npm run test:mutation [module ...] [--minutes N] [--incremental]`: StrykerJS over the CUDA-free
// cores of quality/modules.mjs, one module at a time, each against its own unit tests, each in a
// child process niced to 19 and ended after --minutes (default 10). Writes
// quality/mutation-summary.json (merged: a module not run keeps its last entry) and prints the
// scores. Exit 1 when a module run fails or scores under the goal (85%).
//
// Each module runs in a copy of src/ and test/ under .stryker-tmp/ (Stryker then makes its own
// sandbox there): the copy is what lets a table declared `as const` be mutated (Stryker never
// mutates inside a type assertion) without touching the working tree, and it keeps a run
// independent of edits made while it runs.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { MUTATION_MODULES } from './modules.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const workRoot = join(root, '.stryker-tmp');
const summaryPath = join(root, 'quality', 'mutation-summary.json');
/** The score every core must reach: detected / (detected + undetected). */
export const GOAL = 0.85;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    minutes: { type: 'string', default: '10' },
    incremental: { type: 'boolean', default: false },
    'one-module': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});

if (values.help) {
  console.log(
    `usage: npm run test:mutation -- [${MUTATION_MODULES.map((m) => m.name).join('|')} ...] [--minutes N] [--incremental]`,
  );
  process.exit(0);
}

if (values['one-module'] !== undefined) await runOneModule(values['one-module']);
else await runAll();

/** The parent: each selected module in a niced child process with a deadline, then the summary. */
async function runAll() {
  const unknown = positionals.filter((name) => !MUTATION_MODULES.some((m) => m.name === name));
  if (unknown.length > 0)
    fail(`unknown module ${unknown.join(', ')}: one of ${MUTATION_MODULES.map((m) => m.name).join(', ')}`);
  const minutes = Number(values.minutes);
  if (!(minutes > 0)) fail(`--minutes must be a positive number, got ${values.minutes}`);
  const selected =
    positionals.length > 0 ? MUTATION_MODULES.filter((m) => positionals.includes(m.name)) : MUTATION_MODULES;
  const summary = existsSync(summaryPath) ? JSON.parse(readFileSync(summaryPath, 'utf8')) : { modules: {} };
  let failed = false;
  for (const module of selected) {
    const started = Date.now();
    const status = await runChild(module, minutes * 60_000);
    const reportPath = join(workRoot, 'reports', `${module.name}.json`);
    if (status !== 0 || !existsSync(reportPath)) {
      console.error(
        `mutation: ${module.name} ${status === 'timeout' ? `ran past ${minutes} min and was ended` : `failed (exit ${status})`}`,
      );
      failed = true;
      continue;
    }
    const entry = summarize(module, JSON.parse(readFileSync(reportPath, 'utf8')), Date.now() - started);
    summary.modules[module.name] = entry;
    console.log(
      `mutation: ${module.name} ${(entry.score * 100).toFixed(1)}% (${entry.detected} detected, ${entry.undetected} undetected, ${entry.seconds} s)`,
    );
    if (entry.score < GOAL) failed = true;
  }
  summary.goal = GOAL;
  summary.score =
    'detected / (detected + undetected): detected = killed + timeout, undetected = survived + no coverage';
  summary.stryker = JSON.parse(
    readFileSync(join(root, 'node_modules', '@stryker-mutator', 'core', 'package.json'), 'utf8'),
  ).version;
  writeFileSync(summaryPath, JSON.stringify(summary, null, 2) + '\n');
  console.log(`mutation: summary in ${relative(root, summaryPath)}`);
  process.exit(failed ? 1 : 0);
}

/** One module's run as a child at the lowest priority; 'timeout' when it outlived its deadline. */
function runChild(module, deadlineMs) {
  const args = [
    fileURLToPath(import.meta.url),
    '--one-module',
    module.name,
    ...(values.incremental ? ['--incremental'] : []),
  ];
  return new Promise((resolve) => {
    const child = spawn('nice', ['-n', '19', process.execPath, ...args], {
      cwd: root,
      stdio: 'inherit',
      detached: true,
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      // The child's whole process group: Stryker's test-runner processes go with it.
      process.kill(-child.pid, 'SIGKILL');
    }, deadlineMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      console.error(`mutation: cannot start ${module.name}: ${error.message}`);
      resolve(-1);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve(timedOut ? 'timeout' : (code ?? -1));
    });
  });
}

/** The child: a workspace copy for the module, then Stryker in it. */
async function runOneModule(name) {
  const module = MUTATION_MODULES.find((m) => m.name === name);
  if (module === undefined) fail(`unknown module ${name}`);
  const tests = module.tests.filter((file) => existsSync(join(root, file)));
  for (const missing of module.tests.filter((file) => !tests.includes(file)))
    console.warn(`mutation: ${name}: ${missing} does not exist, left out`);
  if (tests.length === 0) fail(`${name}: none of its test files exists`);

  const workspace = join(workRoot, `workspace-${name}`);
  rmSync(workspace, { recursive: true, force: true });
  mkdirSync(workspace, { recursive: true });
  // No tsconfig.json: Stryker would rewrite it through TypeScript's JavaScript API, which TypeScript 7
  // lacks, and vitest needs none (esbuild strips the types).
  // docs/: tests compare constants with what the documentation says.
  for (const entry of ['src', 'test', 'docs', 'quality', 'package.json']) {
    cpSync(join(root, entry), join(workspace, entry), {
      recursive: true,
      filter: (source) => !source.includes(`${join('test', 'kernels', 'build')}`),
    });
  }
  symlinkSync(join(root, 'node_modules'), join(workspace, 'node_modules'), 'dir');
  if (module.liftAsConst) liftAsConst(join(workspace, module.file));

  const reports = join(workRoot, 'reports');
  mkdirSync(reports, { recursive: true });
  process.chdir(workspace);
  process.env.TSCUDA_MUTATION_TESTS = tests.join(',');
  process.env.TSCUDA_MUTATION_MODULE = module.file;
  const { Stryker } = await import('@stryker-mutator/core');
  const stryker = new Stryker({
    mutate: [module.file],
    testRunner: 'vitest',
    vitest: { configFile: 'quality/vitest.mutation.config.mjs', related: false },
    coverageAnalysis: 'perTest',
    concurrency: 1,
    // No checker: @stryker-mutator/typescript-checker drives TypeScript's JavaScript API, which
    // TypeScript 7 (the native compiler this project uses) does not have.
    checkers: [],
    // A mutant that loops forever costs this much (plus 1.5x the tests' own time) before it counts as detected.
    timeoutMS: 5_000,
    reporters: ['json', 'clear-text'],
    jsonReporter: { fileName: join(reports, `${name}.json`) },
    clearTextReporter: { reportMutants: false, reportTests: false },
    incremental: values.incremental,
    incrementalFile: join(workRoot, 'incremental', `${name}.json`),
    cleanTempDir: 'always',
    logLevel: 'warn',
  });
  await stryker.runMutationTest();
}

/** Drops every `as const` of a source file (runtime behaviour is the same; only types change). */
function liftAsConst(file) {
  const source = readFileSync(file, 'utf8');
  const lifted = source.replaceAll(/\s+as const\b/g, '');
  if (lifted === source) fail(`${file}: no \`as const\` to lift (update quality/modules.mjs)`);
  writeFileSync(file, lifted);
}

/** The summary entry of one module from Stryker's mutation-testing-report JSON. */
function summarize(module, report, elapsedMs) {
  const mutants = Object.values(report.files).flatMap((file) => file.mutants);
  const count = (status) => mutants.filter((m) => m.status === status).length;
  const detected = count('Killed') + count('Timeout');
  const undetected = count('Survived') + count('NoCoverage');
  return {
    file: module.file,
    tests: module.tests,
    mutants: mutants.length,
    killed: count('Killed'),
    timeout: count('Timeout'),
    survived: count('Survived'),
    noCoverage: count('NoCoverage'),
    other: mutants.length - detected - undetected,
    detected,
    undetected,
    score: undetected + detected === 0 ? 1 : Number((detected / (detected + undetected)).toFixed(4)),
    seconds: Math.round(elapsedMs / 1000),
    survivors: mutants
      .filter((m) => m.status === 'Survived' || m.status === 'NoCoverage')
      .map((m) => ({
        line: m.location.start.line,
        column: m.location.start.column,
        mutator: m.mutatorName,
        replacement: m.replacement ?? '',
        status: m.status,
      }))
      .sort((a, b) => a.line - b.line || a.column - b.column),
  };
}

function fail(message) {
  console.error(`mutation: ${message}`);
  process.exit(1);
}
