/**
 * Size is checked, not hoped for: no function over 100 lines and no file over 400 lines in
 * lambdas/, local/, cli/ and web/src (generated files excepted), and no comment anywhere in the
 * source that points outside the repository. Each check fails on its first violation, naming it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  commentLinesOf,
  fileLineCount,
  firstImportCycle,
  measureFunctions,
  outsideReference,
  relativeImportsOf,
} from '../../support/code-shape.ts';

const REPO_ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const MAX_FUNCTION_LINES = 100;
const MAX_FILE_LINES = 400;
/** Where the size rules hold. */
const SIZED_FOLDERS = ['lambdas', 'local', 'cli', 'web/src'];
/** Where no comment may point outside the repository: every folder of source. */
const COMMENTED_FOLDERS = ['bench', 'bin', 'cli', 'examples', 'lambdas', 'lib', 'local', 'test', 'web'];
/** Where no module may import itself through others: the pages and the frame of web/src included. */
const ACYCLIC_FOLDERS = ['lambdas', 'cli', 'web/src'];
/** Written by a tool, not by hand (anything under a folder named generated/ is too). */
const GENERATED_FILES = ['cli/api-types.ts'];

function sourceFiles(folder: string): string[] {
  return readdirSync(join(REPO_ROOT, folder))
    .sort()
    .flatMap((name) => {
      const path = `${folder}/${name}`;
      if (statSync(join(REPO_ROOT, path)).isDirectory())
        return name === 'node_modules' ? [] : sourceFiles(path);
      return /\.(tsx?|mts|cts|js|mjs|cjs)$/.test(name) ? [path] : [];
    });
}

function isGenerated(path: string): boolean {
  return GENERATED_FILES.includes(path) || path.split('/').includes('generated');
}

const sizedFiles = SIZED_FOLDERS.flatMap(sourceFiles).filter((path) => !isGenerated(path));
const read = (path: string): string => readFileSync(join(REPO_ROOT, path), 'utf8');

describe('what the checks measure', () => {
  const body = (lines: number): string =>
    Array.from({ length: lines }, (_, i) => `  const v${i} = ${i};`).join('\n');

  it('counts a function from its first token to its last, both lines included, without the comments above it', () => {
    // Arrange: a declaration of 3 + 98 = 101 lines under a comment, an arrow of 100 lines, a method of 3.
    const text = [
      '/** Above the function: not counted. */',
      'export async function long(',
      '  a: number,',
      ') {',
      body(97),
      '}',
      'const short = () => {',
      body(98),
      '};',
      'class C {',
      '  method() {',
      '    return 1;',
      '  }',
      '}',
      'const anonymous = [1].map(function (x) {',
      '  return x;',
      '});',
      '',
    ].join('\n');

    // Act
    const functions = measureFunctions('sample.ts', text);

    // Assert
    expect(functions).toEqual([
      { name: 'long', line: 2, lines: 101 },
      { name: 'short', line: 103, lines: 100 },
      { name: 'method', line: 204, lines: 3 },
      { name: 'a function passed to [1].map', line: 208, lines: 3 },
    ]);
  });

  it('counts a nested function on its own and within the function around it', () => {
    const functions = measureFunctions(
      'sample.tsx',
      'function outer() {\n  const inner = (x: number) =>\n    <b>{x}</b>;\n}\n',
    );
    expect(functions).toEqual([
      { name: 'outer', line: 1, lines: 4 },
      { name: 'inner', line: 2, lines: 2 },
    ]);
  });

  it("counts a file's lines as wc -l does, and an unterminated last line", () => {
    expect([fileLineCount(''), fileLineCount('a\n'), fileLineCount('a\nb'), fileLineCount('a\nb\n')]).toEqual(
      [0, 1, 2, 2],
    );
  });

  it('finds the comments that point outside the repository and lets the others be', () => {
    const comments = commentLinesOf(
      'sample.ts',
      [
        '// Retried on the schedule of NOTES.md §8.',
        "const text = 'NOTES.md is in a string, not a comment';",
        '/* A note,',
        ' * see ../shared/notes. */',
        '/** A body-less status (RFC 9110 §8.6); the README.md explains. */',
        '// As §7 says.',
        '// See docs/nowhere.md.',
      ].join('\n'),
    );
    expect(comments.map((comment) => [comment.line, outsideReference(comment.text, REPO_ROOT)])).toEqual([
      [1, 'names NOTES.md, which is not in the repository'],
      [3, undefined],
      [4, 'points at a path outside the repository'],
      [5, undefined],
      [6, 'cites a "§" section without naming a document of the repository or an RFC'],
      [7, 'names docs/nowhere.md, which is not in the repository'],
    ]);
  });
});

describe('what the import check reads', () => {
  it('follows relative imports and re-exports, not type-only ones or packages', () => {
    const text = [
      "import { App } from './app.tsx';",
      "import type { Session } from './session.ts';",
      "import { h } from 'preact';",
      "export { useSession } from '../src/session.ts';",
      "import '../styles.ts';",
    ].join('\n');
    expect(relativeImportsOf('web/src/main.tsx', text)).toEqual([
      'web/src/app.tsx',
      'web/src/session.ts',
      'web/styles.ts',
    ]);
  });

  it('finds a cycle through any number of modules, and none in a tree', () => {
    const graph = new Map([
      ['app.tsx', ['pages/run.tsx', 'session.ts']],
      ['pages/run.tsx', ['ui.tsx', 'app.tsx']],
      ['ui.tsx', []],
      ['session.ts', []],
    ]);
    expect(firstImportCycle(graph)).toEqual(['app.tsx', 'pages/run.tsx', 'app.tsx']);
    graph.set('pages/run.tsx', ['ui.tsx', 'session.ts']);
    expect(firstImportCycle(graph)).toBeUndefined();
  });
});

describe('the code stays in shape', () => {
  it(`has no file over ${MAX_FILE_LINES} lines in ${SIZED_FOLDERS.join(', ')}`, () => {
    const oversized = sizedFiles
      .map((path) => ({ path, lines: fileLineCount(read(path)) }))
      .find(({ lines }) => lines > MAX_FILE_LINES);
    expect(oversized && `${oversized.path} has ${oversized.lines} lines`).toBeUndefined();
  });

  it('declares no operation with toLocaleString: the first one loads ICU, in every cold start', () => {
    // The declarations are evaluated when a function loads (its summary, its limits in words).
    const found = sourceFiles('lambdas/operations').find((path) => read(path).includes('toLocaleString('));
    expect(found && `${found} calls toLocaleString`).toBeUndefined();
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines in ${SIZED_FOLDERS.join(', ')}`, () => {
    for (const path of sizedFiles) {
      const oversized = measureFunctions(path, read(path)).find(({ lines }) => lines > MAX_FUNCTION_LINES);
      expect(
        oversized && `${path}:${oversized.line} ${oversized.name} has ${oversized.lines} lines`,
      ).toBeUndefined();
    }
  });

  it('has no comment pointing outside the repository', () => {
    for (const path of COMMENTED_FOLDERS.flatMap(sourceFiles)) {
      for (const comment of commentLinesOf(path, read(path))) {
        const reference = outsideReference(comment.text, REPO_ROOT);
        expect(reference && `${path}:${comment.line} ${reference}`).toBeUndefined();
      }
    }
  });

  it(`has no import cycle in ${ACYCLIC_FOLDERS.join(', ')}`, () => {
    const files = ACYCLIC_FOLDERS.flatMap(sourceFiles).filter((path) => !isGenerated(path));
    const graph = new Map(files.map((path) => [path, relativeImportsOf(path, read(path))]));
    expect(firstImportCycle(graph)?.join(' → ')).toBeUndefined();
  });
});
