/*
 * Approving part of a proposal, rebasing it, rolling it out, serving it and measuring it, through
 * the operations' handlers on DynamoDB Local (docs/the-loop.md).
 */

import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { nanoid } from 'nanoid';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeJudgeRollouts } from '../../../lambdas/core/use-cases/guardrails.ts';
import { listTeamEvents } from '../../../lambdas/store/events.ts';
import { makePipelineRepository } from '../../../lambdas/store/pipelines.ts';
import { makeRolloutRepository } from '../../../lambdas/store/rollouts.ts';
import { makeRunRepository } from '../../../lambdas/store/runs.ts';
import { nanoidGenerator, systemClock } from '../../../lambdas/wiring/clock.ts';
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

const sqs = mockClient(SQSClient);
let admin: Caller;
let http: Record<string, Handler>;
let worker: SqsLambda;
let db: DynamoDBDocumentClient;
let names: TableNames;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  admin = await createCaller(db, names);
  http = await loadHandlers([
    'create-pipeline',
    'get-pipeline',
    'record-signals',
    'record-executions',
    'synthesize-pipeline',
    'get-synthesis-run',
    'approve-synthesis-run',
    'activate-configuration',
    'list-activations',
    'get-configuration',
    'get-pipeline-rollout',
    'promote-pipeline-rollout',
    'rollback-pipeline-rollout',
    'get-serving-configuration',
    'get-synthesis-run-effect',
  ]);
  worker = (await import('../../../lambdas/handlers/process-synthesis-jobs.ts')).handler as SqsLambda;
});

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
});

const call = (entry: string, input: Omit<Parameters<typeof apiEvent>[0], 'principal'>) =>
  invoke(http[entry] as Handler, apiEvent({ ...input, principal: admin.principal }));

const TIMEOUTS = Array.from({ length: 4 }, (_, i) => ({
  kind: 'timeout',
  severity: 'critical',
  message: `Retrieval timed out after 1500 ms (query ${i})`,
  slotId: 'retrieve',
}));
const TRUNCATIONS = Array.from({ length: 4 }, () => ({
  kind: 'truncation',
  severity: 'warning',
  message: 'Answer truncated: stop_reason max_tokens',
  slotId: 'answer-model',
}));

async function recordSignals(pipelineId: string, signals: object[]) {
  const recorded = await call('record-signals', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/signals',
    pathParameters: { pipelineId },
    body: { signals },
  });
  expect(recorded.status).toBe(201);
}

async function newPipeline() {
  const created = await call('create-pipeline', {
    method: 'POST',
    resource: '/pipelines',
    body: { name: 'bot', slots: DEMO_SLOTS },
  });
  await recordSignals(created.body.id, [...TIMEOUTS, ...TRUNCATIONS]);
  return created.body as { id: string; activeConfigurationId: string };
}

async function generatedRun(pipelineId: string) {
  const started = await call('synthesize-pipeline', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/synthesize',
    pathParameters: { pipelineId },
    body: {},
  });
  const body = sqs.commandCalls(SendMessageCommand).at(-1)?.args[0].input.MessageBody as string;
  await worker(sqsEvent([body]), lambdaContext());
  const run = (await getRun(started.body.id)).body;
  expect(run.status).toBe('generated');
  return run;
}

const getRun = (id: string) =>
  call('get-synthesis-run', { method: 'GET', resource: '/synthesis-runs/{id}', pathParameters: { id } });
const getPipeline = async (pipelineId: string) =>
  (
    await call('get-pipeline', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}',
      pathParameters: { pipelineId },
    })
  ).body;
const getConfiguration = async (pipelineId: string, configurationId: string) =>
  (
    await call('get-configuration', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}/configurations/{configurationId}',
      pathParameters: { pipelineId, configurationId },
    })
  ).body;
const approve = (id: string, body?: object) =>
  call('approve-synthesis-run', {
    method: 'POST',
    resource: '/synthesis-runs/{id}/approve',
    pathParameters: { id },
    body: body ?? null,
  });
/** The pipeline's events in the outbox (the audit log), newest first. */
async function pipelineEvents(pipelineId: string) {
  const page = await listTeamEvents(db, names.Events, admin.principal.teamId, { pipelineId }, { limit: 100 });
  return page.items;
}

const rollout = (pipelineId: string, action?: 'promote' | 'rollback') =>
  action
    ? call(`${action}-pipeline-rollout`, {
        method: 'POST',
        resource: `/pipelines/{pipelineId}/rollout/${action}`,
        pathParameters: { pipelineId },
        body: null,
        headers: { 'x-requested-with': 'test' },
      })
    : call('get-pipeline-rollout', {
        method: 'GET',
        resource: '/pipelines/{pipelineId}/rollout',
        pathParameters: { pipelineId },
      });
const serve = (pipelineId: string, routingKey?: string, ifNoneMatch?: string) =>
  call('get-serving-configuration', {
    method: 'GET',
    resource: '/pipelines/{pipelineId}/serving-configuration',
    pathParameters: { pipelineId },
    ...(routingKey === undefined ? {} : { query: { routingKey } }),
    headers: ifNoneMatch ? { 'If-None-Match': ifNoneMatch } : {},
  });
const effect = (id: string) =>
  call('get-synthesis-run-effect', {
    method: 'GET',
    resource: '/synthesis-runs/{id}/effect',
    pathParameters: { id },
  });

function changeOn(run: { changes: Array<{ id: string; slotId: string; patch?: unknown }> }, slotId: string) {
  const change = run.changes.find((candidate) => candidate.slotId === slotId);
  if (!change) throw new Error(`the run proposes no change on ${slotId}`);
  return change;
}

describe('approving part of a proposal', () => {
  it('applies only the chosen changes as a new configuration and records them on the run', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);
    expect(run.changes.length).toBeGreaterThan(1);
    const chosen = changeOn(run, 'answer-model');

    const approved = await approve(run.id, { changeIds: [chosen.id] });

    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({
      status: 'approved',
      approvedChangeIds: [chosen.id],
      rolloutId: null,
    });
    const appliedId = approved.body.appliedConfigurationId;
    expect(appliedId).not.toBe(run.proposedConfigurationId);
    expect((await getPipeline(pipeline.id)).activeConfigurationId).toBe(appliedId);
    const applied = await getConfiguration(pipeline.id, appliedId);
    expect(applied).toMatchObject({
      source: 'synthesis',
      synthesisRunId: run.id,
      appliedChangeIds: [chosen.id],
    });
    const slot = (id: string) => applied.slots.find((s: { id: string }) => s.id === id).settings;
    expect(slot('answer-model').maxTokens).toBe(512);
    expect(slot('retrieve')).toEqual(DEMO_SLOTS[0]?.settings);
  });

  it('applies every change as the proposal itself when no changeIds are given', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);
    const approved = await approve(run.id, {});
    expect(approved.body.appliedConfigurationId).toBe(run.proposedConfigurationId);
    expect(approved.body.approvedChangeIds).toEqual(run.changes.map((c: { id: string }) => c.id));
  });

  it('refuses unknown, repeated or no change ids with a 400, storing nothing', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);
    for (const changeIds of [['99'], ['1', '1'], []]) {
      const refused = await approve(run.id, { changeIds });
      expect(refused).toMatchObject({ status: 400, body: { error: 'VALIDATION_ERROR' } });
    }
    expect((await approve(run.id, { rollout: { percent: 100 } })).status).toBe(400);
    expect((await approve(run.id, { rollout: { percent: 0 } })).status).toBe(400);
    expect((await getRun(run.id)).body.status).toBe('generated');
    expect((await getPipeline(pipeline.id)).activeConfigurationId).toBe(pipeline.activeConfigurationId);
  });
});

describe('evidence that belongs to the configuration in force', () => {
  it('does not propose maxTokens again from the signals that led to the last change; fresh ones do', async () => {
    const pipeline = await newPipeline();
    const first = await generatedRun(pipeline.id);
    expect((await approve(first.id, { changeIds: [changeOn(first, 'answer-model').id] })).status).toBe(200);

    const again = await generatedRun(pipeline.id);

    expect(again.changes.filter((c: { slotId: string }) => c.slotId === 'answer-model')).toEqual([]);
    expect(again.structuredWarnings).toContainEqual(
      expect.objectContaining({ type: 'superseded_evidence', message: expect.stringContaining('version') }),
    );
    // The retrieval timeouts were never answered: old evidence still justifies that change.
    expect(again.changes.map((c: { slotId: string }) => c.slotId)).toContain('retrieve');

    await recordSignals(pipeline.id, TRUNCATIONS);
    const fresh = await generatedRun(pipeline.id);
    expect(changeOn(fresh, 'answer-model').patch).toEqual({ maxTokens: 1024 });
  });
});

describe('rebasing', () => {
  it('answers 409 without rebase, and applies the changes onto the active configuration with it', async () => {
    const pipeline = await newPipeline();
    const first = await generatedRun(pipeline.id);
    const second = await generatedRun(pipeline.id);
    const retrieve = changeOn(first, 'retrieve');
    expect((await approve(first.id, { changeIds: [retrieve.id] })).status).toBe(200);
    const truncation = changeOn(second, 'answer-model');

    const stale = await approve(second.id, { changeIds: [truncation.id] });
    expect(stale.status).toBe(409);
    expect(stale.body.message).toContain('rebase');

    const rebased = await approve(second.id, { changeIds: [truncation.id], rebase: true });
    expect(rebased.status).toBe(200);
    const active = await getConfiguration(
      pipeline.id,
      (await getPipeline(pipeline.id)).activeConfigurationId,
    );
    expect(active.id).toBe(rebased.body.appliedConfigurationId);
    const settings = (id: string) => active.slots.find((s: { id: string }) => s.id === id).settings;
    expect(settings('answer-model').maxTokens).toBe(512);
    // The first approval's change is kept: the rebase applied on top of it.
    expect(settings('retrieve')).not.toEqual(DEMO_SLOTS[0]?.settings);
  });

  it('answers 409 with the exact conflicts when a key moved elsewhere, and stores nothing', async () => {
    const pipeline = await newPipeline();
    const stale = await generatedRun(pipeline.id);
    const truncation = changeOn(stale, 'answer-model');
    // Another run on the same base raises maxTokens to 512, a third on top of it to 1024.
    const first = await generatedRun(pipeline.id);
    expect((await approve(first.id, { changeIds: [changeOn(first, 'answer-model').id] })).status).toBe(200);
    await recordSignals(pipeline.id, TRUNCATIONS);
    const third = await generatedRun(pipeline.id);
    expect((await approve(third.id, { changeIds: [changeOn(third, 'answer-model').id] })).status).toBe(200);
    const activeBefore = (await getPipeline(pipeline.id)).activeConfigurationId;

    const refused = await approve(stale.id, { changeIds: [truncation.id], rebase: true });

    expect(refused.status).toBe(409);
    expect(refused.body.details).toEqual({
      conflicts: [{ slotId: 'answer-model', key: 'maxTokens', base: 256, active: 1024, proposed: 512 }],
    });
    expect(refused.body.message).toContain('answer-model.maxTokens');
    expect((await getRun(stale.id)).body.status).toBe('generated');
    expect((await getPipeline(pipeline.id)).activeConfigurationId).toBe(activeBefore);
  });

  it('stays atomic against a concurrent activation: the final state is one of the two in some order', async () => {
    const pipeline = await newPipeline();
    const first = await generatedRun(pipeline.id);
    const second = await generatedRun(pipeline.id);
    expect((await approve(first.id, { changeIds: [changeOn(first, 'retrieve').id] })).status).toBe(200);

    const [approval, activation] = await Promise.all([
      approve(second.id, { changeIds: [changeOn(second, 'answer-model').id], rebase: true }),
      call('activate-configuration', {
        method: 'POST',
        resource: '/pipelines/{pipelineId}/configurations/{configurationId}/activate',
        pathParameters: { pipelineId: pipeline.id, configurationId: pipeline.activeConfigurationId },
        body: {},
      }),
    ]);

    const active = (await getPipeline(pipeline.id)).activeConfigurationId;
    const run = (await getRun(second.id)).body;
    expect([approval.status, activation.status]).not.toEqual([409, 409]);
    if (approval.status === 409) {
      expect(run.status).toBe('generated');
      expect(active).toBe(pipeline.activeConfigurationId);
    } else if (activation.status === 409) {
      expect(active).toBe(run.appliedConfigurationId);
    } else if (activation.body.previousConfigurationId === run.appliedConfigurationId) {
      // Both in turn, approval first: the activation read the approval's result and replaced it.
      expect(active).toBe(pipeline.activeConfigurationId);
    } else {
      // Both in turn, activation first: the approval read the restored base and applied onto it.
      expect(activation.body.configurationId).toBe(pipeline.activeConfigurationId);
      expect(active).toBe(run.appliedConfigurationId);
    }
  });

  it('writes nothing when the active configuration moved after the approval read it (store level)', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);
    const runs = makeRunRepository(db, { runs: names.Runs, data: names.Data, events: names.Events });
    const newConfigurationId = nanoid();
    const at = new Date().toISOString();
    const base = await getConfiguration(pipeline.id, pipeline.activeConfigurationId);
    await expect(
      runs.approve(
        run,
        { at, by: admin.principal.userId },
        {
          approvedChangeIds: ['1'],
          appliedConfigurationId: newConfigurationId,
          newConfiguration: { ...base, id: newConfigurationId, version: 9, createdAt: at },
          activation: {
            id: nanoid(),
            pipelineId: pipeline.id,
            configurationId: newConfigurationId,
            version: 9,
            previousConfigurationId: 'moved-meanwhile',
            previousVersion: 2,
            source: 'approval',
            synthesisRunId: run.id,
            reason: null,
            summary: 's',
            activatedAt: at,
            activatedBy: admin.principal.userId,
          },
          rollout: null,
          serving: {
            pipelineId: pipeline.id,
            teamId: run.teamId,
            active: { ...base, id: newConfigurationId, version: 9, createdAt: at },
            rollout: null,
          },
        },
        [],
      ),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await getRun(run.id)).body.status).toBe('generated');
    const missing = await call('get-configuration', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}/configurations/{configurationId}',
      pathParameters: { pipelineId: pipeline.id, configurationId: newConfigurationId },
    });
    expect(missing.status).toBe(404);
  });
});

describe('rollouts', () => {
  it('starts a rollout instead of activating, serves both arms by routing key, and promotes', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);

    const approved = await approve(run.id, { rollout: { percent: 30 } });

    expect(approved.status).toBe(200);
    expect(approved.body.rolloutId).toEqual(expect.any(String));
    const withRollout = await getPipeline(pipeline.id);
    expect(withRollout.activeConfigurationId).toBe(pipeline.activeConfigurationId);
    expect(withRollout.rollout).toMatchObject({
      id: approved.body.rolloutId,
      status: 'active',
      percent: 30,
      minExecutions: 200,
      autoPromote: false,
      autoRollback: true,
      baseConfigurationId: pipeline.activeConfigurationId,
      candidateConfigurationId: run.proposedConfigurationId,
    });
    // The rollout's own endpoint names who started and ended it; the pipeline's copy holds the ids.
    expect((await rollout(pipeline.id)).body).toEqual({
      ...withRollout.rollout,
      startedByName: expect.stringContaining('@'),
      endedByName: null,
    });

    const arms = new Map<string, string>();
    for (let i = 0; i < 40; i++) {
      const served = await serve(pipeline.id, `user-${i}`);
      expect(served.status).toBe(200);
      arms.set(`user-${i}`, served.body.arm);
      expect(served.body.configuration.id).toBe(
        served.body.arm === 'candidate' ? run.proposedConfigurationId : pipeline.activeConfigurationId,
      );
      expect(served.body.rolloutId).toBe(approved.body.rolloutId);
    }
    expect(new Set(arms.values())).toEqual(new Set(['active', 'candidate']));
    const again = await serve(pipeline.id, 'user-7');
    expect(again.body.arm).toBe(arms.get('user-7'));
    expect((await serve(pipeline.id, 'user-7', again.headers.etag)).status).toBe(304);
    expect((await serve(pipeline.id, 'x'.repeat(257))).status).toBe(400);

    const promoted = await rollout(pipeline.id, 'promote');
    expect(promoted.body).toMatchObject({ status: 'promoted', endedBy: admin.principal.userId });
    const after = await getPipeline(pipeline.id);
    expect(after).toMatchObject({ activeConfigurationId: run.proposedConfigurationId, rollout: null });
    expect((await serve(pipeline.id, 'user-7')).body).toMatchObject({
      arm: 'active',
      rolloutId: null,
      configuration: { id: run.proposedConfigurationId },
    });
    expect((await serve(pipeline.id, 'user-7', again.headers.etag)).status).toBe(200);
    const history = await call('list-activations', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}/activations',
      pathParameters: { pipelineId: pipeline.id },
    });
    expect(history.body.items[0]).toMatchObject({
      source: 'rollout',
      configurationId: run.proposedConfigurationId,
    });
    expect((await rollout(pipeline.id)).body.status).toBe('promoted');
    expect((await rollout(pipeline.id, 'promote')).status).toBe(409);
    expect((await rollout(pipeline.id, 'rollback')).status).toBe(409);
    // Each change wrote its event with it: the start, and the promotion with its activation.
    const events = await pipelineEvents(pipeline.id);
    expect(events).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'rollout.started',
          data: expect.objectContaining({ rolloutId: approved.body.rolloutId, status: 'active' }),
        }),
        expect.objectContaining({
          type: 'rollout.promoted',
          data: expect.objectContaining({
            rolloutId: approved.body.rolloutId,
            actor: expect.objectContaining({ userId: admin.principal.userId, credential: 'api_token' }),
          }),
        }),
        expect.objectContaining({
          type: 'configuration.activated',
          data: expect.objectContaining({ configurationId: run.proposedConfigurationId }),
        }),
      ]),
    );
    expect(events.filter((event) => event.type === 'configuration.activated')).toHaveLength(1);
  });

  it('serves what every activation made active: approval, manual activation, rollback of a rollout', async () => {
    const pipeline = await newPipeline();
    const servedId = async () => (await serve(pipeline.id, 'k')).body.configuration.id;
    expect(await servedId()).toBe(pipeline.activeConfigurationId);
    const first = await generatedRun(pipeline.id);
    await approve(first.id);
    expect(await servedId()).toBe(first.proposedConfigurationId);
    await call('activate-configuration', {
      method: 'POST',
      resource: '/pipelines/{pipelineId}/configurations/{configurationId}/activate',
      pathParameters: { pipelineId: pipeline.id, configurationId: pipeline.activeConfigurationId },
      body: {},
    });
    expect(await servedId()).toBe(pipeline.activeConfigurationId);
    // Evidence from before the restore is superseded: the faults happen again on the restored version.
    await recordSignals(pipeline.id, [...TIMEOUTS, ...TRUNCATIONS]);
    const second = await generatedRun(pipeline.id);
    await approve(second.id, { rollout: { percent: 99 } });
    const arms = new Set<string>();
    for (let i = 0; i < 20; i++) arms.add((await serve(pipeline.id, `k${i}`)).body.configuration.id);
    expect(arms).toContain(second.proposedConfigurationId);
    await rollout(pipeline.id, 'rollback');
    for (let i = 0; i < 20; i++) {
      expect((await serve(pipeline.id, `k${i}`)).body.configuration.id).toBe(pipeline.activeConfigurationId);
    }
  });

  it('answers 404 for a pipeline that never had a rollout, and 409 ending one', async () => {
    const pipeline = await newPipeline();
    expect((await rollout(pipeline.id)).status).toBe(404);
    expect((await rollout(pipeline.id, 'rollback')).status).toBe(409);
  });

  it('starts exactly one of two rollouts approved at the same moment', async () => {
    const pipeline = await newPipeline();
    const [a, b] = [await generatedRun(pipeline.id), await generatedRun(pipeline.id)];

    const results = await Promise.all([
      approve(a.id, { rollout: { percent: 10 } }),
      approve(b.id, { rollout: { percent: 20 } }),
    ]);

    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const winner = results[0]?.status === 200 ? a : b;
    const loser = winner === a ? b : a;
    expect((await getPipeline(pipeline.id)).rollout.synthesisRunId).toBe(winner.id);
    expect((await getRun(loser.id)).body.status).toBe('generated');
  });

  it('lets one of a guardrail and a person ending the same rollout win; the other gets 409', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);
    const approved = await approve(run.id, { rollout: { percent: 50, minExecutions: 30 } });
    await recordArms(pipeline.id, pipeline.activeConfigurationId, run.proposedConfigurationId, {
      base: { n: 40, failed: 0 },
      applied: { n: 40, failed: 30 },
    });
    const judge = makeJudgeRollouts({
      pipelines: makePipelineRepository(db, names.Data),
      rollouts: makeRolloutRepository(db, names.Data, names.Events),
      runs: makeRunRepository(db, { runs: names.Runs, data: names.Data, events: names.Events }),
      clock: systemClock,
      ids: nanoidGenerator,
    });

    const [person, guardrail] = await Promise.all([rollout(pipeline.id, 'rollback'), judge()]);

    const mine = guardrail.find((outcome) => outcome.rolloutId === approved.body.rolloutId);
    const ended = (await rollout(pipeline.id)).body;
    expect(ended.status).toBe('rolled_back');
    if (person.status === 200) {
      expect(mine?.action).toBe('lost_race');
      expect(ended.endedBy).toBe(admin.principal.userId);
    } else {
      expect(person.status).toBe(409);
      expect(mine?.action).toBe('rolled_back');
      expect(ended.endedBy).toBe('system');
      expect(ended.endReason).toContain('30 of 40');
    }
    expect(await getPipeline(pipeline.id)).toMatchObject({
      activeConfigurationId: pipeline.activeConfigurationId,
      rollout: null,
    });
  });

  it('is rolled back by the guardrail with the figures when the candidate is worse', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);
    await approve(run.id, { rollout: { percent: 50, minExecutions: 30 } });
    const judge = makeJudgeRollouts({
      pipelines: makePipelineRepository(db, names.Data),
      rollouts: makeRolloutRepository(db, names.Data, names.Events),
      runs: makeRunRepository(db, { runs: names.Runs, data: names.Data, events: names.Events }),
      clock: systemClock,
      ids: nanoidGenerator,
    });
    await recordArms(pipeline.id, pipeline.activeConfigurationId, run.proposedConfigurationId, {
      base: { n: 20, failed: 0 },
      applied: { n: 20, failed: 15 },
    });
    await judge();
    expect((await rollout(pipeline.id)).body.status).toBe('active');
    await recordArms(pipeline.id, pipeline.activeConfigurationId, run.proposedConfigurationId, {
      base: { n: 20, failed: 0 },
      applied: { n: 20, failed: 15 },
    });

    await judge();

    const ended = (await rollout(pipeline.id)).body;
    expect(ended).toMatchObject({ status: 'rolled_back', endedBy: 'system' });
    expect(ended.endReason).toContain(
      'failure rate 75.00 % (30 of 40) on the candidate against 0.00 % (0 of 40)',
    );
    expect(ended.endReason).toContain('threshold 1.00 points');
    expect(await pipelineEvents(pipeline.id)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'rollout.rolled_back',
          data: expect.objectContaining({ actor: { userId: 'system', credential: 'system' } }),
        }),
      ]),
    );
  });
});

/** Records executions of both arms (in batches of at most 100), started a second from now on. */
async function recordArms(
  pipelineId: string,
  baseId: string,
  appliedId: string,
  arms: { base: { n: number; failed: number }; applied: { n: number; failed: number } },
  startedAt = () => new Date(Date.now() + 1_000).toISOString(),
) {
  const executions = [
    ...Array.from({ length: arms.base.n }, (_, i) => ({
      configurationId: baseId,
      failed: i < arms.base.failed,
    })),
    ...Array.from({ length: arms.applied.n }, (_, i) => ({
      configurationId: appliedId,
      failed: i < arms.applied.failed,
    })),
  ].map(({ configurationId, failed }) => ({
    configurationId,
    status: failed ? 'failed' : 'succeeded',
    durationMs: 100,
    startedAt: startedAt(),
    slotResults: [{ slotId: 'answer-model', status: failed ? 'failed' : 'succeeded', durationMs: 80 }],
  }));
  for (let i = 0; i < executions.length; i += 100) {
    const recorded = await call('record-executions', {
      method: 'POST',
      resource: '/pipelines/{pipelineId}/executions',
      pathParameters: { pipelineId },
      body: { executions: executions.slice(i, i + 100) },
    });
    expect(recorded.status).toBe(201);
  }
}

describe('the effect of an approval', () => {
  it('is a 409 for a run that is not approved', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);
    expect((await effect(run.id)).status).toBe(409);
  });

  it('compares before and after, per touched slot, and says not_enough_data below the minimum', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);
    const chosen = changeOn(run, 'answer-model');
    const past = () => new Date(Date.now() - 60_000).toISOString();
    await recordArms(
      pipeline.id,
      pipeline.activeConfigurationId,
      'none',
      {
        base: { n: 10, failed: 5 },
        applied: { n: 0, failed: 0 },
      },
      past,
    );
    const approved = (await approve(run.id, { changeIds: [chosen.id] })).body;
    const early = (await effect(run.id)).body;
    expect(early).toMatchObject({ mode: 'before_after', verdict: 'not_enough_data', minExecutions: 30 });

    await recordArms(pipeline.id, pipeline.activeConfigurationId, approved.appliedConfigurationId, {
      base: { n: 0, failed: 0 },
      applied: { n: 40, failed: 0 },
    });
    await recordArms(
      pipeline.id,
      pipeline.activeConfigurationId,
      'none',
      {
        base: { n: 30, failed: 15 },
        applied: { n: 0, failed: 0 },
      },
      past,
    );

    const measured = await effect(run.id);

    expect(measured.status).toBe(200);
    expect(measured.body).toMatchObject({
      runId: run.id,
      mode: 'before_after',
      rolloutId: null,
      baseConfigurationId: pipeline.activeConfigurationId,
      appliedConfigurationId: approved.appliedConfigurationId,
      arms: {
        base: { executions: 40, failed: 20, failureRate: 0.5, durationMs: { p50: 100, p95: 100 } },
        applied: { executions: 40, failed: 0, failureRate: 0 },
      },
      slots: [
        {
          slotId: 'answer-model',
          base: { executions: 40, failed: 20 },
          applied: { executions: 40, failed: 0 },
        },
      ],
      verdict: 'improved',
    });
    expect(measured.body.failureRate.difference).toBeCloseTo(-0.5, 10);
    expect(measured.body.failureRate.pValue).toBeLessThan(0.05);
    // Not randomized, and said so in words beside the figures; the failure rate judged as a metric.
    expect(measured.body.notes).toEqual([expect.stringContaining('Before/after, not randomized')]);
    expect(measured.body.metrics).toEqual([
      expect.objectContaining({ metric: 'failure_rate', unit: 'rate', verdict: 'better', threshold: 0.01 }),
    ]);
    // Nothing new recorded: the same measurement is answered again; one more execution: measured anew.
    expect((await effect(run.id)).body.measuredAt).toBe(measured.body.measuredAt);
    await recordArms(pipeline.id, pipeline.activeConfigurationId, approved.appliedConfigurationId, {
      base: { n: 0, failed: 0 },
      applied: { n: 1, failed: 1 },
    });
    expect((await effect(run.id)).body.arms.applied).toMatchObject({ executions: 41, failed: 1 });
  });
});
