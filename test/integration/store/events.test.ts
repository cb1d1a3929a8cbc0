import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { nanoid } from 'nanoid';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { hashApiToken } from '../../../lambdas/auth/api-token.ts';
import { newEvent, runEvent, SYSTEM_ACTOR } from '../../../lambdas/core/events.ts';
import type { ApprovalPlan } from '../../../lambdas/core/ports/review.ts';
import type { RunRepository } from '../../../lambdas/core/ports/runs.ts';
import { newPendingRun } from '../../../lambdas/core/run-state.ts';
import type { Activation, ServingState } from '../../../lambdas/core/schemas/pipelines.ts';
import type { SynthesisRun } from '../../../lambdas/core/schemas/runs.ts';
import { EVENT_RELAY } from '../../../lambdas/functions.ts';
import { CARRIED_EVENT_ATTRIBUTE, listTeamEvents } from '../../../lambdas/store/events.ts';
import { makePipelineRepository } from '../../../lambdas/store/pipelines.ts';
import { makeRunRepository } from '../../../lambdas/store/runs.ts';
import { makeAuthRepository } from '../../../lambdas/wiring/repositories.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { startStreamSource } from '../../../local/streams/stream-source.ts';
import { waitFor } from '../../support/wait.ts';
import { setUpApiEnvironment } from '../api/harness.ts';

let db: DynamoDBDocumentClient;
let names: TableNames;
let runs: RunRepository;

/** The raw client the local stream source reads DynamoDB Local's Streams API with. */
const rawClient = new DynamoDBClient({
  endpoint: inject('dynamodbEndpoint'),
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});

const REVIEWER = { userId: 'u2', credential: 'api_token', tokenId: 'tok1' } as const;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  runs = makeRunRepository(db, { runs: names.Runs, data: names.Data, events: names.Events });
});

const eventsOf = async (teamId: string, filter = {}) =>
  (await listTeamEvents(db, names.Events, teamId, filter, { limit: 100 })).items;

/** A generated run of a fresh pipeline of a fresh team, through the store. */
async function generatedRun() {
  const teamId = nanoid();
  const pipelines = makePipelineRepository(db, names.Data, names.Events);
  const pipelineId = nanoid();
  const at = new Date().toISOString();
  await pipelines.createPipeline(
    { id: pipelineId, teamId, name: 'p', activeConfigurationId: 'c1', createdAt: at },
    {
      id: 'c1',
      pipelineId,
      version: 1,
      slots: [{ id: 's', name: 's', kind: 'model', settings: {} }],
      source: 'manual',
      createdAt: at,
      createdBy: 'u1',
    },
  );
  const run: SynthesisRun = newPendingRun({
    id: nanoid(),
    pipelineId,
    teamId,
    synthesisHandler: 'heuristic-v1',
    baseConfigurationId: 'c1',
    jobId: nanoid(),
    createdAt: at,
    triggeredBy: 'u1',
  });
  await runs.create(run);
  const claim = await runs.claim(run.id, at, new Date(0).toISOString());
  if (claim.outcome !== 'claimed') throw new Error('not claimed');
  const proposalId = nanoid();
  const generated = await runs.completeGenerated(
    { ...claim.run, status: 'generated', proposedConfigurationId: proposalId },
    {
      id: proposalId,
      pipelineId,
      slots: [{ id: 's', name: 's', kind: 'model', settings: { temperature: 0 } }],
      source: 'synthesis',
      synthesisRunId: run.id,
      createdAt: at,
      createdBy: 'u1',
    },
    at,
    runEvent(run, 'generated', at, SYSTEM_ACTOR, { configurationId: proposalId }),
  );
  const activation = {
    id: nanoid(),
    pipelineId,
    configurationId: proposalId,
    version: 2,
    previousConfigurationId: 'c1',
    previousVersion: 1,
    source: 'approval' as const,
    synthesisRunId: run.id,
    reason: null,
    summary: 'approved',
    activatedAt: at,
    activatedBy: 'u2',
  };
  return { run: generated, teamId, pipelineId, activation, pipelines };
}

describe('the transactional outbox on DynamoDB Local', () => {
  it('writes synthesis_run.generated with the proposal, actor system, ids only', async () => {
    const { run, teamId, pipelineId } = await generatedRun();
    const events = await eventsOf(teamId);
    expect(events).toEqual([
      {
        id: `evt_${run.id}_synthesis_run_generated`,
        type: 'synthesis_run.generated',
        timestamp: expect.any(String),
        data: {
          teamId,
          pipelineId,
          runId: run.id,
          configurationId: run.proposedConfigurationId,
          status: 'generated',
          actor: { userId: 'system', credential: 'system' },
        },
      },
    ]);
  });

  it('writes approved and activated with the approval, and nothing for a refused approval', async () => {
    const { run, teamId, activation } = await generatedRun();
    const at = new Date(Date.now() + 1000).toISOString();
    const approvedEvent = runEvent(run, 'approved', at, REVIEWER);
    const activated = newEvent(
      'configuration.activated',
      { teamId, pipelineId: run.pipelineId, configurationId: activation.configurationId, actor: REVIEWER },
      { at, key: activation.id },
    );
    await runs.approve(run, { at, by: 'u2' }, planOf(activation), [approvedEvent, activated]);
    // A second approval is refused: its events are not written.
    const later = new Date(Date.now() + 2000).toISOString();
    await expect(
      runs.approve(run, { at: later, by: 'u2' }, planOf({ ...activation, id: nanoid() }), [
        runEvent(run, 'approved', later, REVIEWER),
      ]),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(
      runs.reject(run, { at: later, by: 'u2', reason: null }, runEvent(run, 'rejected', later, REVIEWER)),
    ).rejects.toMatchObject({ code: 'CONFLICT' });

    const types = (await eventsOf(teamId)).map((event) => event.type);
    expect(types.sort()).toEqual([
      'configuration.activated',
      'synthesis_run.approved',
      'synthesis_run.generated',
    ]);
    const [approved] = await eventsOf(teamId, { type: 'synthesis_run.approved' });
    expect(approved?.data.actor).toEqual({ userId: 'u2', credential: 'api_token', tokenId: 'tok1' });
  });

  it('carries rejected in the run, relayed once from the runs stream; failing a finished run writes no event', async () => {
    const { run, teamId } = await generatedRun();
    const at = new Date().toISOString();
    const rejected = runEvent(run, 'rejected', at, REVIEWER);
    await runs.reject(run, { at, by: 'u2', reason: 'no' }, rejected);
    expect(
      await runs.fail(
        run.id,
        'late',
        at,
        ['pending', 'generating'],
        undefined,
        runEvent(run, 'failed', at, SYSTEM_ACTOR),
      ),
    ).toBeNull();
    // The one UpdateItem wrote the rejection and its event together, in the run.
    const { Item } = await db.send(new GetCommand({ TableName: names.Runs, Key: { id: run.id } }));
    expect(Item).toMatchObject({ status: 'rejected', rejectionReason: 'no' });
    expect(JSON.parse(String(Item?.[CARRIED_EVENT_ATTRIBUTE]))).toEqual(rejected);

    // The relay, on the runs table's real stream with the event source's filter.
    const { handler } = await import('../../../lambdas/handlers/relay-carried-events.ts');
    const [runsSource] = EVENT_RELAY.trigger.streams;
    if (runsSource?.table !== 'Runs') throw new Error('the relay reads the runs stream first');
    const { table: _table, batchSize, ...filter } = runsSource;
    const invocations: DynamoDBStreamEvent[] = [];
    const source = await startStreamSource({
      client: rawClient,
      tableName: names.Runs,
      batchSize,
      filter,
      region: 'us-east-1',
      pollIntervalMs: 10,
      log: () => undefined,
      invoke: async (event) => {
        invocations.push(event);
        return handler(event);
      },
    });
    try {
      await waitFor(
        async () => (await eventsOf(teamId, { type: 'synthesis_run.rejected' })).length === 1,
        'the relayed rejection',
      );
      // A later update keeps the attribute: it is not relayed again. A redelivered record is a no-op.
      await db.send(
        new UpdateCommand({
          TableName: names.Runs,
          Key: { id: run.id },
          UpdateExpression: 'SET touchedAt = :at',
          ExpressionAttributeValues: { ':at': new Date().toISOString() },
        }),
      );
      await waitFor(
        () => invocations.some((event) => event.Records.some((r) => r.dynamodb?.NewImage?.touchedAt)),
        'the later update reaching the relay',
      );
      const first = invocations.find((event) =>
        event.Records.some(
          (r) => r.dynamodb?.NewImage?.id?.S === run.id && !r.dynamodb?.OldImage?.outboxEvent,
        ),
      );
      if (!first) throw new Error('the reject update did not reach the relay');
      expect(await handler(first)).toEqual({ batchItemFailures: [] });
    } finally {
      await source.stop();
    }
    // Only updates that hold an event reach the relay: the run's creation and claim never did.
    expect(
      invocations
        .flatMap((event) => event.Records)
        .every((r) => r.eventName === 'MODIFY' && r.dynamodb?.NewImage?.outboxEvent),
    ).toBe(true);
    expect((await eventsOf(teamId)).map((event) => event.type).sort()).toEqual([
      'synthesis_run.generated',
      'synthesis_run.rejected',
    ]);
    expect(await eventsOf(teamId, { type: 'synthesis_run.rejected' })).toEqual([rejected]);
  });

  it('writes failed once when a run fails', async () => {
    const teamId = nanoid();
    const run = newPendingRun({
      id: nanoid(),
      pipelineId: 'p1',
      teamId,
      synthesisHandler: 'heuristic-v1',
      baseConfigurationId: 'c1',
      jobId: nanoid(),
      createdAt: new Date().toISOString(),
      triggeredBy: 'u1',
    });
    await runs.create(run);
    const at = new Date().toISOString();
    const failed = await runs.fail(
      run.id,
      'boom',
      at,
      ['pending'],
      undefined,
      runEvent(run, 'failed', at, SYSTEM_ACTOR),
    );
    expect(failed).toMatchObject({ status: 'failed', errorMessage: 'boom' });
    const again = new Date(Date.now() + 5).toISOString();
    await runs.fail(
      run.id,
      'boom',
      again,
      ['pending'],
      undefined,
      runEvent(run, 'failed', again, SYSTEM_ACTOR),
    );
    expect((await eventsOf(teamId)).map((event) => event.type)).toEqual(['synthesis_run.failed']);
  });

  it('writes configuration.activated with a rollback, and nothing when the rollback is refused', async () => {
    const { run, teamId, pipelineId, activation, pipelines } = await generatedRun();
    const at = new Date().toISOString();
    const rollback = {
      ...activation,
      id: nanoid(),
      configurationId: 'c1',
      previousConfigurationId: 'not-active',
      source: 'rollback' as const,
    };
    const event = newEvent(
      'configuration.activated',
      { teamId, pipelineId, configurationId: 'c1', actor: REVIEWER },
      { at, key: rollback.id },
    );
    await expect(pipelines.activateConfiguration(rollback, event, servingOf(rollback))).rejects.toMatchObject(
      {
        code: 'CONFLICT',
      },
    );
    expect(await eventsOf(teamId, { type: 'configuration.activated' })).toEqual([]);
    await runs.approve(run, { at, by: 'u2' }, planOf(activation), []);
    const restored = { ...rollback, previousConfigurationId: activation.configurationId };
    await pipelines.activateConfiguration(restored, event, servingOf(restored));
    expect(await eventsOf(teamId, { type: 'configuration.activated' })).toEqual([event]);
  });

  it('writes api_token.created and api_token.revoked with the token, once', async () => {
    const auth = makeAuthRepository(db, names.Auth, names.Events);
    const teamId = nanoid();
    const tokenId = nanoid();
    const at = new Date().toISOString();
    const token = {
      tokenId,
      tokenHash: hashApiToken(`psa_${nanoid(32)}`),
      userId: 'u1',
      teamId,
      name: 'ci',
      hint: 'psa_…abcd',
      createdAt: at,
      expiresAt: null,
      revokedAt: null,
    };
    const actor = { userId: 'u1', credential: 'session' } as const;
    await auth.createApiToken(
      token,
      newEvent('api_token.created', { teamId, tokenId, actor }, { at, key: tokenId }),
    );
    const revoked = newEvent('api_token.revoked', { teamId, tokenId, actor }, { at, key: tokenId });
    await auth.revokeApiToken(token, at, revoked);
    // Revoking again is fine, and writes no second event.
    await auth.revokeApiToken(token, new Date(Date.now() + 5).toISOString(), {
      ...revoked,
      timestamp: new Date(Date.now() + 5).toISOString(),
    });
    expect((await eventsOf(teamId)).map((event) => event.type)).toEqual([
      'api_token.revoked',
      'api_token.created',
    ]);
  });

  it('lists the audit log newest first, by pipeline and by type, across pages', async () => {
    const { teamId, pipelineId } = await generatedRun();
    const other = await generatedRun();
    expect(await eventsOf(teamId, { pipelineId: other.pipelineId })).toEqual([]);
    const mine = await eventsOf(teamId, { pipelineId });
    expect(mine.map((event) => event.data.pipelineId)).toEqual([pipelineId]);
    const first = await listTeamEvents(db, names.Events, other.teamId, {}, { limit: 1 });
    expect(first.items).toHaveLength(1);
    const rest = await listTeamEvents(
      db,
      names.Events,
      other.teamId,
      {},
      { limit: 1, cursor: first.nextCursor ?? undefined },
    );
    expect(rest.items).toEqual([]);
  });
});

/** An approval of every change, activating at once (no rollout). */
function planOf(activation: Activation): ApprovalPlan {
  return {
    approvedChangeIds: [],
    appliedConfigurationId: activation.configurationId,
    newConfiguration: null,
    activation,
    rollout: null,
    serving: servingOf(activation),
  };
}

/** What serving reads once `activation` is made (the team is the serving item's, not read here). */
function servingOf(activation: Activation): ServingState {
  return {
    pipelineId: activation.pipelineId,
    teamId: 'team-of-the-pipeline',
    active: {
      id: activation.configurationId,
      pipelineId: activation.pipelineId,
      version: activation.version,
      slots: [{ id: 's', name: 's', kind: 'model', settings: {} }],
      source: 'manual',
      createdAt: activation.activatedAt,
      createdBy: 'u1',
    },
    rollout: null,
  };
}
