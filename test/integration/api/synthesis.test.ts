import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { nanoid } from 'nanoid';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CONFIGURATION_PREFIX, pipelinePartition } from '../../../lambdas/store/keys.ts';
import { makeRunRepository } from '../../../lambdas/store/runs.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { DEMO_SLOTS } from '../../../local/seed.ts';
import {
  apiEvent,
  type Caller,
  createCaller,
  type HttpLambda as Handler,
  invoke,
  lambdaContext,
  loadHandlers,
  type SqsLambda,
  setUpApiEnvironment,
  sqsEvent,
  TEST_QUEUE_URL,
} from './harness.ts';

const sqs = mockClient(SQSClient);
let db: DynamoDBDocumentClient;
let names: TableNames;
let admin: Caller;
let otherTeam: Caller;
let viewer: Caller;
let http: Record<string, Handler>;
let worker: SqsLambda;
let deadLetters: SqsLambda;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  [admin, otherTeam, viewer] = await Promise.all([
    createCaller(db, names),
    createCaller(db, names),
    createCaller(db, names, 'viewer'),
  ]);
  const entries = [
    'create-pipeline',
    'record-signals',
    'record-executions',
    'synthesize-pipeline',
    'get-synthesis-run',
  ];
  http = await loadHandlers(entries);
  worker = (await import('../../../lambdas/handlers/process-synthesis-jobs.ts')).handler as SqsLambda;
  deadLetters = (await import('../../../lambdas/handlers/fail-dead-synthesis-jobs.ts')).handler as SqsLambda;
});

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
});

function sentJobs(): string[] {
  return sqs.commandCalls(SendMessageCommand).map((call) => call.args[0].input.MessageBody as string);
}

async function pipelineWithEvidence(caller: Caller = admin) {
  const pipeline = (
    await invoke(
      http['create-pipeline'] as Handler,
      apiEvent({
        method: 'POST',
        resource: '/pipelines',
        body: { name: 'bot', slots: DEMO_SLOTS },
        principal: caller.principal,
      }),
    )
  ).body;
  const signals = [
    ...Array.from({ length: 5 }, (_, i) => ({
      kind: 'timeout',
      severity: 'critical',
      message: `Retrieval timed out after 1500 ms #${i}`,
      slotId: 'retrieve',
    })),
    ...Array.from({ length: 3 }, () => ({
      kind: 'truncation',
      severity: 'warning',
      message: 'stop_reason max_tokens',
      slotId: 'answer-model',
    })),
  ];
  await invoke(
    http['record-signals'] as Handler,
    apiEvent({
      method: 'POST',
      resource: '/pipelines/{pipelineId}/signals',
      pathParameters: { pipelineId: pipeline.id },
      body: { signals },
      principal: caller.principal,
    }),
  );
  return pipeline;
}

function synthesize(pipelineId: string, caller: Caller = admin, body: object | undefined = {}) {
  return invoke(
    http['synthesize-pipeline'] as Handler,
    apiEvent({
      method: 'POST',
      resource: '/pipelines/{pipelineId}/synthesize',
      pathParameters: { pipelineId },
      body,
      principal: caller.principal,
    }),
  );
}

function getRun(id: string, caller: Caller = admin) {
  return invoke(
    http['get-synthesis-run'] as Handler,
    apiEvent({
      method: 'GET',
      resource: '/synthesis-runs/{id}',
      pathParameters: { id },
      principal: caller.principal,
    }),
  );
}

describe('POST /pipelines/{pipelineId}/synthesize', () => {
  it('answers 202 with a pending run and its Location, and queues exactly one job for it', async () => {
    const pipeline = await pipelineWithEvidence();
    const response = await synthesize(pipeline.id);

    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({
      status: 'pending',
      pipelineId: pipeline.id,
      teamId: admin.principal.teamId,
      synthesisHandler: 'heuristic-v1',
      baseConfigurationId: pipeline.activeConfigurationId,
      proposedConfigurationId: null,
      diagnosis: null,
      confidence: null,
      triggeredBy: admin.principal.userId,
    });
    expect(response.body.id).toMatch(/^[A-Za-z0-9_-]{21}$/);
    expect(response.headers.location).toBe(`/prod/synthesis-runs/${response.body.id}`);
    const jobs = sentJobs();
    expect(jobs).toHaveLength(1);
    expect(JSON.parse(jobs[0] as string)).toEqual({
      runId: response.body.id,
      jobId: response.body.jobId,
      teamId: response.body.teamId,
    });
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input.MessageGroupId).toBe(response.body.teamId);
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input.QueueUrl).toBe(TEST_QUEUE_URL);
  });

  it('accepts an absent body and refuses an unknown handler, a bad body, a viewer and another team', async () => {
    const pipeline = await pipelineWithEvidence();
    expect((await synthesize(pipeline.id, admin, undefined)).status).toBe(202);
    const unknown = await synthesize(pipeline.id, admin, { synthesisHandler: 'gpt-magic' });
    expect(unknown).toMatchObject({ status: 400, body: { error: 'VALIDATION_ERROR' } });
    expect(unknown.body.details).toContainEqual({
      path: 'synthesisHandler',
      message: 'must be one of heuristic-v1, claude-v1',
    });
    expect((await synthesize(pipeline.id, admin, { synthesisHandler: 7 })).status).toBe(400);
    expect(await synthesize(pipeline.id, viewer)).toMatchObject({
      status: 403,
      body: { error: 'FORBIDDEN' },
    });
    expect(await synthesize(pipeline.id, otherTeam)).toMatchObject({
      status: 403,
      body: { error: 'FORBIDDEN' },
    });
    expect(await synthesize('missing-pipeline')).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
  });

  it('fails the run instead of leaving it pending when the job cannot be queued, and answers 503', async () => {
    const pipeline = await pipelineWithEvidence();
    sqs
      .on(SendMessageCommand)
      .rejects(Object.assign(new Error('queue down'), { name: 'ServiceUnavailable' }));

    const response = await synthesize(pipeline.id);

    expect(response.status).toBe(503);
    expect(response.body).toEqual({
      error: 'SERVICE_UNAVAILABLE',
      message: expect.stringContaining('could not be queued'),
    });
    const runs = makeRunRepository(db, { runs: names.Runs, events: names.Events });
    const [stored] = (await runs.listByPipeline(pipeline.id, { limit: 10 })).items;
    expect(stored).toMatchObject({
      status: 'failed',
      errorMessage: expect.stringContaining('could not be queued'),
    });
  });
});

describe('the synthesis worker', () => {
  it('generates a proposal that cites real signals, targets real slots and stores the proposed configuration', async () => {
    const pipeline = await pipelineWithEvidence();
    const started = await synthesize(pipeline.id);

    const result = await worker(sqsEvent(sentJobs()), lambdaContext());

    expect(result.batchItemFailures).toEqual([]);
    const run = (await getRun(started.body.id)).body;
    expect(run.status).toBe('generated');
    expect(run.generationStartedAt).toEqual(expect.any(String));
    expect(run.generationCompletedAt).toEqual(expect.any(String));
    expect(run.diagnosis.findings.length).toBeGreaterThan(0);
    const signalIds = new Set(run.analyzedSignalIds);
    for (const finding of run.diagnosis.findings) {
      expect(finding.signalIds.length).toBeGreaterThan(0);
      for (const id of finding.signalIds) expect(signalIds.has(id)).toBe(true);
    }
    const slotIds = new Set(DEMO_SLOTS.map((slot) => slot.id));
    expect(run.changes.length).toBeGreaterThan(0);
    for (const change of run.changes) expect(slotIds.has(change.slotId)).toBe(true);
    expect(run.explanation).toContain(run.diagnosis.summary);
    expect(run.warnings).toEqual(run.structuredWarnings.map((w: { message: string }) => w.message));

    const configuration = await (await import('../../../lambdas/operations/get-configuration.ts')).handler(
      apiEvent({
        method: 'GET',
        resource: '/pipelines/{pipelineId}/configurations/{configurationId}',
        pathParameters: { pipelineId: pipeline.id, configurationId: run.proposedConfigurationId },
        principal: admin.principal,
      }),
      lambdaContext(),
    );
    const proposed = JSON.parse(configuration.body);
    expect(proposed).toMatchObject({ version: 2, source: 'synthesis', synthesisRunId: run.id });
    const retrieve = proposed.slots.find((slot: { id: string }) => slot.id === 'retrieve');
    expect(retrieve.settings.timeoutMs).toBeGreaterThan(1500);
  });

  it('generates once when the same job is delivered twice', async () => {
    const pipeline = await pipelineWithEvidence();
    const started = await synthesize(pipeline.id);
    const [job] = sentJobs();

    await Promise.all([
      worker(sqsEvent([job as string]), lambdaContext()),
      worker(sqsEvent([job as string], 2), lambdaContext()),
    ]);
    const first = (await getRun(started.body.id)).body;
    await worker(sqsEvent([job as string], 3), lambdaContext());
    const again = (await getRun(started.body.id)).body;

    expect(first.status).toBe('generated');
    expect(again).toEqual(first);
    const { Items = [] } = await db.send(
      new (await import('@aws-sdk/lib-dynamodb')).QueryCommand({
        TableName: names.Data,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :c)',
        ExpressionAttributeValues: {
          ':pk': pipelinePartition(pipeline.id),
          ':c': CONFIGURATION_PREFIX,
        },
      }),
    );
    expect(Items).toHaveLength(2); // the base and exactly one proposal
  });

  it('drops a message that is not a job without failing the batch, and reports a transient failure for retry', async () => {
    const result = await worker(sqsEvent(['not json', '{"runId": 5}']), lambdaContext());
    expect(result.batchItemFailures).toEqual([]);
  });

  it('lets the dead-letter handler fail a run whose job died, and leaves a finished run alone', async () => {
    const pipeline = await pipelineWithEvidence();
    const dead = await synthesize(pipeline.id);
    const finished = await synthesize(pipeline.id);
    const [deadJob, finishedJob] = sentJobs();
    await worker(sqsEvent([finishedJob as string]), lambdaContext());

    await deadLetters(sqsEvent([deadJob as string, finishedJob as string], 3), lambdaContext());

    const deadRun = (await getRun(dead.body.id)).body;
    expect(deadRun).toMatchObject({ status: 'failed', errorMessage: expect.stringContaining('dead-letter') });
    expect((await getRun(finished.body.id)).body.status).toBe('generated');
  });
});

describe('GET /synthesis-runs/{id}', () => {
  it('answers 404 for an unknown run and for an id that cannot be one, 403 for another team', async () => {
    const pipeline = await pipelineWithEvidence();
    const started = await synthesize(pipeline.id);
    expect(await getRun(nanoid())).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
    expect(await getRun('short')).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
    expect(await getRun('x'.repeat(3000))).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
    expect(await getRun(started.body.id, otherTeam)).toMatchObject({
      status: 403,
      body: { error: 'FORBIDDEN' },
    });
    expect((await getRun(started.body.id, viewer)).status).toBe(403); // viewer of another team
  });
});
