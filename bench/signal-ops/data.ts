/**
 * The folder through which tscuda's side hands each row's job to the Python peers: the shared input,
 * one manifest per row (`<id>.json`: sizes, the job's parameters, the peer tolerance) and, where
 * tscuda's output passed its own check, that output, which the peers must equal. Raw little-endian
 * row-major arrays. One folder per harness process, removed once the peers have run.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RowOutputDType } from './row.js';

/** The shared input's file name in the folder. */
export const INPUT_FILE = 'input-f32.bin';

/** What the peers read for one row (bench/peers/signal_ops_peer.py reads exactly these fields). */
export interface RowManifest {
  id: string;
  /** The row's time metric, the name the peers report under. */
  metric: string;
  job: string;
  batch: number;
  length: number;
  /** The input file (float32, batch × length). */
  input: string;
  /** tscuda's output file, or null where tscuda's side failed (the peers then check against scipy on the CPU). */
  output: string | null;
  outputDtype: RowOutputDType;
  outputShape: readonly [number, number];
  /** Relative L2 (worst series) within which a peer's output must equal tscuda's. */
  tolerance: number;
  /** The row's parameters (taps, sections, rates). */
  params: Record<string, unknown>;
}

/** This process's folder (created on first use). */
export function signalOpsDataDir(): string {
  const dir = join(tmpdir(), `tscuda-signal-ops-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Writes `bytes` as `name` in the folder, unless a file of that name is there already (the shared input). */
export function writeDataFile(name: string, bytes: ArrayBufferView, once = false): string {
  if (!/^[\w.-]+$/.test(name)) throw new Error(`signal-ops data file name ${JSON.stringify(name)} is not [\\w.-]+`);
  const path = join(signalOpsDataDir(), name);
  if (!(once && existsSync(path)))
    writeFileSync(path, new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  return name;
}

/** Writes a row's manifest. */
export function writeManifest(manifest: RowManifest): void {
  writeFileSync(join(signalOpsDataDir(), `${manifest.id}.json`), JSON.stringify(manifest));
}

/** Removes this process's folder and everything in it. */
export function removeSignalOpsData(): void {
  rmSync(join(tmpdir(), `tscuda-signal-ops-${process.pid}`), { recursive: true, force: true });
}
