/**
 * The worker's claude-v1 part is a file of its own, loaded only by a claude-v1 job: the worker's
 * bundle, built as the local stack and NodejsFunction build it, runs heuristic-v1 jobs with
 * claude-v1.mjs deleted, and a claude-v1 job then fails its run with a message saying why.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SYNTHESIS_WORKER } from '../../../lambdas/functions.ts';
import { createDocumentClient } from '../../../lambdas/wiring/aws.ts';
import { handlerEntryPath, onDemandParts } from '../../../lib/bundling.ts';
import { buildFunctions } from '../../../local/runtime/bundles.ts';
import { LocalFunction } from '../../../local/runtime/lambda-function.ts';
import { functionNode } from '../../../local/runtime/node.ts';
import { createTestTables, testDynamoClient } from '../../support/dynamodb.ts';
import { sqsEvent } from '../api/harness.ts';
import { type ClaudeTestBed, seedPendingRun, testBed } from '../claude/fixtures.ts';

let outDir: string;
let workerDir: string;
let bed: ClaudeTestBed;
let worker: LocalFunction;
const lines: string[] = [];

beforeAll(async () => {
  outDir = await mkdtemp(path.join(tmpdir(), 'worker-parts-'));
  const built = await buildFunctions(
    [
      {
        name: SYNTHESIS_WORKER.entry,
        entryFile: handlerEntryPath(SYNTHESIS_WORKER.entry),
        parts: onDemandParts(SYNTHESIS_WORKER.entry),
      },
    ],
    outDir,
  );
  const bundle = built.bundles.get(SYNTHESIS_WORKER.entry) ?? '';
  workerDir = path.dirname(bundle);
  const client = testDynamoClient();
  const { names, env } = await createTestTables(client);
  const db = createDocumentClient(client);
  bed = testBed(db, names);
  worker = new LocalFunction({
    name: 'test-worker',
    bundle,
    host: built.host,
    execPath: functionNode().execPath,
    environment: {
      ...env,
      SYNTHESIS_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/synthesis-jobs',
      AWS_ENDPOINT_URL_DYNAMODB: inject('dynamodbEndpoint'),
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      // Never used (the model is never reached); built here so no key-shaped text is committed.
      ANTHROPIC_API_KEY: ['fake', 'key', 'never', 'used'].join('-'),
      POWERTOOLS_SERVICE_NAME: 'worker-parts-test',
      LOG_LEVEL: 'ERROR',
    },
    timeoutMs: 30_000,
    maxEnvironments: 1,
    region: 'us-east-1',
    accountId: '000000000000',
    log: (line) => lines.push(line),
  });
}, 120_000);
afterAll(async () => {
  await worker?.stop();
  await rm(outDir, { recursive: true, force: true });
});

const jobOf = (run: { id: string; jobId: string }) => JSON.stringify({ runId: run.id, jobId: run.jobId });

describe('the worker bundle', () => {
  it('is index.mjs with claude-v1.mjs beside it, and what index.mjs loads holds no Anthropic SDK', async () => {
    const files = await readdir(workerDir);
    expect(files).toContain('index.mjs');
    expect(files).toContain('claude-v1.mjs');
    const claudeOnly = await readFile(path.join(workerDir, 'claude-v1.mjs'), 'utf8');
    expect(claudeOnly).not.toMatch(/from\s*"\.\/index\.mjs"/);
    const index = await readFile(path.join(workerDir, 'index.mjs'), 'utf8');
    const staticChunks = [...index.matchAll(/from\s*"\.\/(chunk-[\w-]+\.mjs)"/g)].map((match) => match[1]);
    const loaded = [
      index,
      ...(await Promise.all(
        staticChunks.map((chunk) => readFile(path.join(workerDir, chunk ?? ''), 'utf8')),
      )),
    ];
    expect(index).toContain('"./claude-v1.mjs"');
    for (const code of loaded) expect(code.includes('anthropic-version')).toBe(false);
  });

  it('generates a heuristic-v1 run without claude-v1.mjs, and fails a claude-v1 run saying the part is missing', async () => {
    await rm(path.join(workerDir, 'claude-v1.mjs'));
    const { run: heuristic } = await seedPendingRun(bed, 'heuristic-v1');
    const { run: claude } = await seedPendingRun(bed, 'claude-v1');

    const first = await worker.invoke(sqsEvent([jobOf(heuristic)]));
    const second = await worker.invoke(sqsEvent([jobOf(claude)]));

    expect(existsSync(path.join(workerDir, 'claude-v1.mjs'))).toBe(false);
    expect(first).toEqual({ batchItemFailures: [] });
    expect(await bed.runs.get(heuristic.id)).toMatchObject({ status: 'generated' });
    // Permanent: the message is deleted, not retried, and the run says what to do.
    expect(second).toEqual({ batchItemFailures: [] });
    const failed = await bed.runs.get(claude.id);
    expect(failed?.status).toBe('failed');
    expect(failed?.errorMessage).toContain('claude-v1 could not be loaded');
    expect(failed?.errorMessage).toContain('heuristic-v1');
  });
});
