/**
 * CPU time of a server's whole process tree (its primary and every worker it forked), read from
 * /proc, so a serve row can say how many CPU milliseconds each request cost the server, tscuda and
 * the floor alike. Linux only: elsewhere it reads null and the rows say "not measured".
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's utime and stime (USER_HZ: 100 on every Linux that Node runs on). */
const TICKS_PER_S = 100;

/** [pid, ppid, user + system ticks] of one /proc/<pid>/stat, or null when the process is gone. */
function readStat(pid: number): [number, number, number] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: the fields after its last ')' are fixed.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return [pid, Number(fields[1]), Number(fields[11]) + Number(fields[12])];
  } catch {
    return null;
  }
}

/** CPU ms used so far by `root` and every process below it, or null off Linux (no /proc). */
export function treeCpuMs(root: number): number | null {
  let pids: number[];
  try {
    pids = readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return null;
  }
  const children = new Map<number, number[]>();
  const ticks = new Map<number, number>();
  for (const pid of pids) {
    const stat = readStat(pid);
    if (stat === null) continue;
    ticks.set(pid, stat[2]);
    const list = children.get(stat[1]) ?? [];
    list.push(pid);
    children.set(stat[1], list);
  }
  if (!ticks.has(root)) return null;
  let total = 0;
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    total += ticks.get(pid) ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return (total * 1000) / TICKS_PER_S;
}
