// One-off (issue 14): every optional property signature (interfaces and type literals) in src/
// that lacks `| undefined` gets it, so that consumers compiling with exactOptionalPropertyTypes can
// pass possibly-undefined values ({ stream: maybeStream }). With the project's own
// exactOptionalPropertyTypes: false the change is invisible to its type checking.
// Each file is read, edited and written at once (others may be editing nearby); rerun to verify.
// Usage: npx tsx scripts/add-undefined.ts [--apply]
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Node, Project, SyntaxKind } from 'ts-morph';

const apply = process.argv.includes('--apply');
const project = new Project({ useInMemoryFileSystem: true, compilerOptions: { allowJs: false } });
const walk = (dir: string): string[] => readdirSync(dir).flatMap((e) => (statSync(join(dir, e)).isDirectory() ? walk(join(dir, e)) : e.endsWith('.ts') ? [join(dir, e)] : []));
const files = walk('src')
  .filter((f) => !f.startsWith('src/ffi/generated/'))
  .sort();
let total = 0;
for (const path of files) {
  const text = readFileSync(path, 'utf8');
  let out = text;
  let count = 0;
  // Nested type literals: one pass edits the outermost; repeat until nothing is left.
  for (let pass = 0; pass < 8; pass++) {
    const edits = optionalWithoutUndefined(out);
    if (edits.length === 0) break;
    count += edits.length;
    for (const e of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  }
  if (count === 0) continue;
  total += count;
  console.log(`${String(count).padStart(3)} ${path}`);
  if (!apply) continue;
  if (readFileSync(path, 'utf8') === text) writeFileSync(path, out);
  else console.log('    changed while editing, skipped: rerun');
}
console.log(`${total} optional properties without | undefined${apply ? ' (edited)' : ''}`);

function optionalWithoutUndefined(text: string): { start: number; end: number; text: string }[] {
  const file = project.createSourceFile('edit.ts', text, { overwrite: true });
  const edits: { start: number; end: number; text: string }[] = [];
  file.forEachDescendant((node) => {
    if (!Node.isPropertySignature(node) || !node.hasQuestionToken()) return;
    const typeNode = node.getTypeNode();
    if (!typeNode) return;
    const members = Node.isUnionTypeNode(typeNode) ? typeNode.getTypeNodes() : [typeNode];
    if (members.some((m) => m.getText() === 'undefined')) return;
    if (typeNode.getKind() === SyntaxKind.AnyKeyword || typeNode.getKind() === SyntaxKind.UnknownKeyword) return;
    const t = typeNode.getText();
    const parens = Node.isFunctionTypeNode(typeNode) || Node.isConstructorTypeNode(typeNode) || Node.isConditionalTypeNode(typeNode);
    edits.push({ start: typeNode.getStart(), end: typeNode.getEnd(), text: `${parens ? `(${t})` : t} | undefined` });
  });
  const kept: typeof edits = [];
  for (const e of edits.sort((x, y) => x.start - y.start)) if (!kept.some((k) => e.start < k.end && k.start < e.end)) kept.push(e);
  return kept;
}
