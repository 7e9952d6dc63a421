/**
 * `--pin` of the queue bench: each worker process on physical cores of its own (every hardware
 * thread of them), everything else (the bench, its clients and Redis servers) on the rest. Two
 * workers on two hosts share no CPU with each other or with the clients; on one host they do, and
 * a worker's CPU per job rose from 1.47 to 1.96 ms once a second one ran beside it (docs/scale-out.md).
 * Pinning takes that sharing out of the measurement, as separate hosts would. Linux only (sysfs
 * topology, taskset from util-linux).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** A logical CPU and the physical core it is a hardware thread of (`package:core`). */
export interface LogicalCpu {
  cpu: number;
  core: string;
}

/** The CPU sets of a pinned run: one per worker, and the rest. */
export interface CpuPlan {
  workers: number[][];
  rest: number[];
}

/** This host's logical CPUs (online ones, from sysfs), or undefined where sysfs does not tell. */
export function readTopology(root = '/sys/devices/system/cpu'): LogicalCpu[] | undefined {
  try {
    const cpus: LogicalCpu[] = [];
    for (const name of readdirSync(root)) {
      const m = /^cpu(\d+)$/.exec(name);
      if (!m) continue;
      const read = (file: string): string => readFileSync(`${root}/${name}/topology/${file}`, 'utf8').trim();
      let online = '1';
      try {
        online = readFileSync(`${root}/${name}/online`, 'utf8').trim();
      } catch {
        // cpu0 often has no `online` file: it is always online.
      }
      if (online !== '1') continue;
      cpus.push({ cpu: Number(m[1]), core: `${read('physical_package_id')}:${read('core_id')}` });
    }
    return cpus.length > 0 ? cpus.sort((a, b) => a.cpu - b.cpu) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `workers` sets of `coresPerWorker` physical cores each (the last cores of the host, every
 * hardware thread of them) and the rest; undefined when that would leave the rest fewer cores than
 * the workers take together.
 */
export function planCpuSets(cpus: readonly LogicalCpu[], workers: number, coresPerWorker: number): CpuPlan | undefined {
  const cores = new Map<string, number[]>();
  for (const { cpu, core } of cpus) cores.set(core, [...(cores.get(core) ?? []), cpu]);
  const ordered = [...cores.values()].sort((a, b) => Math.min(...a) - Math.min(...b));
  const taken = workers * coresPerWorker;
  if (workers < 1 || coresPerWorker < 1 || ordered.length - taken < taken) return undefined;
  const restCores = ordered.slice(0, ordered.length - taken);
  const workerSets = Array.from({ length: workers }, (_, i) =>
    ordered
      .slice(restCores.length + i * coresPerWorker, restCores.length + (i + 1) * coresPerWorker)
      .flat()
      .sort((a, b) => a - b),
  );
  return { workers: workerSets, rest: restCores.flat().sort((a, b) => a - b) };
}

/** Moves every thread of process `pid` onto `cpus` (`taskset -a -p -c`): threads it starts later inherit the set. */
export function pinProcess(pid: number, cpus: readonly number[]): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpus.join(','), String(pid)], { stdio: 'ignore' });
}

/** A CPU set as a short list (`0-11,16-27`). */
export function describeCpus(cpus: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < cpus.length;) {
    let j = i;
    while (j + 1 < cpus.length && cpus[j + 1] === cpus[j]! + 1) j++;
    parts.push(j === i ? `${cpus[i]}` : `${cpus[i]}-${cpus[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}
