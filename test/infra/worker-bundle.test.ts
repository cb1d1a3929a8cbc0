/**
 * The worker as NodejsFunction deploys it (real bundling, no Docker): code splitting leaves
 * index.mjs, the parts it imports on demand (claude-v1.mjs for claude-v1 jobs, claude-bedrock.mjs
 * for those on Bedrock, sqs-queue.mjs for jobs to retry) and their shared chunks in one asset, and index.mjs imports in plain node
 * without the parts.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import { afterAll, expect, it } from 'vitest';
import { SYNTHESIS_WORKER } from '../../lambdas/functions.ts';
import { handlerEntryPath, LAMBDA_BUNDLING, onDemandParts } from '../../lib/bundling.ts';
import { ServiceFunction } from '../../lib/service-function.ts';
import { stageSettings } from '../../lib/stage.ts';
import { standInResources } from './helpers.ts';

const outdir = mkdtempSync(join(tmpdir(), 'infra-worker-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

it('deploys the worker as index.mjs plus claude-v1.mjs, claude-bedrock.mjs, sqs-queue.mjs and shared chunks; index.mjs loads without the parts', () => {
  const app = new App({ outdir });
  const stack = new Stack(app, 'WorkerBundle');
  new ServiceFunction(stack, 'Worker', {
    entryFile: handlerEntryPath(SYNTHESIS_WORKER.entry),
    access: SYNTHESIS_WORKER.access,
    resources: standInResources(stack),
    settings: { tracing: false, removalPolicy: stageSettings('dev').removalPolicy, logLevel: 'INFO' },
    description: 'worker bundling check',
    onDemandParts: onDemandParts(SYNTHESIS_WORKER.entry),
  });

  app.synth();
  const assetDirs = readdirSync(outdir).filter((name) => name.startsWith('asset.'));
  const asset = join(outdir, assetDirs[0] ?? 'missing');
  const files = readdirSync(asset);
  const index = join(asset, 'index.mjs');

  expect(assetDirs).toHaveLength(1);
  expect(files).toContain('index.mjs');
  expect(files).toContain('claude-v1.mjs');
  // The Bedrock SDK: a part of its own, imported by claude-v1 only when MODEL_PROVIDER is bedrock.
  expect(files).toContain('claude-bedrock.mjs');
  expect(readFileSync(join(asset, 'claude-bedrock.mjs'), 'utf8')).toContain('bedrock-2023-05-31');
  expect(readFileSync(join(asset, 'claude-v1.mjs'), 'utf8')).not.toContain('bedrock-2023-05-31');
  expect(readFileSync(join(asset, 'claude-v1.mjs'), 'utf8')).toContain('claude-bedrock.mjs');
  expect(files).toContain('sqs-queue.mjs');
  expect(files.some((file) => /^chunk-\w+\.mjs$/.test(file))).toBe(true);
  for (const file of files)
    expect(readFileSync(join(asset, file), 'utf8').startsWith(LAMBDA_BUNDLING.banner)).toBe(true);
  rmSync(join(asset, 'claude-v1.mjs'));
  rmSync(join(asset, 'claude-bedrock.mjs'));
  rmSync(join(asset, 'sqs-queue.mjs'));
  const exported = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const m = await import(${JSON.stringify(pathToFileURL(index).href)}); console.log(typeof m.handler);`,
    ],
    {
      env: {
        PATH: process.env.PATH ?? '',
        AWS_REGION: 'us-east-1',
        NODE_NO_WARNINGS: '1',
        RUNS_TABLE: 'runs',
        DATA_TABLE: 'data',
        AUTH_TABLE: 'auth',
        SYNTHESIS_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/jobs',
        POWERTOOLS_LOG_LEVEL: 'SILENT',
      },
      encoding: 'utf8',
    },
  );
  expect(exported.trim()).toBe('function');
}, 120_000);
