/**
 * No tracked file keeps a merge's conflict markers: a merge that leaves `<<<<<<< ours` and
 * `>>>>>>> theirs` in prose (the CHANGELOG, a guide) compiles and formats, so only this notices.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..', '..');
/** A conflict's opening or closing line: seven marks, a space, then the side's name. */
const MARKER = /^(<{7}|>{7}) \S/m;

/** `file:line` of every conflict marker in `text`. */
function conflictMarkers(file: string, text: string): string[] {
  if (!MARKER.test(text)) return [];
  return text.split('\n').flatMap((line, i) => (MARKER.test(line) ? [`${file}:${i + 1}`] : []));
}

describe('merge conflict markers', () => {
  it('are found at their lines, and a setext underline or a quoted arrow is not one', () => {
    const text = ['# A', '<<<<<<< HEAD', 'ours', '=======', 'theirs', '>>>>>>> branch', 'Title', '======='].join('\n');
    expect(conflictMarkers('CHANGELOG.md', text)).toEqual(['CHANGELOG.md:2', 'CHANGELOG.md:6']);
    expect(conflictMarkers('a.md', '> quoted\n>>>> deeper\nHeading\n=======\n')).toEqual([]);
  });

  it('are in no tracked text file', () => {
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0');
    const found = files
      .filter((f) => /\.(md|ts|mts|mjs|js|json|cu|cuh|py|sh|ya?ml|txt)$/.test(f) || f === '.ci/run')
      .flatMap((f) => {
        let text: string;
        try {
          text = readFileSync(join(root, f), 'utf8');
        } catch {
          return []; // listed by git but gone from the working tree (a deletion not yet staged)
        }
        return conflictMarkers(f, text);
      });
    expect(found).toEqual([]);
  });
});
