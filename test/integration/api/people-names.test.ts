import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeAuthRepository } from '../../../lambdas/wiring/repositories.ts';
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
} from './harness.ts';

/*
 * People are names: the answers that hold actor ids (runs, activations, rollouts, the audit log)
 * carry the person's email or the API token's name beside them, through the operations' handlers.
 */

const sqs = mockClient(SQSClient);
let db: DynamoDBDocumentClient;
let names: TableNames;
let admin: Caller;
let email: string;
let tokenName: string;
let http: Record<string, Handler>;
let worker: SqsLambda;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  admin = await createCaller(db, names);
  const auth = makeAuthRepository(db, names.Auth, names.Events);
  email = (await auth.getUser(admin.principal.userId))?.email ?? '';
  tokenName = (await auth.getApiToken(admin.principal.tokenId ?? ''))?.name ?? '';
  http = await loadHandlers([
    'create-pipeline',
    'record-signals',
    'synthesize-pipeline',
    'get-synthesis-run',
    'list-synthesis-runs',
    'approve-synthesis-run',
    'list-activations',
    'get-pipeline-rollout',
    'rollback-pipeline-rollout',
    'list-audit-events',
  ]);
  worker = (await import('../../../lambdas/handlers/process-synthesis-jobs.ts')).handler as SqsLambda;
});

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
});

const call = (entry: string, input: Parameters<typeof apiEvent>[0]) =>
  invoke(http[entry] as Handler, apiEvent(input));
/** The same person, signed in: actions of a session are named by the person's email. */
const session = () => ({
  ...admin.principal,
  method: 'session' as const,
  tokenId: undefined,
  sessionId: 's1',
});

async function generatedRun() {
  const pipeline = (
    await call('create-pipeline', {
      method: 'POST',
      resource: '/pipelines',
      body: { name: 'named bot', slots: DEMO_SLOTS },
      principal: admin.principal,
    })
  ).body;
  await call('record-signals', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/signals',
    pathParameters: { pipelineId: pipeline.id },
    body: {
      signals: Array.from({ length: 4 }, (_, i) => ({
        kind: 'timeout',
        severity: 'critical',
        message: `Retrieval timed out #${i}`,
        slotId: 'retrieve',
      })),
    },
    principal: admin.principal,
  });
  const started = await call('synthesize-pipeline', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/synthesize',
    pathParameters: { pipelineId: pipeline.id },
    body: {},
    principal: admin.principal,
  });
  const message = sqs.commandCalls(SendMessageCommand).at(-1)?.args[0].input.MessageBody as string;
  await worker(sqsEvent([message]), lambdaContext());
  return { pipelineId: pipeline.id as string, runId: started.body.id as string };
}

describe("people's names beside their ids", () => {
  it('name who started and approved a run, and who activated the configuration', async () => {
    const { pipelineId, runId } = await generatedRun();

    const approved = await call('approve-synthesis-run', {
      method: 'POST',
      resource: '/synthesis-runs/{id}/approve',
      pathParameters: { id: runId },
      principal: session(),
    });
    const read = await call('get-synthesis-run', {
      method: 'GET',
      resource: '/synthesis-runs/{id}',
      pathParameters: { id: runId },
      principal: admin.principal,
    });
    const listed = await call('list-synthesis-runs', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}/synthesis-runs',
      pathParameters: { pipelineId },
      principal: admin.principal,
    });
    const activations = await call('list-activations', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}/activations',
      pathParameters: { pipelineId },
      principal: admin.principal,
    });

    const named = { triggeredByName: email, approvedByName: email, rejectedByName: null };
    expect(approved.body).toMatchObject({ approvedBy: admin.principal.userId, ...named });
    expect(read.body).toMatchObject(named);
    expect(listed.body.items[0]).toMatchObject(named);
    expect(activations.body.items[0]).toMatchObject({
      activatedBy: admin.principal.userId,
      activatedByName: email,
    });
  });

  it("name a rollout's starter and ender", async () => {
    const { pipelineId, runId } = await generatedRun();
    await call('approve-synthesis-run', {
      method: 'POST',
      resource: '/synthesis-runs/{id}/approve',
      pathParameters: { id: runId },
      body: { rollout: { percent: 50 } },
      principal: session(),
    });

    const active = await call('get-pipeline-rollout', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}/rollout',
      pathParameters: { pipelineId },
      principal: admin.principal,
    });
    const ended = await call('rollback-pipeline-rollout', {
      method: 'POST',
      resource: '/pipelines/{pipelineId}/rollout/rollback',
      pathParameters: { pipelineId },
      principal: session(),
    });

    expect(active.body).toMatchObject({ startedByName: email, endedByName: null });
    expect(ended.body).toMatchObject({ startedByName: email, endedByName: email });
  });

  it("name each audit event's actor: the API token by its name, a session by the person's email", async () => {
    const { runId } = await generatedRun();
    await call('approve-synthesis-run', {
      method: 'POST',
      resource: '/synthesis-runs/{id}/approve',
      pathParameters: { id: runId },
      principal: admin.principal,
    });

    const events = await call('list-audit-events', {
      method: 'GET',
      resource: '/audit-events',
      query: { type: 'synthesis_run.approved' },
      principal: session(),
    });
    const created = await call('list-audit-events', {
      method: 'GET',
      resource: '/audit-events',
      query: { type: 'api_token.created' },
      principal: session(),
    });

    expect(events.body.items[0].data.actor).toEqual({
      userId: admin.principal.userId,
      credential: 'api_token',
      tokenId: admin.principal.tokenId,
      // The person and the token they acted through, never the token's name alone.
      name: `${email} (API token "${tokenName}")`,
    });
    // The pipeline by its name and the configuration by its version, beside their ids.
    expect(events.body.items[0].data).toMatchObject({ pipelineName: 'named bot', configurationVersion: 2 });
    expect(created.body.items[0].data.actor).toMatchObject({ credential: 'system', name: 'system' });
  });
});
