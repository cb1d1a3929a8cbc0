/*
 * The bulk evaluation's ETag on DynamoDB Local: every change to what a team serves bumps the team's
 * serving version in its own transaction and makes the ETag stale; an unchanged team answers 304,
 * from the version alone once the index has caught up (docs/openfeature.md).
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
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
let http: Record<string, Handler>;
let worker: SqsLambda;
let db: DynamoDBDocumentClient;
let names: TableNames;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  http = await loadHandlers([
    'create-pipeline',
    'record-signals',
    'synthesize-pipeline',
    'approve-synthesis-run',
    'activate-configuration',
    'rollback-pipeline-rollout',
    'promote-pipeline-rollout',
    'delete-pipeline',
    'evaluate-flags',
  ]);
  worker = (await import('../../../lambdas/handlers/process-synthesis-jobs.ts')).handler as SqsLambda;
});

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
});

const call = (entry: string, input: EventInput, caller: Caller) =>
  invoke(http[entry] as Handler, apiEvent({ ...input, principal: caller.principal }));

const evaluateAll = (caller: Caller, ifNoneMatch?: string) =>
  call(
    'evaluate-flags',
    {
      method: 'POST',
      resource: '/ofrep/v1/evaluate/flags',
      body: { context: { targetingKey: 'user-7' } },
      headers: ifNoneMatch ? { 'If-None-Match': ifNoneMatch } : {},
    },
    caller,
  );

const versionKey = (caller: Caller) => ({ pk: `TEAM#${caller.principal.teamId}#SERVING`, sk: 'VERSION' });

async function servingVersion(caller: Caller): Promise<number> {
  const { Item } = await db.send(
    new GetCommand({ TableName: names.Data, Key: versionKey(caller), ConsistentRead: true }),
  );
  return Number(Item?.version ?? 0);
}

/** As if the last change were long past: the index has caught up, ETags are no longer provisional. */
const settle = (caller: Caller) =>
  db.send(
    new UpdateCommand({
      TableName: names.Data,
      Key: versionKey(caller),
      UpdateExpression: 'SET changedAt = :long_ago',
      ExpressionAttributeValues: { ':long_ago': 0 },
    }),
  );

async function newPipeline(caller: Caller) {
  const created = await call(
    'create-pipeline',
    { method: 'POST', resource: '/pipelines', body: { name: 'bot', slots: DEMO_SLOTS } },
    caller,
  );
  expect(created.status).toBe(201);
  return created.body as { id: string; activeConfigurationId: string };
}

/** Approves a generated proposal for the pipeline: its new configuration's id. */
async function approveProposal(caller: Caller, pipelineId: string, body: object) {
  const signals = Array.from({ length: 4 }, (_, i) => ({
    kind: 'timeout',
    severity: 'critical',
    message: `Retrieval timed out after 1500 ms (query ${i})`,
    slotId: 'retrieve',
  }));
  const at = { pathParameters: { pipelineId } };
  await call(
    'record-signals',
    { method: 'POST', resource: '/pipelines/{pipelineId}/signals', ...at, body: { signals } },
    caller,
  );
  const started = await call(
    'synthesize-pipeline',
    { method: 'POST', resource: '/pipelines/{pipelineId}/synthesize', ...at, body: {} },
    caller,
  );
  const message = sqs.commandCalls(SendMessageCommand).at(-1)?.args[0].input.MessageBody as string;
  await worker(sqsEvent([message]), lambdaContext());
  const approved = await call(
    'approve-synthesis-run',
    {
      method: 'POST',
      resource: '/synthesis-runs/{id}/approve',
      pathParameters: { id: started.body.id },
      body,
    },
    caller,
  );
  expect(approved.status).toBe(200);
  return approved.body.appliedConfigurationId as string;
}

describe("the bulk evaluation's ETag follows the team's serving version", () => {
  it('makes the ETag stale on every change to what the team serves, and answers 304 while nothing changes', async () => {
    const team = await createCaller(db, names);
    const empty = await evaluateAll(team);
    expect(empty.status).toBe(200);
    expect(empty.body.flags).toEqual([]);
    let last = { body: empty.body, etag: empty.headers?.etag as string };

    /** The change bumps the version once; the old ETag then gets the new body; the new one a 304. */
    const expectStale = async (change: () => Promise<unknown>) => {
      const before = await servingVersion(team);
      await change();
      expect(await servingVersion(team)).toBe(before + 1);
      // The ETag held is the settled one of the state before: a missed bump would answer it 304.
      const answer = await evaluateAll(team, last.etag);
      expect(answer.status).toBe(200);
      expect(answer.body).not.toEqual(last.body);
      expect(answer.headers?.etag).not.toBe(last.etag);
      // Right after a change the ETag is provisional: checked against the index, still a 304.
      const checked = await evaluateAll(team, answer.headers?.etag as string);
      expect(checked.status).toBe(304);
      await settle(team);
      const confirmed = await evaluateAll(team, answer.headers?.etag as string);
      expect(confirmed.status).toBe(304);
      // Once settled, the ETag the 304 names is decided by the version alone, and still answers 304.
      expect((await evaluateAll(team, confirmed.headers?.etag as string)).status).toBe(304);
      last = { body: answer.body, etag: confirmed.headers?.etag as string };
    };

    let first = { id: '', activeConfigurationId: '' };
    await expectStale(async () => {
      first = await newPipeline(team);
    });
    let second = { id: '', activeConfigurationId: '' };
    await expectStale(async () => {
      second = await newPipeline(team);
    });
    const at = { pathParameters: { pipelineId: first.id }, body: null };
    await expectStale(() => approveProposal(team, first.id, { rollout: { percent: 50 } }));
    await expectStale(() =>
      call(
        'rollback-pipeline-rollout',
        { method: 'POST', resource: '/pipelines/{pipelineId}/rollout/rollback', ...at },
        team,
      ),
    );
    await expectStale(() => approveProposal(team, first.id, { rollout: { percent: 50 } }));
    await expectStale(() =>
      call(
        'promote-pipeline-rollout',
        { method: 'POST', resource: '/pipelines/{pipelineId}/rollout/promote', ...at },
        team,
      ),
    );
    await expectStale(() =>
      call(
        'activate-configuration',
        {
          method: 'POST',
          resource: '/pipelines/{pipelineId}/configurations/{configurationId}/activate',
          pathParameters: { pipelineId: first.id, configurationId: first.activeConfigurationId },
          body: {},
        },
        team,
      ),
    );
    await expectStale(() => approveProposal(team, second.id, {}));
    await expectStale(() =>
      call(
        'delete-pipeline',
        { method: 'DELETE', resource: '/pipelines/{pipelineId}', pathParameters: { pipelineId: second.id } },
        team,
      ),
    );
    expect(last.body.flags.map((flag: { key: string }) => flag.key)).toEqual([first.id]);
  });

  it('counts changes to several pipelines of a team made at the same moment, each one', async () => {
    const team = await createCaller(db, names);
    const etag = (await evaluateAll(team)).headers?.etag as string;

    const created = await Promise.all(Array.from({ length: 6 }, () => newPipeline(team)));

    expect(await servingVersion(team)).toBe(6);
    const answer = await evaluateAll(team, etag);
    expect(answer.status).toBe(200);
    expect(answer.body.flags).toHaveLength(created.length);
  });

  it('keeps the ETags of two teams, and of two targeting keys, apart', async () => {
    const [one, two] = [await createCaller(db, names), await createCaller(db, names)];
    await newPipeline(one);
    await newPipeline(two);
    await Promise.all([settle(one), settle(two)]);
    const ofOne = await evaluateAll(one);

    expect((await evaluateAll(two, ofOne.headers?.etag as string)).status).toBe(200);
    const otherKey = await call(
      'evaluate-flags',
      {
        method: 'POST',
        resource: '/ofrep/v1/evaluate/flags',
        body: { context: { targetingKey: 'user-8' } },
        headers: { 'If-None-Match': ofOne.headers?.etag as string },
      },
      one,
    );
    expect(otherKey.status).toBe(200);
    expect((await evaluateAll(one, ofOne.headers?.etag as string)).status).toBe(304);
  });
});
