/**
 * Bundle size and module-init time of every Lambda, bundled exactly as the stack bundles them
 * (lib/bundling.ts), against a baseline bundle holding only the DynamoDB document client.
 *
 *   npx tsx bench/bundle-size.ts
 *
 * Targets: an HTTP Lambda bundle (and the deploy's usage-key backfill) is at most 400 KB and
 * initializes in at most 1.5 × the baseline;
 * so does the worker's every-job part (≤ 600 KB), measured apart from its on-demand claude-v1 part.
 * Init time is the median of several `await import(bundle)` in fresh node processes, so every
 * run pays what a cold start pays for module loading (not the runtime's own start); each import
 * follows one of the baseline's, and a ratio is the median of those pairs' ratios. The targets are
 * judged on the import's CPU time (user + system, every thread of the process): what the import
 * takes on a CPU of its own, as a Lambda's init has; on this shared machine the wall time, shown
 * beside it, also counts the time the import waited for a CPU.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { accessEnvironment, type EnvironmentSources } from '../lambdas/function-environment.ts';
import {
  AUTHORIZER,
  DEAD_LETTER_HANDLER,
  type FunctionAccess,
  type HandlerTrigger,
  SYNTHESIS_WORKER,
  USAGE_KEY_BACKFILL,
} from '../lambdas/functions.ts';
import { evaluationPaths } from '../lambdas/operations/declaration.ts';
import { operationFunctions } from '../lambdas/operations/functions.ts';
import { OPERATIONS } from '../lambdas/operations/index.ts';
import {
  esbuildOptions,
  handlerEntryPath,
  onDemandParts,
  operationEntryPath,
  REPO_ROOT,
  SPLIT_INDEX,
  splitEsbuildOptions,
} from '../lib/bundling.ts';

export type BundleKind =
  | 'baseline'
  | 'http'
  | 'authorizer'
  | 'worker'
  | 'on-demand'
  | 'dead-letter'
  | 'deploy';

export interface BundleRow {
  name: string;
  kind: BundleKind;
  bytes: number;
  /** Median milliseconds of `await import(bundle)` in a fresh node process (an on-demand part: after its function's). */
  initMs: number;
  /** Median CPU milliseconds of the same imports: what the targets are judged on. */
  initCpuMs: number;
  sizeRatio: number;
  /** Median of the ratios of its imports to the baseline's import just before each. */
  initRatio: number;
  initCpuRatio: number;
  /** Whether the row meets its target; HTTP Lambdas and the worker's every-job part have targets. */
  withinTarget: boolean | null;
}

export interface MeasureOptions {
  /** Imports per bundle; the median counts. @default 15 */
  runs?: number;
  /** @default <repo>/.bench/bundle-size */
  outDir?: string;
}

export const MAX_HTTP_BUNDLE_BYTES = 400 * 1024;
export const MAX_HTTP_INIT_RATIO = 1.5;
/** The worker's every-job part: index.mjs and the chunks it imports statically. */
export const MAX_WORKER_BUNDLE_BYTES = 600 * 1024;

const BASELINE_SOURCE = `import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));
export const handler = async () => client.config.region;
`;

/** What every Lambda has: the region and its name, which makes an operation compose at init. */
const COMMON_ENVIRONMENT: Record<string, string> = {
  AWS_REGION: 'us-east-1',
  // As in Lambda: an operation's handler composes its stores and clients during init, not on first use.
  AWS_LAMBDA_FUNCTION_NAME: 'bundle-size-bench',
  POWERTOOLS_SERVICE_NAME: 'bundle-size-bench',
  LOG_LEVEL: 'ERROR',
  NODE_NO_WARNINGS: '1',
};

/**
 * Stand-ins for what the CDK stack gives a function, from its declared access (as it does on AWS):
 * a function missing a variable would fail to compose and be timed without it. No credentials and
 * no endpoint are needed; nothing is called at import.
 */
const queue = (name: string) => `https://sqs.us-east-1.amazonaws.com/000000000000/${name}`;
const secret = (name: string) => `arn:aws:secretsmanager:us-east-1:000000000000:secret:${name}-AbCdEf`;
const SOURCES: EnvironmentSources = {
  tableNames: {
    Runs: 'bench-runs',
    Data: 'bench-data',
    Auth: 'bench-auth',
    Events: 'bench-events',
    Settings: 'bench-settings',
  },
  queueUrls: {
    'synthesis-jobs': queue('bench'),
    'lifecycle-jobs': queue('lifecycle'),
    'guardrail-checks': queue('guardrail'),
    'webhook-deliveries': queue('webhooks'),
    'webhook-slow-deliveries': queue('webhooks-slow'),
  },
  sessionSecret: { SESSION_SECRET_ARN: secret('bench-session') },
  email: { EMAIL_FROM: 'bench@example.com', APP_URL: 'https://bench.example.com/app/' },
  model: { ANTHROPIC_SECRET_ARN: secret('bench-anthropic') },
  defaultSynthesisHandler: 'heuristic-v1',
  synthesisRunsPerTeamPerHour: 60,
  webhookSecretKey: { WEBHOOK_SECRET_KEY_ARN: secret('bench-webhooks') },
  eventBusName: 'bench-bus',
  evaluationRoutes: evaluationPaths(OPERATIONS),
  evaluationFallbackKey: 'shared-evaluations-bench-key-0123456789',
  usagePlanId: 'benchplan',
};

const environmentOf = (access: FunctionAccess, trigger?: HandlerTrigger) => ({
  ...COMMON_ENVIRONMENT,
  ...accessEnvironment(access, SOURCES, trigger),
});

interface BundleTarget {
  name: string;
  kind: BundleKind;
  entryFile: string;
  /** The variables the function gets (its declared access); none for the baseline. */
  environment: Record<string, string>;
}

function targets(outDir: string): BundleTarget[] {
  const baselineEntry = join(outDir, 'baseline-entry.mjs');
  writeFileSync(baselineEntry, BASELINE_SOURCE);
  return [
    {
      name: 'baseline (DynamoDB document client)',
      kind: 'baseline',
      entryFile: baselineEntry,
      environment: COMMON_ENVIRONMENT,
    },
    // Operations that share a module (GET /app and GET /app/{proxy+}) share one bundle.
    ...operationFunctions(OPERATIONS).map(({ module, access }) => ({
      name: module,
      kind: 'http' as const,
      entryFile: operationEntryPath(module),
      environment: environmentOf(access),
    })),
    {
      name: AUTHORIZER.entry,
      kind: 'authorizer',
      entryFile: handlerEntryPath(AUTHORIZER.entry),
      environment: environmentOf(AUTHORIZER.access, AUTHORIZER.trigger),
    },
    {
      name: SYNTHESIS_WORKER.entry,
      kind: 'worker',
      entryFile: handlerEntryPath(SYNTHESIS_WORKER.entry),
      environment: environmentOf(SYNTHESIS_WORKER.access, SYNTHESIS_WORKER.trigger),
    },
    {
      name: DEAD_LETTER_HANDLER.entry,
      kind: 'dead-letter',
      entryFile: handlerEntryPath(DEAD_LETTER_HANDLER.entry),
      environment: environmentOf(DEAD_LETTER_HANDLER.access, DEAD_LETTER_HANDLER.trigger),
    },
    {
      name: USAGE_KEY_BACKFILL.entry,
      kind: 'deploy',
      entryFile: handlerEntryPath(USAGE_KEY_BACKFILL.entry),
      environment: environmentOf(USAGE_KEY_BACKFILL.access, USAGE_KEY_BACKFILL.trigger),
    },
  ];
}

interface ImportTime {
  wallMs: number;
  cpuMs: number;
}

/** Wall and CPU milliseconds of `await import(bundle)` in a fresh node; with `after`, of importing `bundle` once `after` is loaded. */
function importTime(bundle: string, environment: Record<string, string>, after?: string): ImportTime {
  const url = (file: string) => JSON.stringify(pathToFileURL(file).href);
  const script = `${after ? `const first = await import(${url(after)});` : ''}
const cpu = process.cpuUsage();
const start = performance.now();
const module = await import(${url(bundle)});
const wallMs = performance.now() - start;
const used = process.cpuUsage(cpu);
if (typeof (${after ? 'first' : 'module'}).handler !== 'function') throw new Error('no handler export');
process.stdout.write(JSON.stringify({ wallMs, cpuMs: (used.user + used.system) / 1000 }));`;
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', ...environment },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return JSON.parse(output) as ImportTime;
}

/** Output files reached from `start` by static imports (what loading it loads), `start` included. */
function staticClosure(outputs: Metafile['outputs'], start: string, seen = new Set<string>()): Set<string> {
  if (seen.has(start)) return seen;
  seen.add(start);
  for (const imported of outputs[start]?.imports ?? [])
    if (imported.kind === 'import-statement' && outputs[imported.path])
      staticClosure(outputs, imported.path, seen);
  return seen;
}

/** A row to measure: its size, and one import of it (in a fresh node) per call of `importOnce`. */
type PendingRow = Pick<BundleRow, 'name' | 'kind' | 'bytes'> & { importOnce: () => ImportTime };

/**
 * A function with on-demand parts, built with code splitting as it is deployed: one row for what
 * every invocation loads (index.mjs and its static chunks), one per part for what only it adds.
 */
async function buildSplit(target: BundleTarget, outDir: string): Promise<PendingRow[]> {
  const dir = join(outDir, target.name);
  const parts = onDemandParts(target.name);
  const { metafile } = await build({
    ...splitEsbuildOptions(target.entryFile, parts, dir),
    absWorkingDir: REPO_ROOT,
    metafile: true,
  });
  const outputs = (metafile as Metafile).outputs;
  const key = (name: string) => relative(REPO_ROOT, join(dir, `${name}.mjs`));
  const bytes = (files: Iterable<string>) =>
    [...files].reduce((sum, file) => sum + (outputs[file]?.bytes ?? 0), 0);
  const index = join(dir, `${SPLIT_INDEX}.mjs`);
  const everyJob = staticClosure(outputs, key(SPLIT_INDEX));
  const rows: PendingRow[] = [
    {
      name: `${target.name} (every job)`,
      kind: target.kind,
      bytes: bytes(everyJob),
      importOnce: () => importTime(index, target.environment),
    },
  ];
  for (const part of Object.keys(parts)) {
    const own = [...staticClosure(outputs, key(part))].filter((file) => !everyJob.has(file));
    const file = join(dir, `${part}.mjs`);
    rows.push({
      name: `${target.name} ${part}.mjs (on demand)`,
      kind: 'on-demand',
      bytes: bytes(own),
      importOnce: () => importTime(file, target.environment, index),
    });
  }
  return rows;
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
  const runs = options.runs ?? 15;
  const outDir = options.outDir ?? join(REPO_ROOT, '.bench', 'bundle-size');
  mkdirSync(outDir, { recursive: true });

  const pending: PendingRow[] = [];
  for (const target of targets(outDir)) {
    if (Object.keys(onDemandParts(target.name)).length > 0) {
      pending.push(...(await buildSplit(target, outDir)));
      continue;
    }
    // .mjs: node must load the bundle as an ES module, as the Lambda runtime loads index.mjs.
    const bundle = join(outDir, `${target.name.split(' ')[0]}.mjs`);
    await build(esbuildOptions(target.entryFile, bundle));
    pending.push({
      name: target.name,
      kind: target.kind,
      bytes: statSync(bundle).size,
      importOnce: () => importTime(bundle, target.environment),
    });
  }
  // In rounds, and each import of a bundle right after one of the baseline's: this machine's load
  // moves over the minutes a measurement takes (the baseline's median alone moved 20 % between two
  // runs of the same code), and a ratio of two imports a moment apart leaves that drift out. A row's
  // ratio is the median of its rounds' ratios; its milliseconds, the median of its imports.
  const baselineIndex = pending.findIndex((row) => row.kind === 'baseline');
  const baselineRow = pending[baselineIndex];
  if (!baselineRow) throw new Error('no baseline row');
  const times = pending.map((): ImportTime[] => []);
  const ratios = pending.map((): ImportTime[] => []);
  for (let round = 0; round < runs; round++)
    for (const [index, row] of pending.entries()) {
      if (index === baselineIndex) continue;
      const base = baselineRow.importOnce();
      const time = row.importOnce();
      times[baselineIndex]?.push(base);
      times[index]?.push(time);
      ratios[index]?.push({ wallMs: time.wallMs / base.wallMs, cpuMs: time.cpuMs / base.cpuMs });
    }
  const medianOf = (values: ImportTime[] | undefined, key: keyof ImportTime) =>
    median((values ?? []).map((time) => time[key]));

  return pending.map(({ importOnce: _importOnce, ...row }, index) => {
    const isBaseline = index === baselineIndex;
    const sizeRatio = row.bytes / baselineRow.bytes;
    const initRatio = isBaseline ? 1 : medianOf(ratios[index], 'wallMs');
    const initCpuRatio = isBaseline ? 1 : medianOf(ratios[index], 'cpuMs');
    // The deploy's backfill is held to an HTTP function's size (its init runs once per pass).
    const maxBytes = {
      http: MAX_HTTP_BUNDLE_BYTES,
      worker: MAX_WORKER_BUNDLE_BYTES,
      deploy: MAX_HTTP_BUNDLE_BYTES,
    }[row.kind as string];
    const withinTarget =
      maxBytes === undefined ? null : row.bytes <= maxBytes && initCpuRatio <= MAX_HTTP_INIT_RATIO;
    return {
      ...row,
      initMs: medianOf(times[index], 'wallMs'),
      initCpuMs: medianOf(times[index], 'cpuMs'),
      sizeRatio,
      initRatio,
      initCpuRatio,
      withinTarget,
    };
  });
}

export function formatBundleTable(rows: BundleRow[]): string {
  const header = ['bundle', 'kind', 'size KB', '× base', 'init ms', '× base', 'CPU ms', '× base', 'target'];
  const lines = rows.map((row) => [
    row.name,
    row.kind,
    (row.bytes / 1024).toFixed(1),
    row.sizeRatio.toFixed(2),
    row.initMs.toFixed(1),
    row.initRatio.toFixed(2),
    row.initCpuMs.toFixed(1),
    row.initCpuRatio.toFixed(2),
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

/** One line under the table: how many of the bundles that have a target meet it, and which do not. */
export function formatBundleVerdict(rows: BundleRow[]): string {
  const judged = rows.filter((row) => row.withinTarget !== null);
  const missed = judged.filter((row) => row.withinTarget === false).map((row) => row.name);
  const largest = (kind: BundleKind) =>
    Math.max(0, ...rows.filter((row) => row.kind === kind).map((row) => row.bytes));
  return [
    `Targets: HTTP Lambdas ≤ ${MAX_HTTP_BUNDLE_BYTES / 1024} KB (largest ${(largest('http') / 1024).toFixed(0)} KB), the worker's every-job part ≤ ${MAX_WORKER_BUNDLE_BYTES / 1024} KB (${(largest('worker') / 1024).toFixed(0)} KB); init CPU ≤ ${MAX_HTTP_INIT_RATIO} × the baseline's.`,
    `${judged.length - missed.length} of ${judged.length} bundles within their target${missed.length === 0 ? '' : `; over it: ${missed.join(', ')}`}`,
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await measureBundles();
  console.log(formatBundleTable(rows));
  console.log(`\n${formatBundleVerdict(rows)}`);
}
