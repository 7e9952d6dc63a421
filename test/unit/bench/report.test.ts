import { describe, expect, it } from 'vitest';
import { toRatioChartSvg } from '../../../bench/report/chart.js';
import { goalSummary, toMarkdown } from '../../../bench/report/markdown.js';
import { gpuSlug } from '../../../bench/report/slug.js';
import { formatTable } from '../../../bench/report/table.js';
import {
  describeGoal,
  formatNumber,
  meetsGoal,
  ratio,
  type BenchResults,
  type Goal,
  type MetricResult,
} from '../../../bench/report/types.js';

/** Balanced tags and escaped text: Node has no DOMParser to do it. */
function assertWellFormedXml(xml: string): void {
  const stack: string[] = [];
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g;
  let last = 0;
  for (const m of xml.matchAll(tag)) {
    expect(xml.slice(last, m.index)).not.toMatch(/<|&(?!(amp|lt|gt|quot|apos|#\d+);)/);
    last = m.index + m[0].length;
    const [, closing, name = '', , selfClosing] = m;
    if (closing) expect(stack.pop()).toBe(name);
    else if (!selfClosing) stack.push(name);
  }
  expect(xml.slice(last).trim()).toBe('');
  expect(stack).toEqual([]);
}

function metric(
  name: string,
  tscuda: number | null,
  c: number | null,
  goal: Goal | null,
  extra: Partial<MetricResult> = {},
): MetricResult {
  return { name, unit: 'µs', better: 'lower', tscuda, c, cupy: null, torch: null, cudaPython: null, goal, ...extra };
}

const results: BenchResults = {
  gpu: 'NVIDIA H100 80GB HBM3',
  driver: '550.54.15',
  cuda: '12.4',
  commit: 'dfbd958',
  date: '2025-01-01',
  metrics: [
    metric(
      'empty launch',
      3.3,
      3.0,
      { kind: 'ratio-max', value: 1.1 },
      { cupy: 5.2, torch: 6.8, cudaPython: 4.1, spread: { tscuda: 0.04 } },
    ),
    metric('4-arg launch', 3.9, 3.4, { kind: 'ratio-max', value: 1.1 }),
    metric('event record', 0.43, 0.3, { kind: 'floor-max', value: 1.1 }, { floor: 0.4 }),
    metric('event query', 0.13, 0.1, { kind: 'floor-max', value: 1.1 }, { floor: 0.1 }),
    metric('pinned H2D', 54.9, 55.2, { kind: 'ratio-min', value: 0.95 }, { unit: 'GB/s', better: 'higher' }),
    metric('cuFFT 1M', 0.21, null, { kind: 'ratio-max', value: 1.05 }),
    metric('STFT | throughput', 812, null, { kind: 'abs-min', value: 700 }, { unit: 'MS/s', better: 'higher' }),
    metric('p99 <wait>', 2.4, null, { kind: 'abs-max', value: 2 }, { unit: 'ms' }),
    metric('no goal', 1, 2, null),
  ],
};

describe('ratio', () => {
  it('is tscuda / c', () => expect(ratio(metric('m', 3, 2, null))).toBe(1.5));
  it('is null when a side is missing, not finite, or c is 0', () => {
    expect(ratio(metric('m', null, 2, null))).toBeNull();
    expect(ratio(metric('m', 2, null, null))).toBeNull();
    expect(ratio(metric('m', 2, 0, null))).toBeNull();
    expect(ratio(metric('m', Number.NaN, 1, null))).toBeNull();
  });
  it('is 0 when tscuda is 0', () => expect(ratio(metric('m', 0, 2, null))).toBe(0));
});

describe('meetsGoal', () => {
  it('holds at the boundary of every kind', () => {
    expect(meetsGoal(metric('m', 11, 10, { kind: 'ratio-max', value: 1.1 }))).toBe(true);
    expect(meetsGoal(metric('m', 12, 10, { kind: 'ratio-max', value: 1.1 }))).toBe(false);
    expect(meetsGoal(metric('m', 9.5, 10, { kind: 'ratio-min', value: 0.95 }))).toBe(true);
    expect(meetsGoal(metric('m', 9, 10, { kind: 'ratio-min', value: 0.95 }))).toBe(false);
    expect(meetsGoal(metric('m', 5, null, { kind: 'abs-max', value: 5 }))).toBe(true);
    expect(meetsGoal(metric('m', 5.01, null, { kind: 'abs-max', value: 5 }))).toBe(false);
    expect(meetsGoal(metric('m', 5, null, { kind: 'abs-min', value: 5 }))).toBe(true);
    expect(meetsGoal(metric('m', 4.99, null, { kind: 'abs-min', value: 5 }))).toBe(false);
  });
  it('is null without a goal or without the values the goal needs', () => {
    expect(meetsGoal(metric('m', 1, 1, null))).toBeNull();
    expect(meetsGoal(metric('m', 1, null, { kind: 'ratio-max', value: 2 }))).toBeNull();
    expect(meetsGoal(metric('m', 1, 0, { kind: 'ratio-max', value: 2 }))).toBeNull();
    expect(meetsGoal(metric('m', null, 1, { kind: 'abs-max', value: 2 }))).toBeNull();
  });
  it('ignores c for absolute goals', () => {
    expect(meetsGoal(metric('m', 1, null, { kind: 'abs-max', value: 2 }))).toBe(true);
  });
});

describe('describeGoal', () => {
  it('names the comparison and the reference', () => {
    expect(describeGoal({ kind: 'ratio-max', value: 1.1 })).toBe('≤ 1.1× C');
    expect(describeGoal({ kind: 'ratio-min', value: 0.95 })).toBe('≥ 0.95× C');
    expect(describeGoal({ kind: 'abs-max', value: 5 }, 'µs')).toBe('≤ 5 µs');
    expect(describeGoal({ kind: 'abs-min', value: 50 })).toBe('≥ 50');
    expect(describeGoal({ kind: 'ratio-max', value: 1.1000000000000001 })).toBe('≤ 1.1× C');
  });
});

describe('formatNumber', () => {
  it('keeps about three significant digits', () => {
    expect(formatNumber(null)).toBe('—');
    expect(formatNumber(0)).toBe('0');
    expect(formatNumber(3.254)).toBe('3.25');
    expect(formatNumber(55.21)).toBe('55.2');
    expect(formatNumber(12345.6)).toBe('12346');
    expect(formatNumber(0.000123)).toBe('0.000123');
  });
});

describe('formatTable', () => {
  const table = formatTable(results);
  const lines = table.trimEnd().split('\n');

  it('has a header, a rule and a row per metric', () => {
    expect(lines).toHaveLength(2 + results.metrics.length);
    for (const h of [
      'metric',
      'C',
      'CuPy',
      'PyTorch',
      'cuda-python',
      'floor',
      'tscuda',
      'tscuda/C',
      'tscuda/floor',
      'goal',
    ])
      expect(lines[0]).toContain(h);
    results.metrics.forEach((m, i) => expect(lines[i + 2]?.startsWith(m.name)).toBe(true));
  });

  it('shows ratio, goal, verdict, spread and dashes for absent values', () => {
    const row = (name: string): string => lines.find((l) => l.startsWith(name)) ?? '';
    expect(row('empty launch')).toMatch(/3\.30 ±0\.04\s+1\.10×\s+—\s+≤ 1\.1× C\s+✓/);
    expect(row('4-arg launch')).toMatch(/1\.15×\s+—\s+≤ 1\.1× C\s+✗/);
    expect(row('cuFFT 1M')).toMatch(/—\s+—\s+≤ 1\.05× C\s+—$/);
    expect(row('no goal')).toMatch(/0\.50×\s+—\s+—\s+—$/);
    // Issue 26: the FFI floor, tscuda's ratio to it and the floor goal; C's ratio stays beside them.
    expect(row('event record')).toMatch(/0\.400\s+0\.430\s+1\.43×\s+1\.07×\s+≤ 1\.1× floor\s+✓/);
    expect(row('event query')).toMatch(/0\.100\s+0\.130\s+1\.30×\s+1\.30×\s+≤ 1\.1× floor\s+✗/);
  });

  it('aligns the columns', () => {
    const rule = lines[1] ?? '';
    const starts = [...rule.matchAll(/-+/g)].map((m) => m.index);
    for (const line of [lines[0], ...lines.slice(2)]) {
      const chars = [...(line ?? '')];
      for (const s of starts.slice(1)) expect(chars[s - 1]).toBe(' ');
    }
  });
});

describe('toMarkdown', () => {
  const md = toMarkdown(results);
  it('has the run header, a row per metric and the goal count', () => {
    for (const v of [results.gpu, results.driver, results.cuda, results.commit, results.date]) expect(md).toContain(v);
    for (const m of results.metrics) expect(md).toContain(m.name.replace('|', '\\|'));
    const rows = md.split('\n').filter((l) => l.startsWith('| '));
    expect(rows).toHaveLength(2 + results.metrics.length);
    expect(goalSummary(results)).toBe('4 of 8 goals met (1 not measured)');
    expect(md).toContain('**4 of 8 goals met (1 not measured)**');
  });
  it('keeps every row at the same number of cells despite a pipe in a name', () => {
    const rows = md.split('\n').filter((l) => l.startsWith('| '));
    const cells = rows.map((r) => r.split(/(?<!\\)\|/).length);
    expect(new Set(cells).size).toBe(1);
  });
});

describe('toRatioChartSvg', () => {
  const svg = toRatioChartSvg(results);
  it('is well-formed and draws a bar per measured ratio-goal metric', () => {
    assertWellFormedXml(svg);
    const bars = [...svg.matchAll(/<rect class="bar"[^>]*fill="([^"]+)"/g)].map((m) => m[1]);
    // Per-call metrics (floor goals, issue 26) are bars of their ratio to the floor: 1.07x met, 1.3x not.
    expect(bars).toHaveLength(5);
    expect(bars).toEqual(['#16a34a', '#dc2626', '#16a34a', '#dc2626', '#16a34a']);
    expect(svg).toContain('event record: 1.07×');
    expect(svg).toContain('not measured');
  });
  it('lists absolute goals as text with value and goal', () => {
    expect(svg).toContain('Absolute goals');
    expect(svg).toContain('STFT | throughput');
    expect(svg).toContain('p99 &lt;wait&gt;');
    expect(svg).toContain('goal ≥ 700 MS/s');
    expect(svg).toContain('2.40 ms');
    expect(svg).not.toContain('no goal<');
  });
  it('caps the axis for an outlier and still renders with no ratio goals', () => {
    const outlier = toRatioChartSvg({
      ...results,
      metrics: [metric('slow', 30, 1, { kind: 'ratio-max', value: 1.1 })],
    });
    assertWellFormedXml(outlier);
    expect(outlier).toContain('30.00×');
    const none = toRatioChartSvg({ ...results, metrics: [] });
    assertWellFormedXml(none);
    expect(none).toContain('no ratio goals');
  });
});

describe('gpuSlug', () => {
  it('makes file-name-safe slugs', () => {
    expect(gpuSlug('NVIDIA H100 80GB HBM3')).toBe('nvidia-h100-80gb-hbm3');
    expect(gpuSlug('  NVIDIA GeForce RTX 4090 (Laptop) ')).toBe('nvidia-geforce-rtx-4090-laptop');
    expect(gpuSlug('Tesla V100-SXM2-16GB')).toBe('tesla-v100-sxm2-16gb');
    expect(gpuSlug('')).toBe('unknown-gpu');
  });
});
