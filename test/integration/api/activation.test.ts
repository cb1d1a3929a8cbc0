/*
 * Activating a configuration by hand (POST …/configurations/{id}/activate) through the operations'
 * handlers on DynamoDB Local: it restores only what was active before, obeys the pipeline's
 * approval rules as approval does, and brings back a rolled-back candidate only with an admin's
 * stated override, recorded on the activation and in its event.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Principal } from '../../../lambdas/core/principal.ts';
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
let db: DynamoDBDocumentClient;
let names: TableNames;
let http: Record<string, Handler>;
let worker: SqsLambda;
/** The team's admin and a member, each through an API token and through a session. */
let adminToken: Principal;
let adminSession: Principal;
let memberToken: Principal;
let memberSession: Principal;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  adminToken = (await createCaller(db, names)).principal;
  adminSession = { ...adminToken, method: 'session', tokenId: undefined };
  memberToken = { ...adminToken, userId: 'member-user', principalId: 'member-user', role: 'member' };
  memberSession = { ...memberToken, method: 'session', tokenId: undefined };
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
    'put-approval-rules',
    'get-pipeline-rollout',
  ]);
  worker = (await import('../../../lambdas/handlers/process-synthesis-jobs.ts')).handler as SqsLambda;
});

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
});

const call = (entry: string, input: Parameters<typeof apiEvent>[0]) =>
  invoke(http[entry] as Handler, apiEvent(input));

async function newPipeline(): Promise<{ id: string; activeConfigurationId: string }> {
  const created = await call('create-pipeline', {
    method: 'POST',
    resource: '/pipelines',
    body: { name: 'bot', slots: DEMO_SLOTS },
    principal: adminToken,
  });
  await call('record-signals', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/signals',
    pathParameters: { pipelineId: created.body.id },
    body: {
      signals: [
        ...Array.from({ length: 4 }, (_, i) => ({
          kind: 'timeout',
          severity: 'critical',
          message: `Retrieval timed out after 1500 ms (query ${i})`,
          slotId: 'retrieve',
        })),
        ...Array.from({ length: 4 }, () => ({
          kind: 'truncation',
          severity: 'warning',
          message: 'Answer truncated: stop_reason max_tokens',
          slotId: 'answer-model',
        })),
      ],
    },
    principal: adminToken,
  });
  return created.body;
}

async function generatedRun(pipelineId: string, by: Principal = adminToken) {
  const started = await call('synthesize-pipeline', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/synthesize',
    pathParameters: { pipelineId },
    body: {},
    principal: by,
  });
  const body = sqs.commandCalls(SendMessageCommand).at(-1)?.args[0].input.MessageBody as string;
  await worker(sqsEvent([body]), lambdaContext());
  const run = (
    await call('get-synthesis-run', {
      method: 'GET',
      resource: '/synthesis-runs/{id}',
      pathParameters: { id: started.body.id },
      principal: adminToken,
    })
  ).body;
  expect(run.status).toBe('generated');
  expect(run.changes.length).toBeGreaterThan(1);
  return run;
}

const approve = (id: string, body: object, by: Principal = adminToken) =>
  call('approve-synthesis-run', {
    method: 'POST',
    resource: '/synthesis-runs/{id}/approve',
    pathParameters: { id },
    body,
    principal: by,
  });
const activate = (pipelineId: string, configurationId: string, body: object | null, by: Principal) =>
  call('activate-configuration', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/configurations/{configurationId}/activate',
    pathParameters: { pipelineId, configurationId },
    body,
    principal: by,
  });
const activeOf = async (pipelineId: string) =>
  (
    await call('get-pipeline', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}',
      pathParameters: { pipelineId },
      principal: adminToken,
    })
  ).body.activeConfigurationId as string;
const activations = async (pipelineId: string) =>
  (
    await call('list-activations', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}/activations',
      pathParameters: { pipelineId },
      principal: adminToken,
    })
  ).body.items as Array<{ configurationId: string; summary: string; overrideReason?: string | null }>;
const putRules = (pipelineId: string, rules: Record<string, unknown>) =>
  call('put-approval-rules', {
    method: 'PUT',
    resource: '/pipelines/{pipelineId}/approval-rules',
    pathParameters: { pipelineId },
    body: {
      requireEvaluation: false,
      maxRegressions: 0,
      minEvaluatedCases: 0,
      forbidSelfApproval: false,
      allowApiTokens: true,
      ...rules,
    },
    principal: adminSession,
  });

describe('activating what was never active', () => {
  it('refuses the full proposal of a run approved in part with a 409 that says so, and moves nothing', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);
    const approved = await approve(run.id, { changeIds: [run.changes[0].id] });
    expect(approved.status).toBe(200);
    const applied = approved.body.appliedConfigurationId as string;
    expect(applied).not.toBe(run.proposedConfigurationId);

    const bypass = await activate(pipeline.id, run.proposedConfigurationId, {}, memberToken);

    expect(bypass.status).toBe(409);
    expect(bypass.body.error).toBe('CONFLICT');
    expect(bypass.body.message).toContain('never active');
    expect(bypass.body.message).toContain(run.id);
    expect(await activeOf(pipeline.id)).toBe(applied);
    expect((await activations(pipeline.id)).map((a) => a.configurationId)).toEqual([applied]);
  });

  it('restores what was active before, saying truthfully what it restored', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);
    const applied = (await approve(run.id, { changeIds: [run.changes[0].id] })).body.appliedConfigurationId;

    const back = await activate(
      pipeline.id,
      pipeline.activeConfigurationId,
      { reason: 'Worse' },
      memberToken,
    );
    expect(back.status).toBe(200);
    expect(back.body.summary).toMatch(/^Restored version 1 \(replacing version \d+\)\.$/);
    const forward = await activate(pipeline.id, applied, {}, memberToken);
    expect(forward.status).toBe(200);
    expect(forward.body.summary).toMatch(/^Restored version \d+ \(replacing version 1\)\.$/);
  });
});

describe('activating a candidate a guardrail rolled back', () => {
  async function rolledBack() {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);
    const started = await approve(run.id, { rollout: { percent: 50, minExecutions: 30 } });
    expect(started.status).toBe(200);
    await recordArms(pipeline.id, pipeline.activeConfigurationId, run.proposedConfigurationId);
    await makeJudgeRollouts({
      pipelines: makePipelineRepository(db, names.Data),
      rollouts: makeRolloutRepository(db, names.Data, names.Events),
      runs: makeRunRepository(db, { runs: names.Runs, data: names.Data, events: names.Events }),
      clock: systemClock,
      ids: nanoidGenerator,
    })();
    const rollout = await call('get-pipeline-rollout', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}/rollout',
      pathParameters: { pipelineId: pipeline.id },
      principal: adminToken,
    });
    expect(rollout.body).toMatchObject({ status: 'rolled_back', endedBy: 'system' });
    return { pipeline, candidate: run.proposedConfigurationId as string, rolloutId: rollout.body.id };
  }

  it('brings it back only with an admin’s stated override, recorded on the activation and in its event', async () => {
    const { pipeline, candidate, rolloutId } = await rolledBack();

    const plain = await activate(pipeline.id, candidate, {}, memberToken);
    expect(plain.status).toBe(409);
    expect(plain.body.message).toContain(rolloutId);
    expect(plain.body.message).toContain('override');
    expect((await activate(pipeline.id, candidate, {}, adminToken)).status).toBe(409);
    const memberOverride = await activate(pipeline.id, candidate, { override: { reason: 'x' } }, memberToken);
    expect(memberOverride.status).toBe(403);
    expect(await activeOf(pipeline.id)).toBe(pipeline.activeConfigurationId);

    const overridden = await activate(
      pipeline.id,
      candidate,
      { override: { reason: 'The failures were the upstream outage.' } },
      adminToken,
    );

    expect(overridden.status).toBe(200);
    expect(overridden.body).toMatchObject({
      configurationId: candidate,
      overrideReason: 'The failures were the upstream outage.',
    });
    expect(overridden.body.summary).not.toMatch(/Restored/);
    expect(overridden.body.summary).toContain(rolloutId);
    expect(await activeOf(pipeline.id)).toBe(candidate);
    const events = await listTeamEvents(
      db,
      names.Events,
      adminToken.teamId,
      { pipelineId: pipeline.id },
      { limit: 20 },
    );
    expect(events.items.find((event) => event.type === 'configuration.activated')?.data).toMatchObject({
      configurationId: candidate,
      overrideReason: 'The failures were the upstream outage.',
      actor: { userId: adminToken.userId, credential: 'api_token' },
    });
  });
});

describe("the pipeline's approval rules", () => {
  it('make an API token a 403 where a person must act, rolling back included', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);
    await approve(run.id, {});
    await putRules(pipeline.id, { allowApiTokens: false });

    const byToken = await activate(pipeline.id, pipeline.activeConfigurationId, {}, adminToken);
    expect(byToken.status).toBe(403);
    expect(byToken.body.message).toMatch(/sign in/i);
    expect(await activeOf(pipeline.id)).toBe(run.proposedConfigurationId);
    expect((await activate(pipeline.id, pipeline.activeConfigurationId, {}, memberSession)).status).toBe(200);
  });

  it("refuse restoring a run's configuration against its rules; an admin override passes the evaluation rules, never self-approval", async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id, memberSession);
    await approve(run.id, {}, adminSession);
    await activate(pipeline.id, pipeline.activeConfigurationId, {}, adminSession);
    await putRules(pipeline.id, { requireEvaluation: true, forbidSelfApproval: true });

    const self = await activate(pipeline.id, run.proposedConfigurationId, {}, memberSession);
    expect(self.status).toBe(409);
    expect(self.body.details.rules).toEqual(['requireEvaluation', 'forbidSelfApproval']);
    const unevaluated = await activate(pipeline.id, run.proposedConfigurationId, {}, adminSession);
    expect(unevaluated.status).toBe(409);
    expect(unevaluated.body.details.rules).toEqual(['requireEvaluation']);
    expect(await activeOf(pipeline.id)).toBe(pipeline.activeConfigurationId);

    const overridden = await activate(
      pipeline.id,
      run.proposedConfigurationId,
      { override: { reason: 'Evaluated by hand.' } },
      adminSession,
    );
    expect(overridden.status).toBe(200);
    expect(overridden.body.overrideReason).toBe('Evaluated by hand.');
    // The manual first configuration comes from no run: only the credential rule applies to it.
    expect((await activate(pipeline.id, pipeline.activeConfigurationId, {}, memberSession)).status).toBe(200);
  });
});

/** 40 executions of each arm, started a second from now; the candidate fails 30 of its 40. */
async function recordArms(pipelineId: string, baseId: string, candidateId: string) {
  const executions = [
    ...Array.from({ length: 40 }, () => ({ configurationId: baseId, failed: false })),
    ...Array.from({ length: 40 }, (_, i) => ({ configurationId: candidateId, failed: i < 30 })),
  ].map(({ configurationId, failed }) => ({
    configurationId,
    status: failed ? 'failed' : 'succeeded',
    durationMs: 100,
    startedAt: new Date(Date.now() + 1_000).toISOString(),
  }));
  const recorded = await call('record-executions', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/executions',
    pathParameters: { pipelineId },
    body: { executions },
    principal: adminToken,
  });
  expect(recorded.status).toBe(201);
}
