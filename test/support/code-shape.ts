/**
 * Measures the shape of source files for test/unit/layout/code-shape.test.ts: their functions'
 * lengths (read with the TypeScript compiler's parser, not with patterns) and their comments.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/** A function found in a source file, with its length in lines. */
export interface MeasuredFunction {
  readonly name: string;
  readonly line: number;
  readonly lines: number;
}

/**
 * A file's lines as `wc -l` counts them, plus an unterminated last line: the number of line
 * breaks, and one more when the text does not end with one.
 */
export function fileLineCount(text: string): number {
  if (text === '') return 0;
  const breaks = text.split('\n').length - 1;
  return text.endsWith('\n') ? breaks : breaks + 1;
}

/**
 * Every function of a file: function declarations, methods (and constructors and accessors),
 * arrow functions and function expressions, nested ones included. A function's length runs from
 * the line of its first token (its modifiers, `function` keyword, name or parameters; never the
 * comments above it) to the line of its last token, both counted, so a nested function counts
 * both on its own and within the function around it.
 */
export function measureFunctions(fileName: string, text: string): MeasuredFunction[] {
  const source = parse(fileName, text);
  const found: MeasuredFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunction(node)) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({ name: functionName(node, source), line: first + 1, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function isFunction(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node) ||
    ts.isArrowFunction(node) ||
    ts.isFunctionExpression(node)
  );
}

/** The name a reader would look for: the function's own, or that of what it is assigned to. */
function functionName(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name) return node.name.getText(source);
  const parent = node.parent;
  if (
    (ts.isVariableDeclaration(parent) ||
      ts.isPropertyAssignment(parent) ||
      ts.isPropertyDeclaration(parent)) &&
    parent.name
  ) {
    return parent.name.getText(source);
  }
  if (ts.isCallExpression(parent)) return `a function passed to ${parent.expression.getText(source)}`;
  return 'an anonymous function';
}

/**
 * Every line of every comment of a file (JSDoc and JSX comments included), with its line number:
 * the comments around each token the parser reads, so nothing in a string, a template or JSX text
 * passes for one.
 */
export function commentLinesOf(fileName: string, text: string): { line: number; text: string }[] {
  const source = parse(fileName, text);
  const ranges = new Map<number, number>();
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.JsxText) return;
    const around = [
      ...(ts.getLeadingCommentRanges(text, node.getFullStart()) ?? []),
      ...(ts.getTrailingCommentRanges(text, node.getEnd()) ?? []),
    ];
    for (const range of around) ranges.set(range.pos, range.end);
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return [...ranges]
    .sort(([a], [b]) => a - b)
    .flatMap(([pos, end]) => {
      const first = source.getLineAndCharacterOfPosition(pos).line + 1;
      return text
        .slice(pos, end)
        .split('\n')
        .map((line, index) => ({ line: first + index, text: line }));
    });
}

function parse(fileName: string, text: string): ts.SourceFile {
  const kind = fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  return ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, kind);
}

/**
 * What in a comment's line points outside the repository, if anything: a path out of it (a folder
 * beside the repository), a Markdown file the repository does not hold, or a section sign citing
 * a document that is neither an RFC nor a file of the repository.
 */
export function outsideReference(comment: string, repoRoot: string): string | undefined {
  if (/\.\.\/shared|\/work\//.test(comment)) return 'points at a path outside the repository';
  for (const [, file] of comment.matchAll(/([\w./-]+\.md)\b/g)) {
    if (file && !existsSync(join(repoRoot, file))) return `names ${file}, which is not in the repository`;
  }
  for (const match of comment.matchAll(/§/g)) {
    const before = comment.slice(0, match.index).trimEnd();
    const document = /(RFC \d+|[\w./-]+\.md)$/.exec(before)?.[1];
    if (!document) return 'cites a "§" section without naming a document of the repository or an RFC';
  }
  return undefined;
}

/**
 * The relative imports of a file (import and export declarations, type-only ones left out: they
 * vanish from the JavaScript), as paths resolved against the file's folder.
 */
export function relativeImportsOf(fileName: string, text: string): string[] {
  const source = parse(fileName, text);
  const folder = fileName.slice(0, fileName.lastIndexOf('/') + 1);
  return source.statements.flatMap((statement) => {
    if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) return [];
    const specifier = statement.moduleSpecifier;
    if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) return [];
    if (ts.isImportDeclaration(statement) && statement.importClause?.isTypeOnly) return [];
    if (ts.isExportDeclaration(statement) && statement.isTypeOnly) return [];
    return [normalize(folder + specifier.text)];
  });
}

/** A path with its `.` and `..` segments resolved. */
function normalize(path: string): string {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '..') parts.pop();
    else if (part !== '.') parts.push(part);
  }
  return parts.join('/');
}

/** The first import cycle among the files (path → its relative imports), as the files in order, or undefined. */
export function firstImportCycle(graph: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const done = new Set<string>();
  const visiting: string[] = [];
  const visit = (file: string): string[] | undefined => {
    const at = visiting.indexOf(file);
    if (at >= 0) return [...visiting.slice(at), file];
    if (done.has(file) || !graph.has(file)) return undefined;
    visiting.push(file);
    for (const imported of graph.get(file) ?? []) {
      const cycle = visit(imported);
      if (cycle) return cycle;
    }
    visiting.pop();
    done.add(file);
    return undefined;
  };
  for (const file of [...graph.keys()].sort()) {
    const cycle = visit(file);
    if (cycle) return cycle;
  }
  return undefined;
}
