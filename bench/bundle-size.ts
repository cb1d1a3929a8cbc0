/**
 * Bundle size and module-init time of every Lambda, bundled exactly as the stack bundles them
 * (lib/bundling.ts), against a baseline bundle holding only the DynamoDB document client.
 *
 *   npx tsx bench/bundle-size.ts
 *
 * Targets: an HTTP Lambda bundle is at most 400 KB and initializes in at most 1.5 × the baseline.
 * Init time is the median of several `await import(bundle)` in fresh node processes, so every
 * run pays what a cold start pays for module loading (not the runtime's own start).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { AUTHORIZER, DEAD_LETTER_HANDLER, SYNTHESIS_WORKER } from '../lambdas/functions.ts';
import { operationFunctions } from '../lambdas/operations/functions.ts';
import { OPERATIONS } from '../lambdas/operations/index.ts';
import { esbuildOptions, handlerEntryPath, operationEntryPath, REPO_ROOT } from '../lib/bundling.ts';

export type BundleKind = 'baseline' | 'http' | 'authorizer' | 'worker' | 'dead-letter';

export interface BundleRow {
  name: string;
  kind: BundleKind;
  bytes: number;
  /** Median milliseconds of `await import(bundle)` in a fresh node process. */
  initMs: number;
  sizeRatio: number;
  initRatio: number;
  /** Whether the row meets its target; only HTTP Lambdas have targets. */
  withinTarget: boolean | null;
}

export interface MeasureOptions {
  /** Imports per bundle; the median counts. @default 7 */
  runs?: number;
  /** @default <repo>/.bench/bundle-size */
  outDir?: string;
}

export const MAX_HTTP_BUNDLE_BYTES = 400 * 1024;
export const MAX_HTTP_INIT_RATIO = 1.5;

const BASELINE_SOURCE = `import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));
export const handler = async () => client.config.region;
`;

/**
 * Variables the handlers read at module load, with harmless values: the import must not throw
 * on configuration. No credentials and no endpoint are needed; nothing is called at import.
 */
const HANDLER_ENVIRONMENT: Record<string, string> = {
  AWS_REGION: 'us-east-1',
  POWERTOOLS_SERVICE_NAME: 'bundle-size-bench',
  LOG_LEVEL: 'ERROR',
  RUNS_TABLE: 'bench-runs',
  DATA_TABLE: 'bench-data',
  AUTH_TABLE: 'bench-auth',
  SYNTHESIS_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/bench',
  DEFAULT_SYNTHESIS_HANDLER: 'heuristic-v1',
  SESSION_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:bench-session-AbCdEf',
  ANTHROPIC_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:bench-anthropic-AbCdEf',
  NODE_NO_WARNINGS: '1',
};

interface BundleTarget {
  name: string;
  kind: BundleKind;
  entryFile: string;
}

function targets(outDir: string): BundleTarget[] {
  const baselineEntry = join(outDir, 'baseline-entry.mjs');
  writeFileSync(baselineEntry, BASELINE_SOURCE);
  return [
    { name: 'baseline (DynamoDB document client)', kind: 'baseline', entryFile: baselineEntry },
    // Operations that share a module (GET /app and GET /app/{proxy+}) share one bundle.
    ...operationFunctions(OPERATIONS).map(({ module }) => ({
      name: module,
      kind: 'http' as const,
      entryFile: operationEntryPath(module),
    })),
    { name: AUTHORIZER.entry, kind: 'authorizer', entryFile: handlerEntryPath(AUTHORIZER.entry) },
    { name: SYNTHESIS_WORKER.entry, kind: 'worker', entryFile: handlerEntryPath(SYNTHESIS_WORKER.entry) },
    {
      name: DEAD_LETTER_HANDLER.entry,
      kind: 'dead-letter',
      entryFile: handlerEntryPath(DEAD_LETTER_HANDLER.entry),
    },
  ];
}

function importMilliseconds(bundle: string): number {
  const script = `const start = performance.now();
const module = await import(${JSON.stringify(pathToFileURL(bundle).href)});
if (typeof module.handler !== 'function') throw new Error('no handler export');
process.stdout.write(String(performance.now() - start));`;
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', ...HANDLER_ENVIRONMENT },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return Number(output);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** Bundles every Lambda the stack deploys plus the baseline, and measures each. */
export async function measureBundles(options: MeasureOptions = {}): Promise<BundleRow[]> {
  const runs = options.runs ?? 7;
  const outDir = options.outDir ?? join(REPO_ROOT, '.bench', 'bundle-size');
  mkdirSync(outDir, { recursive: true });

  const measured: Omit<BundleRow, 'sizeRatio' | 'initRatio' | 'withinTarget'>[] = [];
  for (const target of targets(outDir)) {
    // .mjs: node must load the bundle as an ES module, as the Lambda runtime loads index.mjs.
    const bundle = join(outDir, `${target.name.split(' ')[0]}.mjs`);
    await build(esbuildOptions(target.entryFile, bundle));
    const times = Array.from({ length: runs }, () => importMilliseconds(bundle));
    measured.push({
      name: target.name,
      kind: target.kind,
      bytes: statSync(bundle).size,
      initMs: median(times),
    });
  }

  const baseline = measured.find((row) => row.kind === 'baseline');
  if (!baseline) throw new Error('no baseline row');
  return measured.map((row) => {
    const sizeRatio = row.bytes / baseline.bytes;
    const initRatio = row.initMs / baseline.initMs;
    const withinTarget =
      row.kind === 'http' ? row.bytes <= MAX_HTTP_BUNDLE_BYTES && initRatio <= MAX_HTTP_INIT_RATIO : null;
    return { ...row, sizeRatio, initRatio, withinTarget };
  });
}

export function formatBundleTable(rows: BundleRow[]): string {
  const header = ['bundle', 'kind', 'size KB', '× base', 'init ms', '× base', 'target'];
  const lines = rows.map((row) => [
    row.name,
    row.kind,
    (row.bytes / 1024).toFixed(1),
    row.sizeRatio.toFixed(2),
    row.initMs.toFixed(1),
    row.initRatio.toFixed(2),
    row.withinTarget === null ? '-' : row.withinTarget ? 'ok' : 'MISSED',
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...lines.map((line) => line[column]?.length ?? 0)),
  );
  const format = (cells: string[]) =>
    cells
      .map((cell, column) =>
        column < 2 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0),
      )
      .join('  ');
  return [format(header), widths.map((width) => '-'.repeat(width)).join('  '), ...lines.map(format)].join(
    '\n',
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await measureBundles();
  console.log(formatBundleTable(rows));
  console.log(
    `\nTargets for HTTP Lambdas: ≤ ${MAX_HTTP_BUNDLE_BYTES / 1024} KB and init ≤ ${MAX_HTTP_INIT_RATIO} × baseline.`,
  );
  const missed = rows.filter((row) => row.withinTarget === false).map((row) => row.name);
  if (missed.length > 0) console.log(`Missed by: ${missed.join(', ')}`);
}
