/** Walks clang's JSON AST (`-Xclang -ast-dump=json`), which names a source file only where it changes. */
export interface AstLoc {
  file?: string;
  line?: number;
  col?: number;
  spellingLoc?: AstLoc;
  expansionLoc?: AstLoc;
}

export interface AstNode {
  id?: string;
  kind: string;
  name?: string;
  loc?: AstLoc;
  range?: { begin?: AstLoc; end?: AstLoc };
  type?: { qualType: string; desugaredQualType?: string };
  inner?: AstNode[];
  text?: string;
  param?: string;
  value?: string;
  tagUsed?: string;
  completeDefinition?: boolean;
  fixedUnderlyingType?: { qualType: string };
  isImplicit?: boolean;
}

export interface Located {
  node: AstNode;
  file: string | undefined;
  line: number | undefined;
  col: number | undefined;
}

/** Top-level declarations of a translation unit, each with the file and line it was declared in. */
export function locateTopLevel(root: AstNode): Located[] {
  let file: string | undefined;
  let line: number | undefined;
  const see = (loc: AstLoc | undefined): void => {
    if (!loc) return;
    see(loc.spellingLoc);
    see(loc.expansionLoc);
    if (loc.file !== undefined) file = loc.file;
    if (loc.line !== undefined) line = loc.line;
  };
  const walk = (node: AstNode): void => {
    see(node.loc);
    see(node.range?.begin);
    see(node.range?.end);
    for (const child of node.inner ?? []) walk(child);
  };
  const out: Located[] = [];
  for (const node of root.inner ?? []) {
    see(node.loc);
    const here: Located = { node, file, line, col: node.loc?.col ?? node.loc?.expansionLoc?.col };
    see(node.range?.begin);
    see(node.range?.end);
    for (const child of node.inner ?? []) walk(child);
    out.push(here);
  }
  return out;
}

export function commentText(node: AstNode): string {
  const parts = node.kind === 'TextComment' ? [node.text ?? ''] : [];
  for (const child of node.inner ?? []) parts.push(commentText(child));
  return parts.join(' ').replace(/\s+/g, ' ').trim();
}

export interface DocComment {
  brief?: string;
  params: Map<string, string>;
  deprecated: boolean;
}

export function docOf(node: AstNode): DocComment {
  const doc: DocComment = { params: new Map(), deprecated: false };
  const full = node.inner?.find((c) => c.kind === 'FullComment');
  if (!full) return doc;
  let firstParagraph: string | undefined;
  for (const part of full.inner ?? []) {
    if (part.kind === 'BlockCommandComment' && part.name === 'brief') doc.brief = commentText(part);
    else if (part.kind === 'BlockCommandComment' && part.name === 'deprecated') doc.deprecated = true;
    else if (part.kind === 'ParamCommandComment' && part.param) doc.params.set(part.param, commentText(part));
    else if (part.kind === 'ParagraphComment' && firstParagraph === undefined) {
      const t = commentText(part);
      if (t) firstParagraph = t;
    }
  }
  doc.brief ??= firstParagraph;
  return doc;
}

export function hasDeprecatedAttr(node: AstNode): boolean {
  return (node.inner ?? []).some((c) => c.kind === 'DeprecatedAttr');
}
