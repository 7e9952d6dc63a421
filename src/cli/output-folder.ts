/**
 * The output folder of a command that writes files after GPU work (`demo --out`, `stft --out`),
 * made ready before that work: a path that cannot be a writable folder (under a file, on a
 * read-only file system, without permission) is found out in a moment, not after minutes of GPU
 * time whose results are then lost.
 */
import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { gpuMissingReason } from './gpu-errors.js';
import type { CommandReport } from './report.js';

/** The output folder cannot be used: the message names the option and the path, and says why. */
export class OutputFolderError extends Error {
  override readonly name = 'OutputFolderError';
}

/** Words for the file system's refusal. */
function why(e: unknown): string {
  const code = (e as { code?: unknown }).code;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EROFS') return 'read-only file system';
  if (code === 'ENOTDIR' || code === 'EEXIST') return 'a file is in the way (not a folder)';
  if (code === 'ENOSPC') return 'no space left on the device';
  if (code === 'ENOENT') return 'the file system has no folders there';
  return (e as Error).message;
}

/**
 * mkdir -p, one level at a time: Node's recursive mkdir spins forever where a parent exists but
 * cannot hold children (under /proc, a dangling symbolic link), so a bad --out would hang the command.
 */
function makeFolders(dir: string): void {
  const missing: string[] = [];
  for (let at = dir; !existsSync(at) && dirname(at) !== at; at = dirname(at)) missing.push(at);
  for (const folder of missing.reverse()) {
    try {
      mkdirSync(folder);
    } catch (e) {
      // Made meanwhile by someone else is as good as made here.
      if ((e as { code?: unknown }).code !== 'EEXIST' || !statSync(folder, { throwIfNoEntry: false })?.isDirectory())
        throw e;
    }
  }
}

/**
 * Whether `folder` could be made ready, without making anything: the folder itself if it exists,
 * else its nearest existing parent, must be a folder this process can write. A command asks this
 * before its GPU check (a bad --out is named on any machine) and creates the folder only after it.
 */
export function checkOutputFolder(option: string, folder: string): void {
  let at = resolve(folder);
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  try {
    if (!statSync(at).isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
    accessSync(at, constants.W_OK | constants.X_OK);
  } catch (e) {
    throw new OutputFolderError(`--${option} ${folder}: cannot write there: ${why(e)}`);
  }
}

/** Creates `folder` (and its parents) if need be and checks it is a folder this process can write; returns its absolute path. */
export function prepareOutputFolder(option: string, folder: string): string {
  const dir = resolve(folder);
  try {
    makeFolders(dir);
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (e) {
    throw new OutputFolderError(`--${option} ${folder}: cannot write there: ${why(e)}`);
  }
  return dir;
}

/**
 * The one order of a command that writes files after GPU work (`demo`, `stft`): `--out` checked (a
 * bad one is named on any machine), the GPU and cuFFT asked for, then the folder made (nothing is
 * left behind without a GPU), all before minutes of GPU time. Resolves with the exit code of a
 * failure reported through `report`, or undefined to go on; a bad folder throws OutputFolderError.
 */
export async function outputFolderForGpuWork(
  report: CommandReport,
  folder: string,
  whoNeeds: string,
): Promise<number | undefined> {
  checkOutputFolder('out', folder);
  const missing = await gpuMissingReason(report.command ?? 'tscuda', ['cufft']);
  if (missing !== undefined) return report.fail(`${missing}; ${whoNeeds} a GPU and cuFFT`, 1, 'GpuUnavailable');
  prepareOutputFolder('out', folder);
  return undefined;
}
