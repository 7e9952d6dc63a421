/**
 * The NVRTC disk and memory cache. Entries are keyed by sha256 of everything that decides the
 * image; each image has a JSON sidecar with its size, its sha256 and an HMAC of both under a
 * per-user secret (`.secret`, mode 0600), verified on load. The directory is created with mode
 * 0700 and is not used when another user owns it or others can write it: an entry is never
 * trusted across users, and a tampered or truncated entry is recompiled, never loaded.
 * The cache is capped (TSCUDA_CACHE_MAX_BYTES, default 256 MiB); the least recently used
 * entries go first.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** What a compile produced: 'cubin' (machine code for one `sm_XY`) or 'ptx' (for a `compute_XY` target, JIT-compiled by the driver when loaded). Declared here, below program.ts, because the cache stores it. */
export type ProgramImageKind = 'cubin' | 'ptx';

export interface CacheKeyParts {
  source: string;
  name: string;
  headers: Record<string, string>;
  /** All flags, the architecture included. */
  flags: readonly string[];
  nameExpressions: readonly string[];
  nvrtcVersion: string;
}

/** sha256 (hex) of everything that decides the compiled image. Header order does not matter. */
export function programCacheKey(p: CacheKeyParts): string {
  const headers = Object.keys(p.headers)
    .sort()
    .map((k) => [k, p.headers[k]!]);
  return createHash('sha256')
    .update(
      JSON.stringify({
        v: 1,
        source: p.source,
        name: p.name,
        headers,
        flags: p.flags,
        names: p.nameExpressions,
        nvrtc: p.nvrtcVersion,
      }),
    )
    .digest('hex');
}

/** What the cache holds per key. */
export interface ProgramCacheEntry {
  image: Uint8Array;
  kind: ProgramImageKind;
  log: string;
  /** Name expression → lowered (mangled) name. */
  loweredNames: Record<string, string>;
}

/** Where compiled programs are kept on disk: $TSCUDA_CACHE_DIR, else $XDG_CACHE_HOME/tscuda/nvrtc, else ~/.cache/tscuda/nvrtc. */
export function cacheDirectory(): string {
  const dir = process.env.TSCUDA_CACHE_DIR;
  if (dir) return dir;
  const xdg = process.env.XDG_CACHE_HOME;
  return join(xdg && xdg.startsWith('/') ? xdg : join(homedir(), '.cache'), 'tscuda', 'nvrtc');
}

/** The size cap of the disk cache in bytes: TSCUDA_CACHE_MAX_BYTES, default 256 MiB. */
export function cacheMaxBytes(): number {
  const v = Number(process.env.TSCUDA_CACHE_MAX_BYTES);
  return Number.isSafeInteger(v) && v > 0 ? v : 256 * 1024 * 1024;
}

/**
 * Makes `dir` (mode 0700) and says whether it can be trusted: owned by this user and writable by
 * no one else. An untrusted directory is neither read nor written.
 */
export function trustedCacheDirectory(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = statSync(dir);
    const uid = process.getuid?.();
    if (uid !== undefined && st.uid !== uid) return false;
    if ((st.mode & 0o022) !== 0) {
      // Ours but group- or world-writable: tighten it rather than trust it as it is.
      chmodSync(dir, 0o700);
      if ((statSync(dir).mode & 0o022) !== 0) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/** The per-user secret that authenticates entries (created on first use, mode 0600). */
function cacheSecret(dir: string): Buffer | undefined {
  const path = join(dir, '.secret');
  try {
    const s = readFileSync(path);
    if (s.byteLength === 32) return s;
  } catch {
    /* made below */
  }
  try {
    const s = randomBytes(32);
    const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(tmp, s, { mode: 0o600 });
    renameSync(tmp, path);
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

function mac(secret: Buffer, key: string, kind: string, bytes: number, hash: string): string {
  return createHmac('sha256', secret).update(`${key}\n${kind}\n${bytes}\n${hash}`).digest('hex');
}

const MEMORY_ENTRIES = 256;
/** Compiled images held in memory, most recently used last. */
export const memoryCache = new Map<string, ProgramCacheEntry>();

/** Forgets the compiled programs held in memory (the disk cache stays): the next compile reads the disk. */
export function clearProgramMemoryCache(): void {
  memoryCache.clear();
}

/** Keeps `entry` in the memory cache (bounded: the least recently used goes). */
export function remember(key: string, entry: ProgramCacheEntry): void {
  memoryCache.delete(key);
  memoryCache.set(key, entry);
  if (memoryCache.size > MEMORY_ENTRIES) memoryCache.delete(memoryCache.keys().next().value!);
}

interface Sidecar {
  format: 2;
  kind: ProgramImageKind;
  bytes: number;
  sha256: string;
  /** HMAC-SHA256 of key, kind, bytes and sha256 under the per-user secret. */
  mac: string;
  log: string;
  loweredNames: Record<string, string>;
}

const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

/**
 * Reads `<key>.bin` and its JSON sidecar `<key>.json` from `dir`. Anything missing, unreadable,
 * malformed, of the wrong size or hash, or lacking a lowered name asked for, is no entry: the
 * caller compiles again and overwrites it.
 */
export function readCacheEntry(
  dir: string,
  key: string,
  nameExpressions: readonly string[] = [],
): ProgramCacheEntry | undefined {
  try {
    if (!/^[0-9a-f]{64}$/.test(key) || !trustedCacheDirectory(dir)) return undefined;
    const secret = cacheSecret(dir);
    if (!secret) return undefined;
    const meta = JSON.parse(readFileSync(join(dir, `${key}.json`), 'utf8')) as Partial<Sidecar>;
    if (
      meta.format !== 2 ||
      (meta.kind !== 'cubin' && meta.kind !== 'ptx') ||
      typeof meta.log !== 'string' ||
      typeof meta.sha256 !== 'string'
    )
      return undefined;
    if (
      typeof meta.bytes !== 'number' ||
      typeof meta.mac !== 'string' ||
      meta.mac !== mac(secret, key, meta.kind, meta.bytes, meta.sha256)
    )
      return undefined;
    const names = meta.loweredNames;
    if (typeof names !== 'object' || names === null) return undefined;
    for (const n of nameExpressions) if (typeof names[n] !== 'string' || names[n] === '') return undefined;
    const image = readFileSync(join(dir, `${key}.bin`));
    if (image.byteLength === 0 || image.byteLength !== meta.bytes || sha256(image) !== meta.sha256) return undefined;
    touch(join(dir, `${key}.json`));
    return {
      image: new Uint8Array(image.buffer, image.byteOffset, image.byteLength),
      kind: meta.kind,
      log: meta.log,
      loweredNames: { ...names },
    };
  } catch {
    return undefined;
  }
}

/** Writes an entry atomically (temporary file + rename, image before sidecar). Failing to write only costs a recompile. */
export function writeCacheEntry(
  dir: string,
  key: string,
  entry: ProgramCacheEntry,
  maxBytes = cacheMaxBytes(),
): boolean {
  const tmp = join(dir, `.${key}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    if (!/^[0-9a-f]{64}$/.test(key) || !trustedCacheDirectory(dir)) return false;
    const secret = cacheSecret(dir);
    if (!secret) return false;
    const hash = sha256(entry.image);
    const bytes = entry.image.byteLength;
    const sidecar: Sidecar = {
      format: 2,
      kind: entry.kind,
      bytes,
      sha256: hash,
      mac: mac(secret, key, entry.kind, bytes, hash),
      log: entry.log,
      loweredNames: entry.loweredNames,
    };
    writeFileSync(tmp, entry.image, { mode: 0o600 });
    renameSync(tmp, join(dir, `${key}.bin`));
    writeFileSync(tmp, JSON.stringify(sidecar), { mode: 0o600 });
    renameSync(tmp, join(dir, `${key}.json`));
    evictCache(dir, maxBytes);
    return true;
  } catch {
    try {
      rmSync(tmp, { force: true });
    } catch {
      /* nothing was written */
    }
    return false;
  }
}

function touch(path: string): void {
  try {
    // Sub-millisecond seconds: a Date (whole ms) could date a just-read entry before entries written within the same millisecond.
    const now = (performance.timeOrigin + performance.now()) / 1000;
    utimesSync(path, now, now);
  } catch {
    /* recency is a hint */
  }
}

/** Removes the least recently used entries until the cache holds at most `maxBytes`. Returns the bytes removed. */
export function evictCache(dir: string, maxBytes: number): number {
  let entries: { key: string; bytes: number; used: number }[];
  try {
    entries = readdirSync(dir)
      .filter((f) => /^[0-9a-f]{64}\.json$/.test(f))
      .map((f) => {
        const key = f.slice(0, 64);
        const meta = statSync(join(dir, f));
        let bytes = meta.size;
        try {
          bytes += statSync(join(dir, `${key}.bin`)).size;
        } catch {
          /* sidecar alone */
        }
        return { key, bytes, used: meta.mtimeMs };
      });
  } catch {
    return 0;
  }
  let total = entries.reduce((s, e) => s + e.bytes, 0);
  if (total <= maxBytes) return 0;
  let removed = 0;
  for (const e of entries.sort((a, b) => a.used - b.used)) {
    if (total <= maxBytes) break;
    rmSync(join(dir, `${e.key}.json`), { force: true });
    rmSync(join(dir, `${e.key}.bin`), { force: true });
    total -= e.bytes;
    removed += e.bytes;
  }
  return removed;
}
