import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions } from 'esbuild';
import { HANDLERS } from '../lambdas/functions.ts';

/**
 * How every Lambda is bundled, in one place and without CDK imports: the NodejsFunction construct
 * (lib/service-function.ts) and the bundle-size benchmark (bench/bundle-size.ts) both read it, so
 * the benchmark measures exactly what gets deployed.
 */

/** The repository root (this file lives in lib/). */
export const REPO_ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
export const DEPS_LOCK_FILE = join(REPO_ROOT, 'package-lock.json');

/** A function that is no API operation: its `entry` (lambdas/functions.ts HANDLERS) names a file in lambdas/handlers. */
export function handlerEntryPath(entry: string): string {
  return join(REPO_ROOT, 'lambdas', 'handlers', `${entry}.ts`);
}

/** An API operation's function: its module in lambdas/operations. */
export function operationEntryPath(module: string): string {
  return join(REPO_ROOT, 'lambdas', 'operations', `${module}.ts`);
}

/**
 * The shell command that runs a script of the repository (an operation's `buildsFirst`, such as
 * web/build.ts) with the node running this code; NodejsFunction runs it through bash in the
 * repository root.
 */
export function buildScriptCommand(script: string): string {
  return shellWords([process.execPath, '--import', 'tsx', join(REPO_ROOT, script)]);
}

/** Words joined into one POSIX shell command, each single-quoted. */
function shellWords(words: readonly string[]): string {
  return words.map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(' ');
}

export interface LambdaBundling {
  readonly format: 'esm';
  readonly target: string;
  readonly minify: boolean;
  /** When on, functions also get NODE_OPTIONS=--enable-source-maps (which costs init time). */
  readonly sourceMap: boolean;
  readonly mainFields: readonly string[];
  readonly banner: string;
  readonly externalModules: readonly string[];
  /** Packages replaced by another module (esbuild `alias`); values are paths relative to REPO_ROOT. */
  readonly alias: Readonly<Record<string, string>>;
}

export const LAMBDA_BUNDLING: LambdaBundling = {
  format: 'esm',
  target: 'node24',
  minify: true,
  sourceMap: false,
  // ESM builds of dependencies (the AWS SDK v3 ships them) tree-shake far better than CJS ones.
  mainFields: ['module', 'main'],
  // Bundled CJS dependencies call require('node:https') and friends; an ES module has no
  // `require`, so the bundle would throw "Dynamic require of ... is not supported" at import.
  banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
  // Bundle the AWS SDK v3 instead of using the runtime's copy: a tree-shaken, minified client
  // loads faster on a cold start than the full SDK from the runtime's node_modules, and the
  // version is the one package-lock.json pins and the tests ran against.
  externalModules: [],
  // Lambda hands every function its role's credentials in AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
  // and AWS_SESSION_TOKEN. The SDK's default chain would also bundle the SSO, profile, process,
  // web-identity, container and IMDS providers with the STS and SSO clients they need (~135 KB of
  // every bundle's ~415 KB, paid at every cold start) for credentials a Lambda never has; the
  // environment provider alone is what runs there (and in the local stack, which sets the same
  // variables).
  // protobufjs (the OTLP ingest's decoder) loads long.js when it can; it is configured to decode
  // 64-bit integers as numbers instead (lambdas/otlp/decode.ts), so long.js is left out.
  alias: {
    '@aws-sdk/credential-provider-node': './lambdas/wiring/lambda-credentials.ts',
    long: './lambdas/wiring/no-long.ts',
    'protobufjs/minimal.js': './lambdas/wiring/protobuf-reader.js',
  },
};

/** `alias` with absolute replacement paths, for esbuild runs whose working directory is not REPO_ROOT. */
function absoluteAlias(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(LAMBDA_BUNDLING.alias).map(([name, target]) => [name, join(REPO_ROOT, target)]),
  );
}

/**
 * Modules a function imports only when it needs them (`await import(...)` in its handler), each
 * built as a file of its own next to the function's index.mjs: for a handler its declaration's
 * `onDemandParts` (lambdas/functions.ts), for an operation module this table; by the part's output
 * name (`<name>.mjs`) and its module, relative to REPO_ROOT. A single-file bundle would inline a
 * dynamic import, so these functions are bundled with code splitting (splitEsbuildOptions): the
 * handler's import of the module becomes `import("./<name>.mjs")`, and the modules both halves use
 * land in shared chunks, loaded once (one SynthesisFailure class for both).
 */
export const ON_DEMAND_PARTS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  // The SES client (~80 KB of the bundle's ~400) by the first email: a request for an unknown or
  // throttled address sends none, and esbuild's inlining of the import (wiring/email.ts) deferred
  // only its evaluation, while every cold start still parsed it.
  'request-magic-link': { 'ses-client': 'lambdas/wiring/ses-client.ts' },
  // claude-v1's prompt builder, for a run's cost estimate: only a claude-v1 run needs it, and it
  // took every cold start of the function past 1.5 × the baseline's init.
  'synthesize-pipeline': { 'claude-prompt-tokens': 'lambdas/synthesis/claude/prompt-tokens.ts' },
  // The SQS client (guardrail checks), by the first check: the OTLP ingest sends one only while its
  // pipeline has a rollout, and the client took the bundle past 400 KB.
  'ingest-otlp-traces': { 'guardrail-queue': 'lambdas/sqs/guardrail-queue.ts' },
};

/** The on-demand parts of the function named `entry`, with absolute module paths; empty for most. */
export function onDemandParts(entry: string): Record<string, string> {
  const declared = HANDLERS.find((handler) => handler.entry === entry)?.onDemandParts;
  return Object.fromEntries(
    Object.entries(declared ?? ON_DEMAND_PARTS[entry] ?? {}).map(([name, module]) => [
      name,
      join(REPO_ROOT, module),
    ]),
  );
}

/** The esbuild options equivalent to the NodejsFunction bundling of one entry. */
export function esbuildOptions(entryFile: string, outfile: string): BuildOptions {
  return {
    entryPoints: [entryFile],
    outfile,
    bundle: true,
    platform: 'node',
    format: LAMBDA_BUNDLING.format,
    target: LAMBDA_BUNDLING.target,
    minify: LAMBDA_BUNDLING.minify,
    sourcemap: LAMBDA_BUNDLING.sourceMap,
    mainFields: [...LAMBDA_BUNDLING.mainFields],
    banner: { js: LAMBDA_BUNDLING.banner },
    external: [...LAMBDA_BUNDLING.externalModules],
    alias: absoluteAlias(),
    logLevel: 'warning',
  };
}

/** The output name of a split function's handler module, as Lambda loads it (`index.handler`). */
export const SPLIT_INDEX = 'index';

/**
 * The options of esbuildOptions with code splitting into `outdir`: `index.mjs` for `entryFile`, one
 * `<name>.mjs` per on-demand part, and `chunk-<hash>.mjs` files for the modules they share. What
 * `index.mjs` imports statically is what every invocation loads; a part is read when first imported.
 */
export function splitEsbuildOptions(
  entryFile: string,
  parts: Readonly<Record<string, string>>,
  outdir: string,
): BuildOptions {
  const { entryPoints: _entry, outfile: _out, ...options } = esbuildOptions(entryFile, '');
  return {
    ...options,
    entryPoints: { [SPLIT_INDEX]: entryFile, ...parts },
    outdir,
    splitting: true,
    entryNames: '[name]',
    chunkNames: 'chunk-[hash]',
    outExtension: { '.js': '.mjs' },
  };
}

/**
 * The shell command that bundles a split function into `outdir` (NodejsFunction's afterBundling
 * hook, which runs it in the repository root over the single index.mjs NodejsFunction built): esbuild
 * from node_modules through its JavaScript API, with splitEsbuildOptions as JSON, so the deployed
 * files are the ones the local stack and the benchmark build.
 */
export function splitBuildCommand(
  entryFile: string,
  parts: Readonly<Record<string, string>>,
  outdir: string,
): string {
  const script = "const { build } = await import('esbuild'); await build(JSON.parse(process.argv[1]));";
  const options = JSON.stringify(splitEsbuildOptions(entryFile, parts, outdir));
  return shellWords([process.execPath, '--input-type=module', '-e', script, options]);
}
