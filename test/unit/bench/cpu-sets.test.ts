import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { describeCpus, planCpuSets, readTopology, type LogicalCpu } from '../../../bench/queue/cpu-sets.js';

/** A host of `cores` cores with two hardware threads each, numbered as Linux does (siblings cpu and cpu + cores). */
function smtHost(cores: number): LogicalCpu[] {
  return Array.from({ length: 2 * cores }, (_, cpu) => ({ cpu, core: `0:${cpu % cores}` }));
}

describe('queue bench --pin CPU sets', () => {
  it('gives each worker whole physical cores (both hardware threads) and the rest everything else', () => {
    const plan = planCpuSets(smtHost(16), 2, 2)!;
    expect(plan.workers).toEqual([
      [12, 13, 28, 29],
      [14, 15, 30, 31],
    ]);
    expect(describeCpus(plan.rest)).toBe('0-11,16-27');
    const all = [...plan.rest, ...plan.workers.flat()].sort((a, b) => a - b);
    expect(all).toEqual(Array.from({ length: 32 }, (_, i) => i));
  });

  it('works on hosts without SMT and refuses a plan that leaves the rest fewer cores than the workers', () => {
    const flat = Array.from({ length: 8 }, (_, cpu) => ({ cpu, core: `0:${cpu}` }));
    expect(planCpuSets(flat, 2, 2)).toEqual({
      workers: [
        [4, 5],
        [6, 7],
      ],
      rest: [0, 1, 2, 3],
    });
    expect(planCpuSets(flat, 2, 3)).toBeUndefined();
    expect(planCpuSets(flat, 0, 1)).toBeUndefined();
  });

  it('reads this host: every online CPU once, with its core', () => {
    const cpus = readTopology();
    // Undefined only where sysfs does not tell (not Linux, or a container that hides the topology).
    if (cpus === undefined) return expect(existsSync('/sys/devices/system/cpu/cpu0/topology/core_id')).toBe(false);
    expect(new Set(cpus.map((c) => c.cpu)).size).toBe(cpus.length);
    for (const c of cpus) expect(c.core).toMatch(/^\d+:\d+$/);
  });
});
