import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_ITERS, DEFAULT_REPS, DEFAULT_ROUNDS, parseArgs, UsageError } from '../../../bench/harness/args.js';
import { startLagProbe } from '../../../bench/harness/lag.js';
import { mergeMetrics, peerStatuses, type BenchRun } from '../../../bench/harness/merge.js';
import { METRICS } from '../../../bench/harness/metrics.js';
import { resultsBaseName, resultsPaths, yyyymmdd } from '../../../bench/harness/naming.js';
import { fullMarkdown, textSummary, writeResults } from '../../../bench/harness/output.js';
import { peerOutcome } from '../../../bench/harness/peers.js';

describe('results file naming', () => {
  it('is <gpu-slug>-<yyyymmdd> in UTC', () => {
    expect(resultsBaseName('NVIDIA H100 80GB HBM3', new Date('2026-11-22T23:30:00Z'))).toBe(
      'nvidia-h100-80gb-hbm3-20261122',
    );
    expect(yyyymmdd(new Date('2027-01-05T00:00:00Z'))).toBe('20270105');
    expect(resultsBaseName('', new Date('2026-03-01T12:00:00Z'))).toBe('unknown-gpu-20260301');
  });

  it('marks --only runs partial so they never overwrite a full run', () => {
    expect(resultsBaseName('NVIDIA H100 PCIe', new Date('2026-11-22T10:00:00Z'), true)).toBe(
      'nvidia-h100-pcie-20261122-partial',
    );
  });

  it('puts .json, .md and .svg side by side', () => {
    const p = resultsPaths(join('bench', 'results'), 'NVIDIA H200', new Date('2026-11-22T10:00:00Z'));
    expect(p).toEqual({
      json: join('bench', 'results', 'nvidia-h200-20261122.json'),
      md: join('bench', 'results', 'nvidia-h200-20261122.md'),
      svg: join('bench', 'results', 'nvidia-h200-20261122.svg'),
    });
  });
});

describe('command-line flags', () => {
  it('has bench.cu defaults', () => {
    const o = parseArgs([]);
    expect(o).toMatchObject({
      only: null,
      json: false,
      reps: DEFAULT_REPS,
      iters: DEFAULT_ITERS,
      rounds: DEFAULT_ROUNDS,
      peers: true,
      native: true,
    });
    expect(DEFAULT_REPS).toBe(15);
    expect(DEFAULT_ITERS).toBe(20000);
  });

  it('parses every flag, with a value after a space or an =', () => {
    const o = parseArgs([
      '--only',
      'launch|event',
      '--json',
      '--reps',
      '5',
      '--iters=1000',
      '--rounds',
      '2',
      '--no-peers',
      '--no-native',
    ]);
    expect(o.only?.test('event_query_us')).toBe(true);
    expect(o.onlySource).toBe('launch|event');
    expect(o).toMatchObject({ json: true, reps: 5, iters: 1000, rounds: 2, peers: false, native: false });
    expect(parseArgs(['--only=fft']).onlySource).toBe('fft');
  });

  it('rejects what it does not understand', () => {
    expect(() => parseArgs(['--reps', '0'])).toThrow(UsageError);
    expect(() => parseArgs(['--reps'])).toThrow(UsageError);
    expect(() => parseArgs(['--only', '('])).toThrow(UsageError);
    expect(() => parseArgs(['--fast'])).toThrow(/unknown option --fast/);
  });
});

function sampleRun(): BenchRun {
  const peers = {
    c: peerOutcome('c', {
      exitCode: 0,
      stdout: JSON.stringify({
        peer: 'c',
        available: true,
        version: 'driver 13.0',
        metrics: { launch_empty_us: { median: 3, spread: 0.02, samples: 15 } },
      }),
      stderr: '',
    }),
    cupy: peerOutcome('cupy', {
      exitCode: 0,
      stdout: JSON.stringify({ peer: 'cupy', available: false, reason: "No module named 'cupy'" }),
      stderr: '',
    }),
  };
  const metrics = mergeMetrics(METRICS, peers, {
    launch_empty_us: { passes: [{ median: 3.2, spread: 0.03, samples: 15 }], notes: [] },
    graph_replay_per_kernel_us: { passes: [], notes: [], notMeasured: 'Graph is not in this checkout yet' },
  });
  return {
    gpu: 'NVIDIA H100 80GB HBM3',
    driver: '570.1',
    cuda: '13.0',
    commit: 'abc',
    date: '2026-11-22T10:00:00.000Z',
    metrics,
    versions: { driverApi: '13.0' },
    peers: peerStatuses(peers),
    tscuda: { status: 'ok' },
    settings: { reps: 15, iters: 20000, rounds: 3, only: null },
    durationS: 123,
  };
}

describe('outputs', () => {
  const dirs: string[] = [];
  const saved = process.env.TSCUDA_BENCH_OUT;
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    if (saved === undefined) delete process.env.TSCUDA_BENCH_OUT;
    else process.env.TSCUDA_BENCH_OUT = saved;
  });

  it('says what was not measured and why, and how each peer fared', () => {
    const text = textSummary(sampleRun());
    expect(text).toMatch(/goals met/);
    expect(text).toContain('graph_replay_per_kernel_us: Graph is not in this checkout yet');
    expect(text).toContain("CuPy: absent (No module named 'cupy')");
    expect(text).toContain('C (driver API): ok (driver 13.0)');
    expect(text).toContain('PyTorch: skipped (not run)');
  });

  it('writes the JSON, markdown and SVG, and copies them to TSCUDA_BENCH_OUT', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-results-'));
    const out = mkdtempSync(join(tmpdir(), 'bench-out-'));
    dirs.push(dir, out);
    process.env.TSCUDA_BENCH_OUT = join(out, 'nested');
    const run = sampleRun();
    const files = writeResults(run, dir, new Date('2026-11-22T10:00:00Z'), false);
    expect(files.json).toBe(join(dir, 'nvidia-h100-80gb-hbm3-20261122.json'));
    const json = JSON.parse(readFileSync(files.json, 'utf8')) as BenchRun;
    expect(json.metrics).toHaveLength(METRICS.length);
    const first = json.metrics[0]!;
    for (const key of ['name', 'unit', 'better', 'tscuda', 'c', 'cupy', 'torch', 'cudaPython', 'goal'])
      expect(first).toHaveProperty(key);
    expect(first.cupy).toBeNull();
    expect(json.gpu).toBe(run.gpu);
    expect(readFileSync(files.md, 'utf8')).toContain('## Notes');
    expect(readFileSync(files.svg, 'utf8')).toMatch(/^<svg/);
    expect(readdirSync(join(out, 'nested')).sort()).toEqual([
      'nvidia-h100-80gb-hbm3-20261122.json',
      'nvidia-h100-80gb-hbm3-20261122.md',
      'nvidia-h100-80gb-hbm3-20261122.svg',
    ]);
  });

  it('puts peers, settings and notes in the markdown', () => {
    const md = fullMarkdown(sampleRun());
    expect(md).toContain('# tscuda benchmarks: NVIDIA H100 80GB HBM3');
    expect(md).toContain('## Peers');
    expect(md).toContain('repetitions 15, loop length 20000');
    expect(md).toContain('- **graph_replay_per_kernel_us**');
  });
});

describe('event-loop lag probe', () => {
  it('samples a 1 ms timer and catches a blocked loop', async () => {
    const probe = startLagProbe(1);
    // Long enough for a few 1 ms ticks even when another test file keeps the second core busy.
    await new Promise((r) => setTimeout(r, 200));
    const t0 = performance.now();
    while (performance.now() - t0 < 40) {
      /* block the loop */
    }
    const lags = probe.stop();
    expect(lags.length).toBeGreaterThan(3);
    expect(Math.max(...lags)).toBeGreaterThan(30);
    expect(probe.stop()).toBe(lags);
  });
});

describe('event-loop lag summary', () => {
  it('reports the p99 of all ticks and how steady the slices were', async () => {
    const { lagPass } = await import('../../../bench/tscuda/pipeline.js');
    const lags = Array.from({ length: 1000 }, (_, i) => (i % 100 === 99 ? 4 : 0.1));
    const p = lagPass(lags);
    expect(p.samples).toBe(1000);
    expect(p.median).toBeGreaterThan(0.1);
    expect(p.median).toBeLessThanOrEqual(4);
    expect(p.spread).toBeGreaterThanOrEqual(0);
    expect(lagPass([2]).median).toBe(2);
    expect(() => lagPass([])).toThrow();
  });
});
