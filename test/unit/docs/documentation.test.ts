/**
 * The documentation stays honest, cheaply: the README stays a ten-minute read, every link in
 * README.md and docs/ reaches a file of the repository (and the heading it names), every source
 * path named in code exists, and nothing points outside the repository. Running the documented
 * commands is another test's work.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import { Lexer, marked, type Token } from 'marked';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const README_MAX_LINES = 400;

/** README.md and every Markdown page of docs/, as paths from the repository's root. */
const DOCUMENTS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/** Text that names something outside the repository: a reader of the repository cannot follow it. */
const OUTSIDE_MENTIONS: { pattern: RegExp; why: string }[] = [
  { pattern: /\b(DESIGN|STYLE|ENVIRONMENT)\.md\b/, why: 'a design note that is not in the repository' },
  { pattern: /(^|[\s(`'"])\.\.\/shared\b|\bshared\/[A-Z]/, why: 'a shared folder outside the repository' },
  { pattern: /(^|[\s(`'"])\/work\//, why: "a path on one machine's disk" },
];

/** A link the local stack answers: the documented way to open it, not a page outside the repository. */
const LOOPBACK = /^https?:\/\/(127\.0\.0\.1|localhost)(:\d+)?(\/|$)/;

const tokensOf = (document: string): Token[] => Lexer.lex(readFileSync(join(ROOT, document), 'utf8'));

function plainText(tokens: Token[] | undefined): string {
  return (tokens ?? [])
    .map((token) =>
      'tokens' in token && Array.isArray(token.tokens)
        ? plainText(token.tokens)
        : 'text' in token
          ? String(token.text)
          : '',
    )
    .join('');
}

/** The anchors GitHub gives a page's headings (a repeated heading gets -1, -2, …). */
function anchorsOf(document: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  marked.walkTokens(tokensOf(document), (token) => {
    if (token.type === 'heading') anchors.add(slugger.slug(plainText(token.tokens)));
  });
  return anchors;
}

/** A code span that is a path of the repository's sources (built output such as dist/ excepted). */
const SOURCE_PATH = /^(bench|bin|cli|docs|examples|lambdas|lib|local|test|web)\/[A-Za-z0-9_./-]*$/;

function sourcePathsOf(document: string): string[] {
  const paths: string[] = [];
  marked.walkTokens(tokensOf(document), (token) => {
    if (token.type === 'codespan' && SOURCE_PATH.test(token.text)) paths.push(token.text);
  });
  return paths;
}

function linksOf(document: string): string[] {
  const links: string[] = [];
  marked.walkTokens(tokensOf(document), (token) => {
    if (token.type === 'link' || token.type === 'image') links.push(token.href);
  });
  return links;
}

/** What is wrong with one link of a document, or null when it reaches what it names. */
function brokenLink(document: string, href: string): string | null {
  if (LOOPBACK.test(href)) return null;
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('/'))
    return 'points outside the repository (link to a file of the repository, relative to this page)';
  const [path = '', anchor] = href.split('#');
  const target = path === '' ? join(ROOT, document) : resolve(ROOT, dirname(document), decodeURI(path));
  const fromRoot = relative(ROOT, target);
  if (fromRoot.startsWith('..')) return 'points outside the repository';
  if (!existsSync(target)) return `names ${fromRoot}, which does not exist`;
  if (anchor === undefined) return null;
  if (!fromRoot.endsWith('.md')) return `names a heading in ${fromRoot}, which is not a Markdown page`;
  return anchorsOf(fromRoot).has(anchor) ? null : `names #${anchor}, which is no heading of ${fromRoot}`;
}

describe('the documentation', () => {
  it(`keeps the README at most ${README_MAX_LINES} lines: the rest belongs in docs/`, () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length - 1;
    expect(lines, `README.md has ${lines} lines`).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('links from the README to the pages of docs/, and every page of docs/ is linked from somewhere', () => {
    const linked = new Set(
      DOCUMENTS.flatMap((document) =>
        linksOf(document)
          .filter((href) => !/^[a-z][a-z0-9+.-]*:/i.test(href) && !href.startsWith('#'))
          .map((href) => relative(ROOT, resolve(ROOT, dirname(document), href.split('#')[0] ?? ''))),
      ),
    );
    const unlinked = DOCUMENTS.filter((document) => document !== 'README.md' && !linked.has(document));
    expect(unlinked, 'pages no other page links to').toEqual([]);
    expect(linksOf('README.md').some((href) => href.startsWith('docs/'))).toBe(true);
  });

  it.each(DOCUMENTS)(
    '%s: every link reaches a file of the repository, and the heading it names',
    (document) => {
      const broken = linksOf(document).flatMap((href) => {
        const problem = brokenLink(document, href);
        return problem === null ? [] : [`${href}: ${problem}`];
      });
      expect(broken).toEqual([]);
    },
  );

  it.each(DOCUMENTS)(
    '%s: every source path it names in code exists (moved code moves its docs)',
    (document) => {
      const missing = sourcePathsOf(document).filter((path) => !existsSync(join(ROOT, path)));
      expect(missing).toEqual([]);
    },
  );

  it.each(DOCUMENTS)('%s: names nothing outside the repository', (document) => {
    const text = readFileSync(join(ROOT, document), 'utf8');
    const found = text
      .split('\n')
      .flatMap((line, index) =>
        OUTSIDE_MENTIONS.filter(({ pattern }) => pattern.test(line)).map(
          ({ why }) => `line ${index + 1}, ${why}: ${line.trim()}`,
        ),
      );
    expect(found).toEqual([]);
  });
});
