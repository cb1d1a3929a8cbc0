/*
 * OpenFeature's remote evaluation (OFREP) through the operations' handlers on DynamoDB Local: the
 * same arm as serving-configuration for the same key, the bulk evaluation's ETag, and every error
 * in OFREP's own shapes (docs/openfeature.md).
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TableNames } from '../../../local/dynamodb.ts';
import { DEMO_SLOTS } from '../../../local/seed.ts';
import {
  apiEvent,
  type Caller,
  createCaller,
  type EventInput,
  type HttpLambda as Handler,
  invoke,
  lambdaContext,
  loadHandlers,
  type SqsLambda,
  setUpApiEnvironment,
  sqsEvent,
} from './harness.ts';

const sqs = mockClient(SQSClient);
let admin: Caller;
let stranger: Caller;
let http: Record<string, Handler>;
let worker: SqsLambda;
let db: DynamoDBDocumentClient;
let names: TableNames;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  admin = await createCaller(db, names);
  stranger = await createCaller(db, names);
  http = await loadHandlers([
    'create-pipeline',
    'record-signals',
    'synthesize-pipeline',
    'get-synthesis-run',
    'approve-synthesis-run',
    'get-serving-configuration',
    'delete-pipeline',
    'evaluate-flag',
    'evaluate-flags',
  ]);
  worker = (await import('../../../lambdas/handlers/process-synthesis-jobs.ts')).handler as SqsLambda;
});

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
});

const call = (entry: string, input: EventInput, caller: Caller | null = admin) =>
  invoke(
    http[entry] as Handler,
    apiEvent({ ...input, ...(caller === null ? {} : { principal: caller.principal }) }),
  );

const evaluate = (key: string, body: unknown, caller: Caller | null = admin) =>
  call(
    'evaluate-flag',
    {
      method: 'POST',
      resource: '/ofrep/v1/evaluate/flags/{key}',
      pathParameters: { key },
      body: body as object,
    },
    caller,
  );
const evaluateAll = (body: unknown, ifNoneMatch?: string, caller: Caller = admin) =>
  call(
    'evaluate-flags',
    {
      method: 'POST',
      resource: '/ofrep/v1/evaluate/flags',
      body: body as object,
      headers: ifNoneMatch ? { 'If-None-Match': ifNoneMatch } : {},
    },
    caller,
  );
const serve = (pipelineId: string, routingKey: string) =>
  call('get-serving-configuration', {
    method: 'GET',
    resource: '/pipelines/{pipelineId}/serving-configuration',
    pathParameters: { pipelineId },
    query: { routingKey },
  });

async function newPipeline(caller: Caller = admin) {
  const created = await call(
    'create-pipeline',
    { method: 'POST', resource: '/pipelines', body: { name: 'bot', slots: DEMO_SLOTS } },
    caller,
  );
  expect(created.status).toBe(201);
  return created.body as { id: string; activeConfigurationId: string };
}

/** A pipeline whose proposal is served to `percent` of the routing keys. */
async function inRollout(percent: number) {
  const pipeline = await newPipeline();
  const signals = Array.from({ length: 4 }, (_, i) => ({
    kind: 'timeout',
    severity: 'critical',
    message: `Retrieval timed out after 1500 ms (query ${i})`,
    slotId: 'retrieve',
  }));
  const recorded = await call('record-signals', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/signals',
    pathParameters: { pipelineId: pipeline.id },
    body: { signals },
  });
  expect(recorded.status).toBe(201);
  const started = await call('synthesize-pipeline', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/synthesize',
    pathParameters: { pipelineId: pipeline.id },
    body: {},
  });
  const message = sqs.commandCalls(SendMessageCommand).at(-1)?.args[0].input.MessageBody as string;
  await worker(sqsEvent([message]), lambdaContext());
  const approved = await call('approve-synthesis-run', {
    method: 'POST',
    resource: '/synthesis-runs/{id}/approve',
    pathParameters: { id: started.body.id },
    body: { rollout: { percent } },
  });
  expect(approved.status).toBe(200);
  return {
    pipeline,
    rolloutId: approved.body.rolloutId as string,
    candidateId: approved.body.appliedConfigurationId as string,
  };
}

describe('evaluating one flag (POST /ofrep/v1/evaluate/flags/{key})', () => {
  it('answers the active configuration outside a rollout: variant its id, reason STATIC, arm base', async () => {
    const pipeline = await newPipeline();

    const answer = await evaluate(pipeline.id, { context: { targetingKey: 'user-1' } });

    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      key: pipeline.id,
      value: { configurationId: pipeline.activeConfigurationId, version: 1, slots: DEMO_SLOTS },
      variant: pipeline.activeConfigurationId,
      reason: 'STATIC',
      metadata: { arm: 'base', version: 1 },
    });
  });

  it('gives every targeting key the arm serving-configuration gives the same routing key, reason SPLIT', async () => {
    const { pipeline, rolloutId, candidateId } = await inRollout(50);
    const variants = new Set<string>();

    for (let i = 0; i < 40; i++) {
      const key = `conversation-${i}`;
      const [flag, served] = await Promise.all([
        evaluate(pipeline.id, { context: { targetingKey: key, plan: 'pro' } }),
        serve(pipeline.id, key),
      ]);
      expect(flag.body.variant).toBe(served.body.configuration.id);
      expect(flag.body.value.configurationId).toBe(served.body.configuration.id);
      expect(flag.body.reason).toBe('SPLIT');
      expect(flag.body.metadata).toEqual({
        rolloutId,
        arm: served.body.arm === 'active' ? 'base' : 'candidate',
        version: served.body.configuration.version,
      });
      variants.add(flag.body.variant);
    }
    expect(variants).toEqual(new Set([pipeline.activeConfigurationId, candidateId]));
  });

  it('answers any credential of the team, a viewer included', async () => {
    const pipeline = await newPipeline();
    const viewer = { ...admin, principal: { ...admin.principal, role: 'viewer' as const } };

    expect((await evaluate(pipeline.id, { context: {} }, viewer)).status).toBe(200);
  });
});

describe('OFREP errors in OFREP shapes', () => {
  it('answers 404 FLAG_NOT_FOUND alike for an unknown key, a key that is no id, another team’s pipeline and a deleted one', async () => {
    const foreign = await newPipeline(stranger);
    const deleted = await newPipeline();
    const removed = await call('delete-pipeline', {
      method: 'DELETE',
      resource: '/pipelines/{pipelineId}',
      pathParameters: { pipelineId: deleted.id },
    });
    expect(removed.status).toBe(202);

    for (const key of ['no-such-pipeline', 'not an id!', foreign.id, deleted.id]) {
      const answer = await evaluate(key, { context: { targetingKey: 'user-1' } });
      expect(answer.status, key).toBe(404);
      expect(answer.body).toEqual({
        key,
        errorCode: 'FLAG_NOT_FOUND',
        errorDetails: expect.stringContaining('No pipeline of your team has the id'),
      });
    }
  });

  it('answers 400 PARSE_ERROR to a body that is not JSON and INVALID_CONTEXT to a context outside its schema', async () => {
    const pipeline = await newPipeline();

    const notJson = await evaluate(pipeline.id, '{"context": ');
    const noContext = await evaluate(pipeline.id, {});
    const longKey = await evaluate(pipeline.id, { context: { targetingKey: 'k'.repeat(257) } });
    const numberKey = await evaluateAll({ context: { targetingKey: 42 } });

    expect([notJson.status, noContext.status, longKey.status, numberKey.status]).toEqual([
      400, 400, 400, 400,
    ]);
    expect(notJson.body).toEqual({
      key: pipeline.id,
      errorCode: 'PARSE_ERROR',
      errorDetails: expect.any(String),
    });
    expect(noContext.body).toMatchObject({ key: pipeline.id, errorCode: 'INVALID_CONTEXT' });
    expect(longKey.body).toMatchObject({ key: pipeline.id, errorCode: 'INVALID_CONTEXT' });
    expect(longKey.body.errorDetails).toContain('context.targetingKey');
    expect(numberKey.body).toEqual({ errorCode: 'INVALID_CONTEXT', errorDetails: expect.any(String) });
  });

  it('answers 401 without a credential, as every operation does', async () => {
    const pipeline = await newPipeline();

    const answer = await evaluate(pipeline.id, { context: {} }, null);

    expect(answer.status).toBe(401);
    expect(answer.headers?.['www-authenticate']).toBe('Bearer');
  });
});

describe('evaluating every flag of the team (POST /ofrep/v1/evaluate/flags)', () => {
  it('evaluates each pipeline of the team only, with an ETag that answers 304 until an arm changes', async () => {
    const team = await createCaller(db, names);
    const first = await newPipeline(team);
    const second = await newPipeline(team);
    await newPipeline(stranger);

    const all = await evaluateAll({ context: { targetingKey: 'user-7' } }, undefined, team);

    expect(all.status).toBe(200);
    expect(all.body.flags.map((flag: { key: string }) => flag.key).sort()).toEqual(
      [first.id, second.id].sort(),
    );
    const single = await evaluate(first.id, { context: { targetingKey: 'user-7' } }, team);
    expect(all.body.flags.find((flag: { key: string }) => flag.key === first.id)).toEqual(single.body);
    const etag = all.headers?.etag as string;
    const again = await evaluateAll({ context: { targetingKey: 'user-7' } }, etag, team);
    expect(again.status).toBe(304);
    expect(again.body).toBeNull();
    const third = await newPipeline(team);
    const changed = await evaluateAll({ context: { targetingKey: 'user-7' } }, etag, team);
    expect(changed.status).toBe(200);
    expect(changed.body.flags).toHaveLength(3);
    expect(changed.body.flags.map((flag: { key: string }) => flag.key)).toContain(third.id);
  });
});

describe('the bulk evaluation during a rollout', () => {
  it('gives each targeting key the arm the single evaluation gives it, and a new ETag when the arm differs', async () => {
    const { pipeline } = await inRollout(50);
    const etags = new Map<string, string>();

    for (let i = 0; i < 10; i++) {
      const context = { context: { targetingKey: `user-${i}` } };
      const [all, single] = await Promise.all([evaluateAll(context), evaluate(pipeline.id, context)]);
      expect(all.body.flags.find((flag: { key: string }) => flag.key === pipeline.id)).toEqual(single.body);
      etags.set(single.body.metadata.arm, all.headers.etag as string);
    }
    expect([...etags.keys()].sort()).toEqual(['base', 'candidate']);
    expect(etags.get('base')).not.toBe(etags.get('candidate'));
  });
});
