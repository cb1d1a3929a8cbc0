/**
 * The shell blocks of README.md and docs/, as the documentation test runs them: in reading order,
 * each either runnable (it uses the CLI or curl) or marked `<!-- docs-test: not run (why) -->`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Lexer, type Token } from 'marked';

export interface ShellBlock {
  /** `README.md:52`: the file and the line of the block's opening fence. */
  where: string;
  code: string;
  /** The reason a marked block is not run; undefined for a block to run. */
  notRun?: string;
}

const SHELL = new Set(['sh', 'bash', 'shell']);
const NOT_RUN = /^<!--\s*docs-test:\s*not run\s*\((.+)\)\s*-->\s*$/;
/** What the test can run against the local stack: the CLI and curl. */
const RUNNABLE = /\bpipeline-synthesis\b|\bcurl\b/;

/** README.md, then the pages of docs/ in name order. */
export function documentsOf(root: string): string[] {
  const pages = readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...pages];
}

/** Every shell block of one document, with the marker that precedes it, if any. */
export function shellBlocks(root: string, document: string): ShellBlock[] {
  const text = readFileSync(path.join(root, document), 'utf8');
  const blocks: ShellBlock[] = [];
  let offset = 0;
  let previous: Token | undefined;
  for (const token of Lexer.lex(text)) {
    const at = text.indexOf(token.raw, offset);
    offset = at < 0 ? offset : at + token.raw.length;
    if (token.type === 'code' && SHELL.has(token.lang ?? '')) {
      const line = text.slice(0, at).split('\n').length;
      const marker = previous?.type === 'html' ? NOT_RUN.exec(previous.raw.trim()) : null;
      blocks.push({
        where: `${document}:${line}`,
        code: token.text,
        ...(marker?.[1] ? { notRun: marker[1] } : {}),
      });
    }
    if (token.type !== 'space') previous = token;
  }
  return blocks;
}

/** A block that is neither marked nor something the test can run: the test refuses it. */
export const unrunnable = (block: ShellBlock) => block.notRun === undefined && !RUNNABLE.test(block.code);

/**
 * One bash script of every block to run, in order. A line whose comment starts with an HTTP status
 * (`… # 304`) must print that status; `set -e` and curl's --fail-with-body make any failing command,
 * or any 4xx/5xx answer, stop the script with the block it was in on stderr.
 */
export function scriptOf(blocks: readonly ShellBlock[], cliBin: string): string {
  const lines = [
    'set -euo pipefail',
    // `npx pipeline-synthesis` is the built bin, as `npm install` links it in a checkout.
    `npx() { if [ "$1" = pipeline-synthesis ]; then shift; node ${JSON.stringify(cliBin)} "$@"; else command npx "$@"; fi; }`,
    'curl() { command curl --fail-with-body "$@"; }',
    '__expect() { grep -Eq "(^|[^0-9])$2([^0-9]|$)" <<<"$1" || { echo "expected $2 from $3" >&2; exit 1; }; }',
  ];
  for (const block of blocks) {
    if (block.notRun !== undefined) continue;
    lines.push(`echo "::block ${block.where}" >&2`);
    block.code.split('\n').forEach((line, index) => {
      lines.push(expectation(line, `${block.where}+${index}`) ?? line);
    });
    lines.push(`echo "::vars ${block.where} P=\${P:-} RUN=\${RUN:-}"`);
  }
  return `${lines.join('\n')}\n`;
}

/** `command … # 304 …` as: run it, print its output, check the status is in it. */
function expectation(line: string, where: string): string | undefined {
  const match = /^(.*\S)\s+#\s*([1-5]\d\d)\b/.exec(line);
  if (!match?.[1] || !match[2] || line.trimEnd().endsWith('\\')) return undefined;
  return `__out=$(${match[1]}); printf '%s\\n' "$__out"; __expect "$__out" ${match[2]} ${JSON.stringify(where)}`;
}
