/*
 * The per-batch guardrail through the handlers on DynamoDB Local: POST …/executions queues a check
 * for an active rollout (SQS mocked: the message is captured), and the guardrail queue's consumer
 * (lambdas/handlers/judge-rollouts.ts) judges the rollout it names: no sweeper involved.
 */

import { ChangeMessageVisibilityCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listTeamEvents } from '../../../lambdas/store/events.ts';
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
  TEST_GUARDRAIL_QUEUE_URL,
  TEST_QUEUE_URL,
} from './harness.ts';

const sqs = mockClient(SQSClient);
let admin: Caller;
let http: Record<string, Handler>;
let worker: SqsLambda;
let judge: (event: SQSEvent) => Promise<SQSBatchResponse>;
let db: DynamoDBDocumentClient;
let names: TableNames;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  admin = await createCaller(db, names);
  http = await loadHandlers([
    'create-pipeline',
    'record-signals',
    'record-executions',
    'synthesize-pipeline',
    'get-synthesis-run',
    'approve-synthesis-run',
    'get-pipeline-rollout',
    'rollback-pipeline-rollout',
  ]);
  worker = (await import('../../../lambdas/handlers/process-synthesis-jobs.ts')).handler as SqsLambda;
  judge = (await import('../../../lambdas/handlers/judge-rollouts.ts')).handler;
});

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
  sqs.on(ChangeMessageVisibilityCommand).resolves({});
});

const call = (entry: string, input: Omit<Parameters<typeof apiEvent>[0], 'principal'>) =>
  invoke(http[entry] as Handler, apiEvent({ ...input, principal: admin.principal }));

/** The messages sent to a queue, as bodies. */
const sentTo = (queueUrl: string) =>
  sqs
    .commandCalls(SendMessageCommand)
    .filter((sent) => sent.args[0].input.QueueUrl === queueUrl)
    .map((sent) => sent.args[0].input);

/** A pipeline with a generated run, approved as a rollout of 50 % with a minimum of 30 a arm. */
async function pipelineInRollout(rollout: object = { percent: 50, minExecutions: 30 }) {
  const pipeline = (
    await call('create-pipeline', {
      method: 'POST',
      resource: '/pipelines',
      body: { name: 'bot', slots: DEMO_SLOTS },
    })
  ).body as { id: string; activeConfigurationId: string };
  await call('record-signals', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/signals',
    pathParameters: { pipelineId: pipeline.id },
    body: {
      signals: Array.from({ length: 4 }, (_, i) => ({
        kind: 'timeout',
        severity: 'critical',
        message: `Retrieval timed out after 1500 ms (query ${i})`,
        slotId: 'retrieve',
      })),
    },
  });
  const started = await call('synthesize-pipeline', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/synthesize',
    pathParameters: { pipelineId: pipeline.id },
    body: {},
  });
  await worker(sqsEvent([sentTo(TEST_QUEUE_URL).at(-1)?.MessageBody as string]), lambdaContext());
  const run = (
    await call('get-synthesis-run', {
      method: 'GET',
      resource: '/synthesis-runs/{id}',
      pathParameters: { id: started.body.id },
    })
  ).body as { id: string; status: string; proposedConfigurationId: string };
  expect(run.status).toBe('generated');
  const approved = await call('approve-synthesis-run', {
    method: 'POST',
    resource: '/synthesis-runs/{id}/approve',
    pathParameters: { id: run.id },
    body: { rollout },
  });
  expect(approved.status).toBe(200);
  sqs.resetHistory();
  return { pipeline, run, rolloutId: approved.body.rolloutId as string };
}

const getRollout = async (pipelineId: string) =>
  (
    await call('get-pipeline-rollout', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}/rollout',
      pathParameters: { pipelineId },
    })
  ).body;

function record(pipelineId: string, executions: object[]) {
  return call('record-executions', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/executions',
    pathParameters: { pipelineId },
    body: { executions },
  });
}

/** `n` executions of a configuration, the first `failed` of them failed. */
const arm = (configurationId: string, n: number, failed: number) =>
  Array.from({ length: n }, (_, i) => ({
    configurationId,
    status: i < failed ? 'failed' : 'succeeded',
    durationMs: 100,
  }));

describe('the guardrail after executions are recorded', () => {
  it('queues one check a batch and rolls a worse candidate back by "system" from it, once for a burst', async () => {
    const { pipeline, run, rolloutId } = await pipelineInRollout();

    const first = await record(pipeline.id, arm(pipeline.activeConfigurationId, 100, 0));
    const second = await record(pipeline.id, arm(run.proposedConfigurationId, 100, 50));

    expect([first.status, second.status]).toEqual([201, 201]);
    const checks = sentTo(TEST_GUARDRAIL_QUEUE_URL);
    expect(checks.map((check) => JSON.parse(check.MessageBody as string))).toEqual([
      { pipelineId: pipeline.id, rolloutId },
      { pipelineId: pipeline.id, rolloutId },
    ]);
    expect(checks[0]?.MessageGroupId).toBe(admin.principal.teamId);

    const bodies = checks.map((check) => check.MessageBody as string);
    expect(await judge(sqsEvent([...bodies, ...bodies]))).toEqual({ batchItemFailures: [] });

    const ended = await getRollout(pipeline.id);
    expect(ended).toMatchObject({ id: rolloutId, status: 'rolled_back', endedBy: 'system' });
    expect(ended.endReason).toContain('50.00 % (50 of 100) on the candidate against 0.00 % (0 of 100)');
    const page = await listTeamEvents(
      db,
      names.Events,
      admin.principal.teamId,
      { pipelineId: pipeline.id },
      { limit: 100 },
    );
    expect(page.items.filter((event) => event.type === 'rollout.rolled_back')).toHaveLength(1);

    // Judged again later (a redelivery): the rollout is no longer active, nothing happens.
    expect(await judge(sqsEvent([bodies[0] as string]))).toEqual({ batchItemFailures: [] });
    expect(await getRollout(pipeline.id)).toEqual(ended);
  });

  it('keeps a rollout below its minimum active, and leaves one a person ended alone', async () => {
    const { pipeline, run, rolloutId } = await pipelineInRollout();
    await record(pipeline.id, [
      ...arm(pipeline.activeConfigurationId, 10, 0),
      ...arm(run.proposedConfigurationId, 10, 9),
    ]);
    const body = sentTo(TEST_GUARDRAIL_QUEUE_URL)[0]?.MessageBody as string;

    expect(await judge(sqsEvent([body]))).toEqual({ batchItemFailures: [] });
    expect(await getRollout(pipeline.id)).toMatchObject({ id: rolloutId, status: 'active' });

    const rolledBack = await call('rollback-pipeline-rollout', {
      method: 'POST',
      resource: '/pipelines/{pipelineId}/rollout/rollback',
      pathParameters: { pipelineId: pipeline.id },
      body: { reason: 'by hand' },
      headers: { 'x-requested-with': 'test' },
    });
    expect(rolledBack.status).toBe(200);
    expect(await judge(sqsEvent([body, 'not a check']))).toEqual({ batchItemFailures: [] });
    expect(await getRollout(pipeline.id)).toMatchObject({
      status: 'rolled_back',
      endedBy: admin.principal.userId,
    });
  });

  it('records the batch when the guardrail queue refuses the check', async () => {
    const { pipeline, rolloutId } = await pipelineInRollout();
    sqs
      .on(SendMessageCommand, { QueueUrl: TEST_GUARDRAIL_QUEUE_URL })
      .rejects(new Error('queue unavailable'));
    const executions = arm(pipeline.activeConfigurationId, 3, 1).map((execution, i) => ({
      ...execution,
      id: `exe-${rolloutId}-${i}`,
    }));

    const recorded = await record(pipeline.id, executions);

    expect(recorded.status).toBe(201);
    expect(recorded.body.executions).toHaveLength(3);
    expect(sentTo(TEST_GUARDRAIL_QUEUE_URL)).toHaveLength(1);
    // They are stored: the same ids again are a 409.
    expect((await record(pipeline.id, executions)).status).toBe(409);
  });

  it('sends nothing for a pipeline without a rollout, or a rollout without guardrails', async () => {
    const plain = (
      await call('create-pipeline', {
        method: 'POST',
        resource: '/pipelines',
        body: { name: 'plain', slots: DEMO_SLOTS },
      })
    ).body as { id: string; activeConfigurationId: string };
    const unguarded = await pipelineInRollout({ percent: 50, minExecutions: 30, autoRollback: false });

    await record(plain.id, arm(plain.activeConfigurationId, 5, 1));
    await record(unguarded.pipeline.id, arm(unguarded.pipeline.activeConfigurationId, 5, 1));

    expect(sentTo(TEST_GUARDRAIL_QUEUE_URL)).toEqual([]);
  });
  it('queues a check for a batch of scores of a guarded signal citing executions, and none for other signals', async () => {
    const guarded = {
      percent: 50,
      minExecutions: 30,
      autoRollback: true,
      guardrails: [{ metric: 'signal', kind: 'relevance', direction: 'higher_is_better', threshold: 0.05 }],
    };
    const { pipeline, run, rolloutId } = await pipelineInRollout(guarded);
    const recorded = await record(pipeline.id, arm(run.proposedConfigurationId, 3, 0));
    const executionIds = (recorded.body.executions as { id: string }[]).map((execution) => execution.id);
    sqs.resetHistory();
    const signals = (body: object[]) =>
      call('record-signals', {
        method: 'POST',
        resource: '/pipelines/{pipelineId}/signals',
        pathParameters: { pipelineId: pipeline.id },
        body: { signals: body },
      });
    const score = (kind: string, executionId?: string) => ({
      kind,
      severity: 'info',
      message: `${kind} score`,
      value: 0.2,
      ...(executionId ? { executionId } : {}),
    });

    // Another kind, and the guarded kind without an execution to count for: nothing to judge.
    expect((await signals([score('tone', executionIds[0]), score('relevance')])).status).toBe(201);
    expect(sentTo(TEST_GUARDRAIL_QUEUE_URL)).toEqual([]);

    expect((await signals(executionIds.map((id) => score('relevance', id)))).status).toBe(201);
    expect(sentTo(TEST_GUARDRAIL_QUEUE_URL).map((check) => JSON.parse(check.MessageBody as string))).toEqual([
      { pipelineId: pipeline.id, rolloutId },
    ]);
  });
});
