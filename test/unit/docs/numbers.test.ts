/**
 * The docs' figures come from the committed results: every generated block of README.md and docs/
 * regenerated in memory from bench/results/ equals what is committed, no measured figure is typed
 * by hand outside a block, and the generators quote the files' own verdicts (a goal the file marks
 * missed is never called met).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { meetsGoal, type BenchResults, type MetricResult } from '../../../bench/report/types.js';
import { perCallSentence } from '../../../scripts/docs-numbers/bench-tables.js';
import { findBlocks, NumbersBlockError, replaceBlocks } from '../../../scripts/docs-numbers/blocks.js';
import { QUEUE_DOOR, SERVE_DOOR, throughputSection } from '../../../scripts/docs-numbers/door-tables.js';
import { GENERATORS, readCatalog, regenerate, regenerateAll } from '../../../scripts/docs-numbers/generate.js';
import {
  newestWithRows,
  readResults,
  type BenchFile,
  type DoorResults,
  type ResultsFile,
} from '../../../scripts/docs-numbers/results.js';
import { strayFigures } from '../../../scripts/docs-numbers/stray-figures.js';

const root = join(import.meta.dirname, '..', '..', '..');
const documents = regenerateAll(root);
const work = mkdtempSync(join(tmpdir(), 'tscuda-numbers-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function metric(name: string, tscuda: number, floor: number, goal = 1.1): MetricResult {
  return {
    name,
    unit: 'us',
    better: 'lower',
    tscuda,
    c: null,
    floor,
    cupy: null,
    torch: null,
    cudaPython: null,
    goal: { kind: 'floor-max', value: goal },
  };
}

function benchRun(metrics: MetricResult[]): BenchFile {
  const data: BenchResults = {
    gpu: 'Test GPU',
    driver: '580',
    cuda: '13.0',
    commit: 'abcdef0123',
    date: '2026-12-01T00:00:00.000Z',
    metrics,
  };
  return { file: 'test-gpu-20261201.json', data };
}

describe('the committed docs against the committed results', { timeout: 20_000 }, () => {
  it('hold the generated blocks: the README, the bench guide, serving, scale-out, several GPUs, orchestration', () => {
    const names = (file: string): string[] =>
      findBlocks(documents.find((d) => d.file === file)?.committed ?? '', file).map((b) => b.name);
    expect(names('README.md')).toContain('readme-performance');
    expect(names('docs/benchmarks.md')).toEqual(
      expect.arrayContaining(['bench-hosts', 'bench-multi-gpu', 'bench-per-call', 'serve-results', 'queue-results']),
    );
    expect(names('docs/serving.md')).toContain('serve-throughput');
    expect(names('docs/scale-out.md')).toContain('queue-throughput');
    expect(names('docs/several-gpus.md')).toContain('bench-multi-gpu');
    expect(names('docs/orchestration.md')).toContain('bench-multi-gpu-collectives');
  });

  it('use every generator somewhere (none is left to rot)', () => {
    const used = new Set(documents.flatMap((d) => findBlocks(d.committed, d.file).map((b) => b.name)));
    expect(Object.keys(GENERATORS).filter((name) => !used.has(name))).toEqual([]);
  });

  it('regenerate to exactly what is committed (npm run docs:numbers rewrites a stale one)', () => {
    const stale = documents.filter((d) => d.regenerated !== d.committed).map((d) => d.file);
    expect(stale).toEqual([]);
  });

  it('type no measured figure by hand outside a generated block', () => {
    const stray = documents
      .flatMap((d) => strayFigures(d.committed, d.file))
      .map((s) => `${s.file}:${s.line}: ${s.figure}`);
    expect(stray).toEqual([]);
  });

  it('catch a figure edited inside a block', () => {
    const readme = documents.find((d) => d.file === 'README.md');
    expect(readme).toBeDefined();
    const text = readme!.committed;
    const start = text.indexOf('<!-- numbers:readme-performance -->');
    expect(start).toBeGreaterThan(0);
    const edited = text.slice(0, start) + text.slice(start).replace(/\| (\d+\.\d+) \|/, '| 9$1 |');
    expect(edited).not.toBe(readme!.committed);
    expect(regenerate(edited, 'README.md', readCatalog(root))).toBe(readme!.committed);
  });
});

describe('generated verdicts are the results file verdicts', () => {
  it('the verdicts recomputed for the docs (meetsGoal) agree with the ones each quoted file stores', () => {
    const catalog = readCatalog(root);
    const disagree = [...catalog.bench, ...catalog.multiGpu].flatMap((f) =>
      f.data.metrics
        .filter((m) => 'met' in m && (m as { met?: boolean | null }).met !== meetsGoal(m))
        .map((m) => `${f.file}: ${m.name}`),
    );
    expect(disagree).toEqual([]);
  });

  it('a per-call ratio that prints as 1.10× but exceeds the 1.1× goal is listed as missed', () => {
    const sentence = perCallSentence(
      benchRun([metric('launch_empty_us', 3.94, 3.86), metric('launch_4args_us', 4.305, 3.9)]),
    );
    expect(sentence).toContain('met by `launch_empty_us` 1.02×');
    expect(sentence).toContain('missed by `launch_4args_us` 1.10×');
    expect(sentence.indexOf('launch_4args_us')).toBeGreaterThan(sentence.indexOf('missed'));
  });

  it('says when nothing missed, and when the goal was not measured', () => {
    expect(perCallSentence(benchRun([metric('event_record_us', 0.18, 0.178)]))).toContain('missed by none');
    expect(perCallSentence(undefined)).toContain('not measured yet');
  });
});

describe('the serve and queue throughput sections', () => {
  const door = (metrics: DoorResults['metrics'], extra: object = {}): ResultsFile<DoorResults> => ({
    file: 'serve-test-gpu-20261201.json',
    data: { date: '2026-12-01T00:00:00.000Z', device: 'Test GPU', metrics, ...extra },
  });

  it('without a run that measured floors, one line: not measured yet on this tree', () => {
    const text = throughputSection(
      [door([{ name: 'serve_stft_rps', unit: 'req/s', tscuda: 2000, python: 600 }])],
      SERVE_DOOR,
      '../bench/results',
    );
    expect(text).toMatch(/^Not measured yet on this tree: .*serve-\*\.json.*npm run docs:numbers/);
    expect(text.split('\n')).toHaveLength(1);
  });

  it('metrics with a floor: tscuda, floor, their ratio and GPU busy per row', () => {
    const text = throughputSection(
      [
        door([
          {
            name: 'queue_jobs_per_s_1w',
            unit: 'jobs/s',
            tscuda: 800,
            floor: 1000,
            gpuBusy: 0.25,
            goal: '>= 0.8x floor',
            met: true,
          },
        ]),
      ],
      QUEUE_DOOR,
      '../bench/results',
    );
    expect(text).toContain('| queue_jobs_per_s_1w | jobs/s | 800 | 1000 | 0.80× | 0.250 | >= 0.8x floor | yes |');
    expect(text).toContain('[serve-test-gpu-20261201.md](../bench/results/serve-test-gpu-20261201.md)');
  });

  it('serve floor rows: requests per second against the node:http floor, with the process count', () => {
    const rows = [
      {
        name: 'small f32',
        workers: 2,
        defaultWorkers: true,
        concurrency: 64,
        tscuda: { rps: 6000, gpuBusy: 0.03, cpuMsPerRequest: 0.5, eventLoopLagP99Ms: 12 },
        floor: { rps: 24000, cpuMsPerRequest: 0.12 },
        goal: { value: 0.8 },
        met: false,
      },
    ];
    const goals = [
      { goal: 'default >= 0.8 x best floor', row: 'small f32', tscuda: 6000, floor: 30000, ratio: 0.2, met: false },
    ];
    const text = throughputSection([door([], { floors: { rows, goals } })], SERVE_DOOR, '../bench/results');
    expect(text).toContain(
      '| small f32 | 2 (default) | 64 | 6000 | 24000 | 0.25× | 0.0300 | 0.500 | 0.120 | 12.0 | ≥ 0.8× floor | no |',
    );
    expect(text).toContain('| default >= 0.8 x best floor | small f32 | 6000 | 30000 | 0.20× | no |');
  });

  it('the heading names the Node line, or says the run did not record it', () => {
    const metric = { name: 'queue_jobs_per_s_1w', unit: 'jobs/s', tscuda: 800, floor: 1000 };
    const serve = throughputSection([door([metric], { node: 'v22.23.5' })], SERVE_DOOR, '../bench/results');
    expect(serve.split('\n')[0]).toMatch(/^Test GPU, Node v22\.23\.5, 2026-12-01: /);
    const queue = throughputSection([door([metric], { node: 'v26.12.1' })], QUEUE_DOOR, '../bench/results');
    expect(queue.split('\n')[0]).toMatch(/^Test GPU, Node v26\.12\.1, 2026-12-01: /);
    // The doors' costs differ much between lines: a run that did not record its line says so.
    const unrecorded = throughputSection([door([metric])], QUEUE_DOOR, '../bench/results');
    expect(unrecorded.split('\n')[0]).toMatch(/^Test GPU, Node line not recorded, 2026-12-01: /);
  });
});

describe('markers', () => {
  const doc = 'intro 1.0\n<!-- numbers:x -->\nold 16.6 Gsamples/s\n<!-- /numbers -->\noutro\n';

  it('rewrite only the text between them', () => {
    expect(replaceBlocks(doc, 'd.md', () => 'new')).toBe(
      'intro 1.0\n<!-- numbers:x -->\nnew\n<!-- /numbers -->\noutro\n',
    );
  });

  it('refuse a block never closed, a close without an open, a nested open and a malformed name', () => {
    expect(() => findBlocks('<!-- numbers:a -->\ntext\n', 'd.md')).toThrow(/d\.md:1: numbers:a is never closed/);
    expect(() => findBlocks('<!-- /numbers -->\n', 'd.md')).toThrow(NumbersBlockError);
    expect(() => findBlocks('<!-- numbers:a -->\n<!-- numbers:b -->\n', 'd.md')).toThrow(/opens inside numbers:a/);
    expect(() => findBlocks('<!-- numbers:Bad Name -->\n', 'd.md')).toThrow(/malformed marker/);
  });

  it('an unknown generator is refused with the known names', () => {
    expect(() =>
      regenerate('<!-- numbers:nope -->\n<!-- /numbers -->\n', 'docs/x.md', {
        bench: [],
        rowRuns: [],
        multiGpu: [],
        serve: [],
        queue: [],
        demo: undefined,
      }),
    ).toThrow(/no generator named numbers:nope \(known: bench-hosts/);
  });
});

describe('figures typed by hand', () => {
  it('are found in prose: units of measurement, ratios and fractions to two decimals', () => {
    const text =
      'The job ran at 16.6 Gsamples/s, 1.45x one GPU and 0.94 of the bound; 391 GB/s; 0.249 µs; 700-970 jobs/s; p99 56 ms; 97.4% of it.\n';
    expect(strayFigures(text, 'd.md').map((s) => s.figure)).toEqual([
      '16.6 Gsamples/s',
      '1.45x',
      '0.94 of',
      '391 GB/s',
      '0.249 µs',
      '700-970 jobs/s',
      'p99 56 ms',
      '97.4%',
    ]);
  });

  it('are allowed as goals, in code, in comments and in generated blocks', () => {
    const text = [
      'Within ≤ 1.10× of the floor, >= 0.80 of the bound, at least 2000 items/s, p99 <= 10 ms.',
      '`stft_job: 16.6 Gsamples/s`',
      '```',
      '16.6 Gsamples/s',
      '```',
      '<!-- 1.45x -->',
      '<!-- numbers:x -->',
      '| 1.45× | 391 GB/s |',
      '<!-- /numbers -->',
    ].join('\n');
    expect(strayFigures(text, 'd.md')).toEqual([]);
  });
});

describe('the results catalog', () => {
  it('quotes whole runs only, newest first: partial, landed-tree, fake and simulated runs stay out', () => {
    const dir = join(work, 'results');
    rmSync(dir, { recursive: true, force: true });
    const run = (date: string, only: string | null): string =>
      JSON.stringify({ ...benchRun([]).data, date, settings: { only } });
    const files: Record<string, string> = {
      'test-gpu-20261201.json': run('2026-12-01T00:00:00Z', null),
      'test-gpu-20261202.json': run('2026-12-02T00:00:00Z', null),
      'test-gpu-20261203-partial.json': run('2026-12-03T00:00:00Z', 'launch'),
      'test-gpu-20261204.json': run('2026-12-04T00:00:00Z', 'launch'),
      'serve-test-gpu-20261204-landed-0123abc.json': JSON.stringify({ date: '2026-12-04T00:00:00Z', metrics: [] }),
      'queue-test-gpu-20261204.json': JSON.stringify({ date: '2026-12-04T00:00:00Z', fake: true, metrics: [] }),
      'serve-sim-vm-20261204.json': JSON.stringify({ date: '2026-12-04T00:00:00Z', mode: 'sim', metrics: [] }),
      'probe-x.json': JSON.stringify({ rounds: [] }),
    };
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const catalog = readResults(dir);
    expect(catalog.bench.map((f) => f.file)).toEqual(['test-gpu-20261202.json', 'test-gpu-20261201.json']);
    // Blocks of a few rows may quote an --only run of those rows, never a landed tree's.
    expect(catalog.rowRuns.map((f) => f.file)).toEqual([
      'test-gpu-20261204.json',
      'test-gpu-20261203-partial.json',
      'test-gpu-20261202.json',
      'test-gpu-20261201.json',
    ]);
    expect(catalog.serve).toEqual([]);
    expect(catalog.queue).toEqual([]);
  });

  it('finds the newest run that measured every row a block quotes', () => {
    const withRows = (file: string, names: string[]): BenchFile => {
      const base = benchRun(names.map((name) => metric(name, 1, 1)));
      return { ...base, file };
    };
    const runs = [
      withRows('c.json', ['a']),
      withRows('b-partial.json', ['a', 'b']),
      withRows('a.json', ['a', 'b', 'c']),
    ];
    expect(newestWithRows(runs, ['a', 'b'])?.file).toBe('b-partial.json');
    expect(newestWithRows(runs, ['c'])?.file).toBe('a.json');
    expect(newestWithRows(runs, ['d'])).toBeUndefined();
  });

  it('refuses a results file that is not JSON or has no date, naming it', () => {
    const dir = join(work, 'bad');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'x.json'), '{');
    expect(() => readResults(dir)).toThrow(/bench\/results\/x\.json: not readable JSON/);
    writeFileSync(join(dir, 'x.json'), JSON.stringify({ date: 'soon', metrics: [] }));
    expect(() => readResults(dir)).toThrow(/x\.json: "date" is not a date/);
  });
});
