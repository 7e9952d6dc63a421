/**
 * The line protocol of the queue's worker and client child processes (the faults test's fixture,
 * the queue bench's children) on their stdout: `ready` once they take work, `completed <job id>`
 * per job a worker finished, and any other line (`done ...`, `cpu ...`) for the caller.
 */
import type { ResultPromise } from 'execa';

/**
 * Follows `child`'s stdout: job ids of `completed` lines go into `completed`, other lines to
 * `onLine`; resolves at `ready`, rejects if the child exits before it.
 */
export function followChildLines(
  child: ResultPromise,
  name: string,
  completed: string[],
  onLine?: (line: string) => void,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let rest = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      rest += chunk.toString();
      const lines = rest.split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        if (line === 'ready') resolve();
        else if (line.startsWith('completed ')) completed.push(line.slice(10));
        else onLine?.(line);
      }
    });
    void child.then((r) =>
      reject(
        new Error(`${name} exited ${String(r.exitCode)} before it was ready${r.stderr ? `: ${String(r.stderr)}` : ''}`),
      ),
    );
  });
}
