/**
 * The JavaScript snippets of README.md and docs/, as the documented set-ups test runs them: each
 * marked `<!-- docs-test: snippet NAME -->` (or `not run (why)`), with the `npm install …` line and
 * the module type its document's text gives just before it, installed from the registry in a
 * scratch folder as a reader would (`npm init -y`, then that exact line), once per run of the tests.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Lexer, marked, type Token } from 'marked';

export interface Snippet {
  /** `README.md:138`: the file and the line of the block's opening fence. */
  where: string;
  /** The marker's name (`snippet openfeature`); undefined for a block marked not run. */
  name?: string;
  notRun?: string;
  code: string;
  /** The `npm install …` line of the text between the previous code block and this one. */
  installLine?: string;
  /** The text before the block says it is an ES module (`"type": "module"`). */
  esModule: boolean;
}

const JAVASCRIPT = new Set(['js', 'javascript', 'mjs']);
const MARKER = /^<!--\s*docs-test:\s*(?:snippet\s+([\w-]+)|not run\s*\((.+)\))\s*-->$/;
const NPM_INSTALL = /^npm install\s+\S/;

/** The `npm install …` code spans and blocks among some tokens, in order. */
function installLinesOf(tokens: Token[]): string[] {
  const lines: string[] = [];
  marked.walkTokens(tokens, (token) => {
    if (token.type === 'codespan' || token.type === 'code') {
      const text = token.text.replace(/\s+/g, ' ').trim();
      if (NPM_INSTALL.test(text)) lines.push(text);
    }
  });
  return lines;
}

/** Every JavaScript block of one document, with its marker and the install line before it. */
export function javascriptSnippets(root: string, document: string): Snippet[] {
  const text = readFileSync(path.join(root, document), 'utf8');
  const snippets: Snippet[] = [];
  let offset = 0;
  let since: Token[] = [];
  for (const token of Lexer.lex(text)) {
    const at = text.indexOf(token.raw, offset);
    offset = at < 0 ? offset : at + token.raw.length;
    if (token.type !== 'code') {
      if (token.type !== 'space') since.push(token);
      continue;
    }
    if (JAVASCRIPT.has(token.lang ?? '')) {
      const last = since.at(-1);
      const marker = last?.type === 'html' ? MARKER.exec(last.raw.trim()) : null;
      const prose = since.map((one) => one.raw).join('');
      snippets.push({
        where: `${document}:${text.slice(0, at).split('\n').length}`,
        ...(marker?.[1] ? { name: marker[1] } : {}),
        ...(marker?.[2] ? { notRun: marker[2] } : {}),
        code: token.text,
        ...(installLinesOf(since).at(-1) ? { installLine: installLinesOf(since).at(-1) } : {}),
        esModule: /"type":\s*"module"/.test(prose),
      });
    }
    since = [];
  }
  return snippets;
}

/** A snippet that imports a package needs the install line its document gives. */
export const importsPackages = (snippet: Snippet) =>
  /^import\s.*\sfrom\s+'(?!node:)[^']+'/m.test(snippet.code);

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment a reader's shell gives npm and node: this machine's (its certificates, proxies,
 * npm's user config), without the `npm_*` of the `npm test` around us, vitest's, or any variable a
 * snippet reads, which only `extra` sets.
 */
function readerEnvironment(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined && !/^(npm_|VITEST|NODE_OPTIONS$|PIPELINE_|ANTHROPIC_|OTEL_)/i.test(name))
      env[name] = value;
  return { ...env, NO_COLOR: '1', ...extra };
}

/** Runs a command to its end (killed after `timeoutMs`, a safety net against a hung test). */
function run(command: string, args: string[], cwd: string, env: Record<string, string>, timeoutMs = 300_000) {
  const child = spawn(command, args, {
    cwd,
    env: readerEnvironment(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: timeoutMs,
  });
  const result: Run = { code: null, stdout: '', stderr: '' };
  child.stdout.on('data', (chunk) => {
    result.stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    result.stderr += chunk;
  });
  return new Promise<Run>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      result.code = code;
      resolve(result);
    });
  });
}

/** `npm install a@1 b@2` as the words a shell would pass (the lines hold no quotes or variables). */
function wordsOf(installLine: string): string[] {
  if (/[$`"'\\|;&<>]/.test(installLine)) throw new Error(`not a plain install line: ${installLine}`);
  return installLine.split(' ').slice(1);
}

const cacheFolder = (installLine: string) =>
  path.join(
    tmpdir(),
    `pipeline-synthesis-docs-npm-${createHash('sha256').update(installLine).digest('hex')}`,
  );

/**
 * A folder where `npm init -y` and then exactly `installLine` ran (undefined: only `npm init -y`),
 * made once and kept in the temporary directory for the next test of this run (and later runs on
 * the same machine). A failed install throws with npm's output.
 */
export async function installedFolder(installLine: string | undefined): Promise<string> {
  const folder = cacheFolder(installLine ?? 'npm init -y');
  if (existsSync(path.join(folder, '.installed'))) return folder;
  const scratch = await mkdtemp(`${folder}.partial-`);
  try {
    const init = await run('npm', ['init', '-y'], scratch, {});
    if (init.code !== 0) throw new Error(`npm init -y failed:\n${init.stderr}`);
    if (installLine) {
      const installed = await run('npm', wordsOf(installLine), scratch, {});
      if (installed.code !== 0) throw new Error(`${installLine}\nfailed:\n${installed.stderr.slice(-4000)}`);
    }
    await writeFile(path.join(scratch, '.installed'), `${installLine ?? ''}\n`);
    // Another run of the tests on this machine may have finished the same install first: keep its.
    await rename(scratch, folder).catch((error: unknown) => {
      if (!existsSync(path.join(folder, '.installed'))) throw error;
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return folder;
}

/**
 * Writes the snippet as it is written, followed by `driver` (the test's calls of what it defines),
 * in `folder` as `<name>.js`, its package an ES module only if the document says so, and runs it
 * with node and `env` (plus PATH and HOME).
 */
export async function runSnippet(
  folder: string,
  snippet: Snippet,
  driver: string,
  env: Record<string, string>,
): Promise<Run> {
  const manifestPath = path.join(folder, 'package.json');
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as Record<string, unknown>;
  manifest.type = snippet.esModule ? 'module' : 'commonjs';
  await writeFile(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  const file = `${snippet.name ?? 'snippet'}.js`;
  await mkdir(folder, { recursive: true });
  await writeFile(path.join(folder, file), `${snippet.code}\n\n// The test's driver:\n${driver}\n`);
  return run(process.execPath, [file], folder, env, 60_000);
}
