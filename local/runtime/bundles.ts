/**
 * Builds what the local stack runs: each function's esbuild bundle with the very options the CDK's
 * NodejsFunction uses (lib/bundling.ts), and the small runtime host each execution environment
 * starts with. Bundles, not the TypeScript sources: a module that bundles wrongly (a dynamic
 * require, an alias, a missing export) fails locally as it would on Lambda.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';
import { esbuildOptions } from '../../lib/bundling.ts';

export interface FunctionSource {
  /** The bundle's file name, without extension. */
  name: string;
  /** The handler module's TypeScript file. */
  entryFile: string;
}

export interface BuiltFunctions {
  /** `<outDir>/<name>.mjs` for each function. */
  bundles: Map<string, string>;
  /** The runtime host every execution environment runs (local/runtime/host.ts, bundled). */
  host: string;
}

const HOST_SOURCE = path.join(import.meta.dirname, 'host.ts');

/** One esbuild run for all functions (they share parsing), one for the host. */
export async function buildFunctions(
  functions: readonly FunctionSource[],
  outDir: string,
): Promise<BuiltFunctions> {
  await mkdir(outDir, { recursive: true });
  const { entryPoints: _entry, outfile: _out, ...options } = esbuildOptions('', '');
  const host = path.join(outDir, '_runtime-host.mjs');
  await Promise.all([
    build({
      ...options,
      entryPoints: Object.fromEntries(functions.map((fn) => [fn.name, fn.entryFile])),
      outdir: outDir,
      outExtension: { '.js': '.mjs' },
      logLevel: 'silent',
    }),
    build({
      entryPoints: [HOST_SOURCE],
      outfile: host,
      bundle: true,
      platform: 'node',
      format: 'esm',
      // The host may run on the machine's Node when Node 24 is not installed (local/runtime/node.ts).
      target: 'node20',
      logLevel: 'silent',
    }),
  ]);
  return { bundles: new Map(functions.map((fn) => [fn.name, path.join(outDir, `${fn.name}.mjs`)])), host };
}
