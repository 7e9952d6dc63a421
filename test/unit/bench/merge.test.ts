import { describe, expect, it } from 'vitest';
import { mergeMetrics, peerStatuses, type TscudaMetricRun } from '../../../bench/harness/merge.js';
import { METRICS, metricSpec } from '../../../bench/harness/metrics.js';
import { addPass, findPeerLine, parsePeerLine, peerOutcome, type PeerOutcome } from '../../../bench/harness/peers.js';
import { combinePasses, quantile, summarize } from '../../../bench/harness/stats.js';

const line = (o: unknown): string => JSON.stringify(o);

function ok(stdout: string, stderr = ''): PeerOutcome {
  return peerOutcome('c', { exitCode: 0, stdout, stderr });
}

describe('peer protocol', () => {
  it('parses a line with metrics, notes and errors', () => {
    const p = parsePeerLine(
      line({
        peer: 'cupy',
        available: true,
        version: 'cupy 13',
        metrics: { launch_empty_us: { median: 5.2, spread: 0.1, samples: 15, note: 'RawKernel' } },
        errors: { fft_c2c_4096x8192_ms: 'CUFFT_ALLOC_FAILED' },
      }),
    );
    expect(p.peer).toBe('cupy');
    expect(p.metrics.launch_empty_us).toEqual({ median: 5.2, spread: 0.1, samples: 15, note: 'RawKernel' });
    expect(p.errors).toEqual({ fft_c2c_4096x8192_ms: 'CUFFT_ALLOC_FAILED' });
  });

  it('moves a malformed metric to errors instead of dropping the line', () => {
    const p = parsePeerLine(
      line({ peer: 'c', available: true, metrics: { a: { median: 'x' }, b: { median: 1, spread: 0, samples: 3 } } }),
    );
    expect(Object.keys(p.metrics)).toEqual(['b']);
    expect(p.errors.a).toMatch(/median/);
  });

  it('finds the last protocol line among stray output', () => {
    const stdout = ['loading...', '{"not":"a peer"}', line({ peer: 'torch', available: true, metrics: {} }), ''].join(
      '\n',
    );
    expect(findPeerLine(stdout, 'torch').peer).toBe('torch');
    expect(() => findPeerLine(stdout, 'cupy')).toThrow(/torch/);
    expect(() => findPeerLine('nothing here', 'c')).toThrow(/no JSON line/);
  });

  it('reports available:false as absent, with the reason', () => {
    const o = peerOutcome('cupy', {
      exitCode: 0,
      stdout: line({ peer: 'cupy', available: false, reason: "No module named 'cupy'" }),
      stderr: '',
    });
    expect(o.status).toBe('absent');
    expect(o.reason).toBe("No module named 'cupy'");
  });

  it('reports a crash as failed with the tail of stderr', () => {
    const stderr = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n') + '\nSegmentation fault';
    const o = peerOutcome('torch', { exitCode: 139, stdout: '', stderr });
    expect(o.status).toBe('failed');
    expect(o.reason).toMatch(/exited with status 139/);
    expect(o.reason).toMatch(/Segmentation fault/);
    expect(o.reason).not.toMatch(/line 3\n/);
    expect(peerOutcome('torch', { exitCode: undefined, stdout: '', stderr: '', timedOut: true }).reason).toMatch(
      /timed out/,
    );
    expect(
      peerOutcome('torch', { exitCode: undefined, stdout: '', stderr: 'x', failure: 'killed by SIGKILL' }).reason,
    ).toMatch(/SIGKILL/);
  });

  it('keeps both passes of the native program', () => {
    const a = ok(
      line({ peer: 'c', available: true, metrics: { launch_empty_us: { median: 3, spread: 0.02, samples: 15 } } }),
    );
    const b = ok(
      line({ peer: 'c', available: true, metrics: { launch_empty_us: { median: 3.2, spread: 0.02, samples: 15 } } }),
    );
    const both = addPass(a, b);
    expect(both.passes).toHaveLength(2);
    const failed = addPass(a, peerOutcome('c', { exitCode: 1, stdout: '', stderr: 'boom' }));
    expect(failed.passes).toHaveLength(1);
    expect(failed.status).toBe('ok');
    expect(failed.errors['(pass)']).toMatch(/failed/);
  });
});

describe('statistics', () => {
  it('interpolates quantiles as numpy and bench.cu do', () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([10, 20, 30, 40, 50], 0.1)).toBeCloseTo(14);
    expect(quantile([7], 0.9)).toBe(7);
    expect(Number.isNaN(quantile([], 0.5))).toBe(true);
    expect(summarize([5, 1, 3])).toEqual({
      median: 3,
      spread: (quantile([1, 3, 5], 0.9) - quantile([1, 3, 5], 0.1)) / 3,
      samples: 3,
    });
  });

  it('combines passes: median of medians, ± the larger of in-pass and between-pass spread', () => {
    const c = combinePasses([
      { median: 3, spread: 0.02, samples: 15 },
      { median: 3.2, spread: 0.02, samples: 15 },
    ])!;
    expect(c.value).toBeCloseTo(3.1);
    expect(c.spread).toBeCloseTo(0.1); // between passes: (3.2 - 3) / 2 beats 0.02 * 3.2 / 2
    expect(c.samples).toBe(30);
    const one = combinePasses([{ median: 10, spread: 0.2, samples: 5 }])!;
    expect(one.spread).toBeCloseTo(1);
    expect(combinePasses([])).toBeNull();
  });
});

describe('merging into report rows', () => {
  const specs = [
    'launch_empty_us',
    'launch_sync_roundtrip_us',
    'await_completion_us',
    'h2d_pinned_gbps',
    'graph_replay_per_kernel_us',
    'batcher_items_per_s',
  ].map(metricSpec);
  const cPass1 = line({
    peer: 'c',
    available: true,
    version: 'driver 13.0',
    metrics: {
      launch_empty_us: { median: 3.0, spread: 0.02, samples: 15 },
      launch_sync_roundtrip_us: { median: 10, spread: 0.1, samples: 3000 },
      await_completion_us: { median: 8, spread: 0.1, samples: 3000 },
      h2d_pinned_gbps: { median: 55, spread: 0.01, samples: 15 },
      graph_replay_per_kernel_us: { median: 1.0, spread: 0.05, samples: 15 },
    },
  });
  const cPass2 = line({
    peer: 'c',
    available: true,
    metrics: { launch_empty_us: { median: 3.2, spread: 0.02, samples: 15 } },
  });
  const peers = {
    c: addPass(ok(cPass1), ok(cPass2)),
    cupy: peerOutcome('cupy', {
      exitCode: 0,
      stdout: line({ peer: 'cupy', available: false, reason: 'no cupy' }),
      stderr: '',
    }),
    torch: peerOutcome('torch', {
      exitCode: 0,
      stdout: line({
        peer: 'torch',
        available: true,
        metrics: { launch_empty_us: { median: 7, spread: 0.1, samples: 15, note: 'torch note' } },
        errors: { h2d_pinned_gbps: 'OOM' },
      }),
      stderr: '',
    }),
    cudaPython: peerOutcome('cudaPython', { exitCode: 1, stdout: '', stderr: 'Traceback\nImportError: x' }),
  };
  const tscuda: Record<string, TscudaMetricRun> = {
    launch_empty_us: {
      passes: [
        { median: 3.2, spread: 0.02, samples: 15 },
        { median: 3.4, spread: 0.02, samples: 15 },
      ],
      notes: [],
      floorPasses: [
        { median: 3.1, spread: 0.02, samples: 15 },
        { median: 3.2, spread: 0.02, samples: 15 },
      ],
    },
    await_completion_us: { passes: [{ median: 9, spread: 0.1, samples: 3000 }], notes: ['launch + await'] },
    h2d_pinned_gbps: { passes: [{ median: 54, spread: 0.01, samples: 15 }], notes: [] },
    graph_replay_per_kernel_us: {
      passes: [],
      notes: [],
      notMeasured: 'src/runtime/graph.ts is not in this checkout yet',
    },
    batcher_items_per_s: { passes: [{ median: 3e6, spread: 0.05, samples: 5 }], notes: [] },
  };
  const rows = mergeMetrics(specs, peers, tscuda);
  const row = (name: string) => rows.find((r) => r.name === name)!;

  it('keeps catalogue order and fills every column', () => {
    expect(rows.map((r) => r.name)).toEqual(specs.map((s) => s.name));
    const launch = row('launch_empty_us');
    expect(launch.c).toBeCloseTo(3.1);
    expect(launch.tscuda).toBeCloseTo(3.3);
    expect(launch.torch).toBe(7);
    expect(launch.ratio).toBeCloseTo(3.3 / 3.1, 3);
    // Issue 26: the floor is the median of its passes, and the goal is tscuda / floor <= 1.1.
    expect(launch.floor).toBeCloseTo(3.15);
    expect(launch.floorRatio).toBeCloseTo(3.3 / 3.15, 3);
    expect(launch.met).toBe(true);
    expect(row('await_completion_us').floor).toBeUndefined();
    expect(row('await_completion_us').met).toBeNull();
    expect(launch.samples).toEqual({ tscuda: 30, c: 30 });
    expect(launch.spread?.c).toBeCloseTo(0.1);
    expect(launch.unit).toBe('us');
    expect(launch.better).toBe('lower');
    expect(launch.goal).toEqual({ kind: 'floor-max', value: 1.1 });
  });

  it('gives absent, failed and missing peers null, never 0', () => {
    for (const r of rows) {
      expect(r.cupy, r.name).toBeNull();
      expect(r.cudaPython, r.name).toBeNull();
    }
    expect(row('h2d_pinned_gbps').torch).toBeNull();
    expect(row('h2d_pinned_gbps').notes).toContain('PyTorch: failed: OOM');
    expect(row('launch_empty_us').notes).toContain('PyTorch: torch note');
    expect(row('batcher_items_per_s').c).toBeNull();
  });

  it('leaves a metric tscuda could not measure null, with the reason, and its verdict unknown', () => {
    const g = row('graph_replay_per_kernel_us');
    expect(g.tscuda).toBeNull();
    expect(g.ratio).toBeNull();
    expect(g.met).toBeNull();
    expect(g.notes[0]).toBe('tscuda: not measured: src/runtime/graph.ts is not in this checkout yet');
    const sync = row('launch_sync_roundtrip_us');
    expect(sync.tscuda).toBeNull();
    expect(sync.notes[0]).toMatch(/not run/);
  });

  it('judges higher-is-better and absolute goals', () => {
    expect(row('h2d_pinned_gbps').met).toBe(true); // 54 / 55 = 0.98 >= 0.97
    expect(row('batcher_items_per_s').met).toBe(true);
    expect(row('batcher_items_per_s').ratio).toBeNull();
  });

  it("notes the await ratio against C's launch + cuStreamSynchronize too", () => {
    const a = row('await_completion_us');
    expect(a.ratio).toBeCloseTo(9 / 8, 3);
    expect(a.notes.some((n) => n.includes('launch_sync_roundtrip_us') && n.includes('0.90×'))).toBe(true);
  });

  it('summarizes peer statuses, null-safe for peers never run', () => {
    const s = peerStatuses({ c: peers.c, cupy: peers.cupy });
    expect(s.c.status).toBe('ok');
    expect(s.c.version).toBe('driver 13.0');
    expect(s.cupy).toEqual({ status: 'absent', reason: 'no cupy' });
    expect(s.torch).toEqual({ status: 'skipped', reason: 'not run' });
  });

  it('covers every catalogue metric without crashing when nothing ran', () => {
    const empty = mergeMetrics(METRICS, {}, {});
    expect(empty).toHaveLength(METRICS.length);
    for (const r of empty) {
      expect(r.tscuda).toBeNull();
      expect(r.c).toBeNull();
      expect(r.met).toBeNull();
    }
  });
});
