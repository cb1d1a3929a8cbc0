/**
 * Builds the CLI and the typed client to plain JavaScript with esbuild: dist/pipeline-synthesis.cjs
 * (the npm bin, one file, no TypeScript loader at run time) and dist/client.mjs (the package's
 * `./client` export). `npm run build:cli`; run by `prepare` on npm install / npm ci.
 */
import { chmod, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
export const CLI_BIN = path.join(ROOT, 'dist', 'pipeline-synthesis.cjs');
export const CLIENT_MODULE = path.join(ROOT, 'dist', 'client.mjs');

export async function buildCli(): Promise<void> {
  const { version } = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
    version: string;
  };
  const common = {
    bundle: true,
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    legalComments: 'none',
    minify: true,
  } as const;
  await Promise.all([
    build({
      ...common,
      entryPoints: [path.join(ROOT, 'bin', 'pipeline-synthesis.ts')],
      outfile: CLI_BIN,
      format: 'cjs',
      banner: { js: '#!/usr/bin/env node' },
      define: { CLI_VERSION: JSON.stringify(version) },
    }),
    build({
      ...common,
      entryPoints: [path.join(ROOT, 'cli', 'client.ts')],
      outfile: CLIENT_MODULE,
      format: 'esm',
    }),
  ]);
  await chmod(CLI_BIN, 0o755);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await buildCli();
