/**
 * `npm run docs:numbers`: rewrites the generated blocks (`<!-- numbers:NAME -->` ... `<!-- /numbers -->`)
 * of README.md and docs/ from the committed results under bench/results/, and lists measured figures
 * typed by hand outside them. `--check` writes nothing and exits 1 where a document is stale.
 * After a bench run on a GPU host: commit its results, run this, commit the docs.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { regenerateAll } from './docs-numbers/generate.js';
import { strayFigures } from './docs-numbers/stray-figures.js';

const root = join(import.meta.dirname, '..');
const check = process.argv.includes('--check');
const unknown = process.argv.slice(2).filter((a) => a !== '--check');
if (unknown.length > 0) {
  console.error(
    `docs:numbers: unknown argument ${JSON.stringify(unknown[0])} (usage: npm run docs:numbers [-- --check])`,
  );
  process.exit(2);
}

try {
  const documents = regenerateAll(root);
  const stale = documents.filter((d) => d.regenerated !== d.committed);
  for (const d of stale) {
    if (!check) writeFileSync(join(root, d.file), d.regenerated);
    console.log(`${check ? 'stale' : 'rewrote'} ${d.file}`);
  }
  const stray = documents.flatMap((d) => strayFigures(d.committed, d.file));
  for (const s of stray)
    console.log(`${s.file}:${s.line}: measured figure typed by hand: ${s.figure} (quote it from a generated block)`);
  const blocks = documents.reduce((n, d) => n + d.blocks, 0);
  console.log(
    `${blocks} generated blocks in ${documents.length} documents; ${stale.length} ${check ? 'stale' : 'rewritten'}; ${stray.length} figures typed by hand`,
  );
  process.exit(stray.length > 0 || (check && stale.length > 0) ? 1 : 0);
} catch (e) {
  console.error(`docs:numbers: ${(e as Error).message}`);
  process.exit(1);
}
