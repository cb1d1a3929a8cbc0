/**
 * Builds what the local stack runs: each function's esbuild bundle with the very options the CDK's
 * NodejsFunction uses (lib/bundling.ts), and the small runtime host each execution environment
 * starts with. Bundles, not the TypeScript sources: a module that bundles wrongly (a dynamic
 * require, an alias, a missing export) fails locally as it would on Lambda.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { build, type Metafile } from 'esbuild';
import { esbuildOptions, REPO_ROOT, SPLIT_INDEX, splitEsbuildOptions } from '../../lib/bundling.ts';

export interface FunctionSource {
  /** The bundle's file name, without extension. */
  name: string;
  /** The handler module's TypeScript file. */
  entryFile: string;
  /**
   * Modules the handler imports on demand, by output name (lib/bundling.ts onDemandParts): such a
   * function is built with code splitting into `<outDir>/<name>/`, as NodejsFunction deploys it.
   */
  parts?: Readonly<Record<string, string>>;
}

export interface BuiltFunctions {
  /** `<outDir>/<name>.mjs` for each function; `<outDir>/<name>/index.mjs` for a split one. */
  bundles: Map<string, string>;
  /** The runtime host every execution environment runs (local/runtime/host.ts, bundled). */
  host: string;
}

const HOST_SOURCE = path.join(import.meta.dirname, 'host.ts');

const isSplit = (fn: FunctionSource) => Object.keys(fn.parts ?? {}).length > 0;

/** Where the handler module of `fn` is, in a build directory. */
function bundlePath(outDir: string, fn: FunctionSource): string {
  return isSplit(fn) ? path.join(outDir, fn.name, `${SPLIT_INDEX}.mjs`) : path.join(outDir, `${fn.name}.mjs`);
}

/**
 * One esbuild run for the single-file functions (they share parsing), one per split function, one
 * for the host, all at once; the inputs they read.
 */
export async function buildFunctions(
  functions: readonly FunctionSource[],
  outDir: string,
): Promise<BuiltFunctions & { inputs: string[] }> {
  await mkdir(outDir, { recursive: true });
  const { entryPoints: _entry, outfile: _out, ...options } = esbuildOptions('', '');
  const single = functions.filter((fn) => !isSplit(fn));
  // Input paths in the metafile are relative to absWorkingDir (see fingerprint()).
  const reported = { absWorkingDir: REPO_ROOT, metafile: true, logLevel: 'silent' } as const;
  const host = path.join(outDir, '_runtime-host.mjs');
  const builds = await Promise.all([
    ...(single.length > 0
      ? [
          build({
            ...options,
            ...reported,
            entryPoints: Object.fromEntries(single.map((fn) => [fn.name, fn.entryFile])),
            outdir: outDir,
            outExtension: { '.js': '.mjs' },
          }),
        ]
      : []),
    ...functions.filter(isSplit).map((fn) =>
      build({
        ...splitEsbuildOptions(fn.entryFile, fn.parts ?? {}, path.join(outDir, fn.name)),
        ...reported,
      }),
    ),
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
  const inputs = new Set(
    builds.flatMap((built) => Object.keys((built.metafile as Metafile | undefined)?.inputs ?? {})),
  );
  return {
    bundles: new Map(functions.map((fn) => [fn.name, bundlePath(outDir, fn)])),
    host,
    inputs: [...inputs, HOST_SOURCE],
  };
}

interface CacheManifest {
  key: string;
  /** Every file the bundles were built from, with its size and mtime then. */
  inputs: Array<[file: string, size: number, mtimeMs: number]>;
}

async function fingerprint(files: readonly string[]): Promise<CacheManifest['inputs'] | undefined> {
  try {
    return await Promise.all(
      files.map(async (file) => {
        const info = await stat(path.resolve(REPO_ROOT, file));
        return [file, info.size, info.mtimeMs] as [string, number, number];
      }),
    );
  } catch {
    return undefined;
  }
}

/**
 * buildFunctions with a cache under `cacheDir`: when no file the last build read has changed
 * (size and mtime), its bundles are used as they are, so `npm start` does not spend seconds on
 * esbuild each time. Each build goes to a directory of its own, renamed into place when complete,
 * so stacks starting at the same time never read a half-written bundle.
 */
export async function buildFunctionsCached(
  functions: readonly FunctionSource[],
  cacheDir: string,
): Promise<BuiltFunctions> {
  const layout = createHash('sha256')
    .update(JSON.stringify([functions, esbuildOptions('', ''), process.version]))
    .digest('hex')
    .slice(0, 16);
  const manifestFile = path.join(cacheDir, `${layout}.json`);
  const located = (dir: string): BuiltFunctions => ({
    bundles: new Map(functions.map((fn) => [fn.name, bundlePath(dir, fn)])),
    host: path.join(dir, '_runtime-host.mjs'),
  });
  try {
    const manifest = JSON.parse(await readFile(manifestFile, 'utf8')) as CacheManifest;
    const now = await fingerprint(manifest.inputs.map(([file]) => file));
    if (now && JSON.stringify(now) === JSON.stringify(manifest.inputs))
      return located(path.join(cacheDir, manifest.key));
  } catch {
    // No usable cache: build.
  }
  await mkdir(cacheDir, { recursive: true });
  const staging = await mkdtemp(path.join(cacheDir, 'build-'));
  const built = await buildFunctions(functions, staging);
  const inputs = (await fingerprint(built.inputs)) ?? [];
  const key = `${layout}-${createHash('sha256').update(JSON.stringify(inputs)).digest('hex').slice(0, 16)}`;
  const target = path.join(cacheDir, key);
  try {
    await rename(staging, target);
  } catch {
    // Another start built the same inputs first: use its copy.
    await rm(staging, { recursive: true, force: true });
  }
  const manifestStaging = `${manifestFile}.${process.pid}`;
  await writeFile(manifestStaging, JSON.stringify({ key, inputs } satisfies CacheManifest));
  await rename(manifestStaging, manifestFile);
  return located(target);
}
