/** The hand-written and generated TypeScript files under a folder (declaration files left out), for the repository's checks. */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Every `.ts` file under `dir`, depth first, `.d.ts` files left out. */
export function listTs(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...listTs(p));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}
