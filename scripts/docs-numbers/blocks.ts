/**
 * Generated blocks in Markdown: `<!-- numbers:NAME -->`, the generated text, `<!-- /numbers -->`.
 * The comments render as nothing, so a reader sees only the text; the script rewrites what lies
 * between them and the numbers test checks that nothing else was typed there.
 */

/** One generated block as found in a document. */
export interface NumbersBlock {
  /** The generator's name, e.g. `bench-hosts`. */
  name: string;
  /** The text between the markers, without the newlines that follow the opening and precede the closing marker. */
  body: string;
  /** 1-based line of the opening marker, for messages. */
  line: number;
}

/** A document whose markers do not pair up, or a block whose generator is unknown. */
export class NumbersBlockError extends Error {
  override name = 'NumbersBlockError';
}

const OPEN = /^<!-- numbers:([a-z0-9-]+) -->$/;
const CLOSE = '<!-- /numbers -->';

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

/** Every block of a document, in order; throws NumbersBlockError naming the file and line of a marker that does not pair up. */
export function findBlocks(text: string, file: string): NumbersBlock[] {
  const blocks: NumbersBlock[] = [];
  const lines = text.split('\n');
  let open: { name: string; line: number; body: string[] } | null = null;
  for (const [i, raw] of lines.entries()) {
    const line = raw.trimEnd();
    const opening = OPEN.exec(line);
    if (opening !== null) {
      if (open !== null)
        throw new NumbersBlockError(
          `${file}:${i + 1}: numbers:${opening[1]} opens inside numbers:${open.name} (line ${open.line}), which is not closed`,
        );
      open = { name: opening[1] ?? '', line: i + 1, body: [] };
    } else if (line === CLOSE) {
      if (open === null) throw new NumbersBlockError(`${file}:${i + 1}: ${CLOSE} closes no block`);
      blocks.push({ name: open.name, body: open.body.join('\n'), line: open.line });
      open = null;
    } else if (line.startsWith('<!-- numbers')) {
      throw new NumbersBlockError(
        `${file}:${i + 1}: malformed marker ${JSON.stringify(line)} (expected <!-- numbers:name --> with a lower-case name)`,
      );
    } else if (open !== null) {
      open.body.push(raw);
    }
  }
  if (open !== null)
    throw new NumbersBlockError(`${file}:${open.line}: numbers:${open.name} is never closed with ${CLOSE}`);
  return blocks;
}

/**
 * The document with every block's body replaced by `generate(name)`; text outside blocks is kept
 * byte for byte. An unknown name is the generator's to refuse (it throws).
 */
export function replaceBlocks(text: string, file: string, generate: (name: string) => string): string {
  findBlocks(text, file); // refuses unpaired markers before anything is rewritten
  const out: string[] = [];
  let inside = false;
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    const opening = OPEN.exec(line);
    if (opening !== null) {
      out.push(raw);
      const body = generate(opening[1] ?? '').replace(/\n+$/, '');
      if (body !== '') out.push(body);
      inside = true;
    } else if (line === CLOSE) {
      out.push(raw);
      inside = false;
    } else if (!inside) {
      out.push(raw);
    }
  }
  return out.join('\n');
}

/** The document with its generated blocks, fenced code, inline code and HTML comments blanked: the prose a person typed. */
export function typedProse(text: string): string {
  const lines = text.split('\n');
  let inside = false;
  let fence: string | null = null;
  const kept = lines.map((raw) => {
    const line = raw.trimEnd();
    if (OPEN.test(line)) {
      inside = true;
      return '';
    }
    if (line === CLOSE) {
      inside = false;
      return '';
    }
    const fenceMark = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (fenceMark !== undefined && (fence === null || fenceMark.startsWith(fence))) {
      fence = fence === null ? fenceMark : null;
      return '';
    }
    return inside || fence !== null ? '' : raw;
  });
  return kept
    .join('\n')
    .replace(/<!--[\s\S]*?-->/g, (c) => c.replace(/[^\n]/g, ' '))
    .replace(/`[^`\n]*`/g, (c) => ' '.repeat(c.length));
}
