import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CARRIED_EVENT_ATTRIBUTE, listTeamEvents } from '../../../lambdas/store/events.ts';
import { approvalRulesKey } from '../../../lambdas/store/keys.ts';
import { makePipelineRepository } from '../../../lambdas/store/pipelines.ts';
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
 * Checking a proposal before approval, through the operations' handlers on DynamoDB Local:
 * executions carry input, the evaluation set is chosen once, results add up on the run, and the
 * pipeline's approval rules bind approve.
 */

/** The lower bound of a read of every record (no record is dated before 2000). */
const WHOLE_HISTORY = '2000-01-01T00:00:00.000Z';

const sqs = mockClient(SQSClient);
let db: DynamoDBDocumentClient;
let names: TableNames;
let admin: Caller;
let member: Caller;
let http: Record<string, Handler>;
let worker: SqsLambda;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  admin = await createCaller(db, names);
  member = { apiToken: '', principal: { ...admin.principal, role: 'member', userId: 'member-user' } };
  http = await loadHandlers([
    'create-pipeline',
    'record-signals',
    'record-executions',
    'synthesize-pipeline',
    'get-synthesis-run',
    'get-synthesis-run-evidence',
    'get-synthesis-run-evaluation-set',
    'record-synthesis-run-evaluations',
    'get-approval-rules',
    'put-approval-rules',
    'approve-synthesis-run',
  ]);
  worker = (await import('../../../lambdas/handlers/process-synthesis-jobs.ts')).handler as SqsLambda;
});

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
});

const call = (entry: string, input: Parameters<typeof apiEvent>[0]) =>
  invoke(http[entry] as Handler, apiEvent(input));
const asSession = (caller: Caller) => ({
  ...caller.principal,
  method: 'session' as const,
  tokenId: undefined,
});

const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();

async function newPipeline(executionCount = 240) {
  const pipeline = (
    await call('create-pipeline', {
      method: 'POST',
      resource: '/pipelines',
      body: { name: 'bot', slots: DEMO_SLOTS },
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
  for (let start = 0; start < executionCount; start += 100) {
    const executions = Array.from({ length: Math.min(100, executionCount - start) }, (_, j) => {
      const i = start + j;
      const failed = i % 3 === 0;
      return {
        id: `exec-${String(i).padStart(4, '0')}`,
        status: failed ? 'failed' : 'succeeded',
        durationMs: 1000 + i,
        startedAt: minutesAgo(executionCount - i),
        input: { question: `question ${i}`, locale: 'en' },
        ...(failed
          ? {
              error: 'retrieval timed out',
              slotResults: [{ slotId: 'retrieve', status: 'failed', durationMs: 1500, error: 'timeout' }],
            }
          : {}),
      };
    });
    const recorded = await call('record-executions', {
      method: 'POST',
      resource: '/pipelines/{pipelineId}/executions',
      pathParameters: { pipelineId: pipeline.id },
      body: { executions },
      principal: admin.principal,
    });
    expect(recorded.status).toBe(201);
  }
  return pipeline;
}

async function generatedRun(pipelineId: string, caller: Caller = admin) {
  const started = await call('synthesize-pipeline', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/synthesize',
    pathParameters: { pipelineId },
    body: {},
    principal: caller.principal,
  });
  const body = sqs.commandCalls(SendMessageCommand).at(-1)?.args[0].input.MessageBody as string;
  await worker(sqsEvent([body]), lambdaContext());
  const run = (await getRun(started.body.id)).body;
  expect(run.status).toBe('generated');
  return run;
}

const getRun = (id: string) =>
  call('get-synthesis-run', {
    method: 'GET',
    resource: '/synthesis-runs/{id}',
    pathParameters: { id },
    principal: admin.principal,
  });
const getSet = (id: string) =>
  call('get-synthesis-run-evaluation-set', {
    method: 'GET',
    resource: '/synthesis-runs/{id}/evaluation-set',
    pathParameters: { id },
    principal: admin.principal,
  });
const post = (id: string, results: unknown[]) =>
  call('record-synthesis-run-evaluations', {
    method: 'POST',
    resource: '/synthesis-runs/{id}/evaluations',
    pathParameters: { id },
    body: { results },
    principal: admin.principal,
  });
const approve = (id: string, principal = admin.principal, body?: object) =>
  call('approve-synthesis-run', {
    method: 'POST',
    resource: '/synthesis-runs/{id}/approve',
    pathParameters: { id },
    body: body ?? null,
    principal,
  });
const putRules = (pipelineId: string, rules: object, principal: Caller['principal'] = asSession(admin)) =>
  call('put-approval-rules', {
    method: 'PUT',
    resource: '/pipelines/{pipelineId}/approval-rules',
    pathParameters: { pipelineId },
    body: rules,
    principal,
  });

describe('execution input', () => {
  it('is stored with the execution and shown in the evidence', async () => {
    const pipeline = await newPipeline(30);
    const run = await generatedRun(pipeline.id);
    const evidence = await call('get-synthesis-run-evidence', {
      method: 'GET',
      resource: '/synthesis-runs/{id}/evidence',
      pathParameters: { id: run.id },
      principal: admin.principal,
    });
    expect(evidence.body.executions.length).toBeGreaterThan(0);
    for (const execution of evidence.body.executions) {
      expect(execution.input).toEqual({ question: expect.stringMatching(/^question \d+$/), locale: 'en' });
    }
  });

  it('over 16 KB is a 400 naming the limit, and nothing of the batch is stored', async () => {
    const pipeline = await newPipeline(0);
    const refused = await call('record-executions', {
      method: 'POST',
      resource: '/pipelines/{pipelineId}/executions',
      pathParameters: { pipelineId: pipeline.id },
      body: {
        executions: [
          { id: 'small', status: 'succeeded', durationMs: 1, input: { q: 'fine' } },
          { id: 'large', status: 'succeeded', durationMs: 1, input: { q: 'x'.repeat(17_000) } },
        ],
      },
      principal: admin.principal,
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('16384 bytes');
    expect(
      await makePipelineRepository(db, names.Data).recentExecutions(pipeline.id, 10, WHOLE_HISTORY),
    ).toEqual([]);
  });
});

describe('the evaluation set', () => {
  it('holds the cited executions and up to 50 failed and 50 succeeded more spread over time, the same on every read', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);

    const first = await getSet(run.id);
    await newPipelineExecutionsLater(pipeline.id);
    const second = await getSet(run.id);

    expect(first.status).toBe(200);
    expect(second.body.cases).toEqual(first.body.cases);
    const cited = new Set(run.diagnosis.findings.flatMap((f: { executionIds: string[] }) => f.executionIds));
    const cases = first.body.cases as Array<{
      executionId: string;
      reason: string;
      status: string;
      input: unknown;
    }>;
    expect(
      cases
        .filter((c) => c.reason === 'cited')
        .map((c) => c.executionId)
        .sort(),
    ).toEqual([...cited].sort());
    const failed = cases.filter((c) => c.reason === 'failed');
    const succeeded = cases.filter((c) => c.reason === 'succeeded');
    expect(failed).toHaveLength(50);
    expect(succeeded).toHaveLength(50);
    expect(failed.every((c) => c.status === 'failed')).toBe(true);
    // Spread over the history: the oldest executions are in, not only the newest.
    expect(cases.some((c) => Number(c.executionId.slice(5)) < 30)).toBe(true);
    expect(cases[0]?.input).toEqual({ question: expect.any(String), locale: 'en' });
    expect(first.body.baseConfiguration.id).toBe(run.baseConfigurationId);
    expect(first.body.candidateConfiguration.id).toBe(run.proposedConfigurationId);
  });

  it('is read when the executions share one time (recorded in one request without startedAt)', async () => {
    const pipeline = await newPipeline(0);
    const executions = Array.from({ length: 12 }, (_, i) => ({
      id: `same-time-${i}`,
      status: i < 8 ? 'failed' : 'succeeded',
      durationMs: 1500,
      ...(i < 8
        ? {
            error: 'retrieval timed out',
            slotResults: [{ slotId: 'retrieve', status: 'failed', durationMs: 1500 }],
          }
        : {}),
    }));
    const recorded = await call('record-executions', {
      method: 'POST',
      resource: '/pipelines/{pipelineId}/executions',
      pathParameters: { pipelineId: pipeline.id },
      body: { executions },
      principal: admin.principal,
    });
    expect(new Set(recorded.body.executions.map((e: { startedAt: string }) => e.startedAt)).size).toBe(1);
    const run = await generatedRun(pipeline.id);

    const set = await getSet(run.id);

    expect(set.status).toBe(200);
    expect(set.body.cases.map((c: { executionId: string }) => c.executionId).sort()).toEqual(
      executions.map((e) => e.id).sort(),
    );
  });

  it('is read when the executions span less than a millisecond per slice of the history', async () => {
    const pipeline = await newPipeline(0);
    const from = Date.now() - 60_000;
    const executions = Array.from({ length: 12 }, (_, i) => ({
      id: `close-${i}`,
      status: i < 8 ? 'failed' : 'succeeded',
      durationMs: 1500,
      startedAt: new Date(from + (i % 4)).toISOString(),
      ...(i < 8 ? { error: 'retrieval timed out' } : {}),
    }));
    await call('record-executions', {
      method: 'POST',
      resource: '/pipelines/{pipelineId}/executions',
      pathParameters: { pipelineId: pipeline.id },
      body: { executions },
      principal: admin.principal,
    });
    await call('record-signals', {
      method: 'POST',
      resource: '/pipelines/{pipelineId}/signals',
      pathParameters: { pipelineId: pipeline.id },
      body: {
        signals: [
          {
            kind: 'timeout',
            severity: 'critical',
            message: 'timed out',
            slotId: 'retrieve',
            executionId: 'close-0',
          },
        ],
      },
      principal: admin.principal,
    });
    const run = await generatedRun(pipeline.id);

    const set = await getSet(run.id);

    expect(set.status).toBe(200);
    expect(set.body.cases).toHaveLength(12);
  });

  it('is a 409 for a run that is not generated', async () => {
    const pipeline = await newPipeline(3);
    const started = await call('synthesize-pipeline', {
      method: 'POST',
      resource: '/pipelines/{pipelineId}/synthesize',
      pathParameters: { pipelineId: pipeline.id },
      body: {},
      principal: admin.principal,
    });
    expect((await getSet(started.body.id)).status).toBe(409);
    expect(
      (await post(started.body.id, [{ executionId: 'exec-0000', arm: 'base', passed: true }])).status,
    ).toBe(409);
  });
});

async function newPipelineExecutionsLater(pipelineId: string) {
  await call('record-executions', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/executions',
    pathParameters: { pipelineId },
    body: { executions: [{ id: 'late-one', status: 'failed', durationMs: 5, error: 'late' }] },
    principal: admin.principal,
  });
}

describe('evaluation results', () => {
  it('add up on the run: fixed, regressed, pass counts per arm and deltas; a later result replaces the earlier', async () => {
    const pipeline = await newPipeline(20);
    const run = await generatedRun(pipeline.id);
    const ids = (await getSet(run.id)).body.cases.map((c: { executionId: string }) => c.executionId);
    const [a, b, c] = ids;

    const posted = await post(run.id, [
      { executionId: a, arm: 'base', passed: false, durationMs: 100, costUsd: 0.5 },
      { executionId: a, arm: 'candidate', passed: true, durationMs: 60, costUsd: 0.25 },
      { executionId: b, arm: 'base', passed: true, durationMs: 100 },
      { executionId: b, arm: 'candidate', passed: true, durationMs: 140 },
      { executionId: c, arm: 'base', passed: true },
    ]);
    expect(posted.status).toBe(200);
    expect(posted.body.evaluation).toMatchObject({ evaluated: 2, fixed: [a], regressed: [] });
    // The summary is a change of the run alone: it carries its event for the runs stream's relay.
    const { Item } = await db.send(new GetCommand({ TableName: names.Runs, Key: { id: run.id } }));
    expect(JSON.parse(String(Item?.[CARRIED_EVENT_ATTRIBUTE]))).toMatchObject({
      type: 'synthesis_run.evaluated',
      data: { runId: run.id, pipelineId: pipeline.id },
    });
    await post(run.id, [{ executionId: b, arm: 'candidate', passed: false, detail: 'wrong answer' }]);
    await post(run.id, [{ executionId: c, arm: 'candidate', passed: true }]);

    const { evaluation } = (await getRun(run.id)).body;
    expect(evaluation).toMatchObject({
      cases: ids.length,
      evaluated: 3,
      base: { passed: 2, failed: 1 },
      candidate: { passed: 2, failed: 1 },
      fixed: [a],
      regressed: [b],
      durationMsDelta: -40,
      costUsdDelta: -0.25,
    });
    const caseB = (await getSet(run.id)).body.cases.find((c: { executionId: string }) => c.executionId === b);
    expect(caseB.results).toMatchObject({
      base: { passed: true, durationMs: 100 },
      candidate: { passed: false, detail: 'wrong answer' },
    });
  });

  it('refuses an execution outside the set, an unknown arm or a non-boolean passed, storing nothing', async () => {
    const pipeline = await newPipeline(10);
    const run = await generatedRun(pipeline.id);
    const [a] = (await getSet(run.id)).body.cases.map((c: { executionId: string }) => c.executionId);
    const good = { executionId: a, arm: 'base', passed: true };

    const outside = await post(run.id, [good, { executionId: 'not-a-case', arm: 'base', passed: true }]);
    const arm = await post(run.id, [good, { executionId: a, arm: 'canary', passed: true }]);
    const passed = await post(run.id, [good, { executionId: a, arm: 'candidate', passed: 'yes' }]);

    expect(outside.status).toBe(400);
    expect(outside.body.message).toContain('not-a-case');
    expect(arm.status).toBe(400);
    expect(passed.status).toBe(400);
    expect((await getRun(run.id)).body.evaluation ?? null).toBeNull();
  });

  it('loses no result when runners post at once', async () => {
    const pipeline = await newPipeline(240);
    const run = await generatedRun(pipeline.id);
    const ids: string[] = (await getSet(run.id)).body.cases.map(
      (c: { executionId: string }) => c.executionId,
    );
    const batches = ids.flatMap((id) => [
      [{ executionId: id, arm: 'base', passed: true }],
      [{ executionId: id, arm: 'candidate', passed: id.endsWith('1') }],
    ]);

    const answers = await Promise.all(batches.map((results) => post(run.id, results)));

    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const { evaluation } = (await getRun(run.id)).body;
    expect(evaluation.evaluated).toBe(ids.length);
    expect(evaluation.regressed.length).toBe(ids.filter((id) => !id.endsWith('1')).length);
  });
});

describe('approval rules', () => {
  it('are the defaults until an admin changes them; a member may not', async () => {
    const pipeline = await newPipeline(0);
    const read = await call('get-approval-rules', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}/approval-rules',
      pathParameters: { pipelineId: pipeline.id },
      principal: member.principal,
    });
    expect(read.body).toMatchObject({
      requireEvaluation: false,
      maxRegressions: 0,
      minEvaluatedCases: 0,
      forbidSelfApproval: false,
      allowApiTokens: true,
      updatedAt: null,
    });
    const rules = {
      requireEvaluation: true,
      maxRegressions: 0,
      minEvaluatedCases: 1,
      forbidSelfApproval: false,
      allowApiTokens: true,
    };
    expect((await putRules(pipeline.id, rules, asSession(member))).status).toBe(403);
    expect((await putRules(pipeline.id, { ...rules, maxRegressions: -1 })).status).toBe(400);
    expect((await putRules(pipeline.id, rules)).body).toMatchObject({
      ...rules,
      updatedBy: admin.principal.userId,
    });
    // Only the accepted change wrote its event, carried in the rules' one item for the relay.
    const { Item } = await db.send(
      new GetCommand({ TableName: names.Settings, Key: approvalRulesKey(pipeline.id) }),
    );
    expect(JSON.parse(String(Item?.[CARRIED_EVENT_ATTRIBUTE]))).toMatchObject({
      type: 'approval_rules.updated',
      data: { pipelineId: pipeline.id, actor: { userId: admin.principal.userId } },
    });
    expect(
      (await teamEvents(admin.principal.teamId, { pipelineId: pipeline.id })).filter(
        (event) => event.type === 'approval_rules.updated',
      ),
    ).toHaveLength(0);
  });

  it("change only from a person's session: an API token, even an admin's, is a 403 that says so", async () => {
    const pipeline = await newPipeline(0);
    const loosened = {
      requireEvaluation: false,
      maxRegressions: 0,
      minEvaluatedCases: 0,
      forbidSelfApproval: false,
      allowApiTokens: true,
    };
    await putRules(pipeline.id, { ...loosened, allowApiTokens: false });

    // The token that may not approve may not loosen the rules that say so either.
    const byToken = await putRules(pipeline.id, loosened, admin.principal);
    expect(byToken.status).toBe(403);
    expect(byToken.body.message).toMatch(/session/i);
    const read = await call('get-approval-rules', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}/approval-rules',
      pathParameters: { pipelineId: pipeline.id },
      principal: admin.principal,
    });
    expect(read.body.allowApiTokens).toBe(false);
    expect((await putRules(pipeline.id, loosened, asSession(admin))).status).toBe(200);
  });

  it('refuse an approval naming each failing rule; an admin override passes them and is stored on the run', async () => {
    const pipeline = await newPipeline(10);
    const run = await generatedRun(pipeline.id);
    await putRules(pipeline.id, {
      requireEvaluation: true,
      maxRegressions: 0,
      minEvaluatedCases: 3,
      forbidSelfApproval: false,
      allowApiTokens: true,
    });

    const refused = await approve(run.id);
    expect(refused.status).toBe(409);
    expect(refused.body.details.rules).toEqual(['requireEvaluation', 'minEvaluatedCases']);
    expect((await getRun(run.id)).body.status).toBe('generated');
    expect((await approve(run.id, member.principal, { override: { reason: 'trust me' } })).status).toBe(403);

    const approved = await approve(run.id, admin.principal, { override: { reason: 'Checked by hand.' } });
    expect(approved.status).toBe(200);
    expect(approved.body.approvalOverrideReason).toBe('Checked by hand.');
    expect((await getRun(run.id)).body).toMatchObject({
      status: 'approved',
      approvalOverrideReason: 'Checked by hand.',
    });
  });

  it('judge maxRegressions on the chosen changes when each was replayed alone, and say which basis the 409 used', async () => {
    const pipeline = await newPipeline(12);
    await call('record-signals', {
      method: 'POST',
      resource: '/pipelines/{pipelineId}/signals',
      pathParameters: { pipelineId: pipeline.id },
      body: {
        signals: Array.from({ length: 4 }, (_, i) => ({
          kind: 'truncation',
          severity: 'warning',
          message: `Answer truncated: stop_reason max_tokens #${i}`,
          slotId: 'answer-model',
        })),
      },
      principal: admin.principal,
    });
    const run = await generatedRun(pipeline.id);
    const [first, second] = run.changes.map((change: { id: string }) => change.id) as [string, string];
    expect(run.changes.length).toBeGreaterThanOrEqual(2);
    await putRules(pipeline.id, {
      requireEvaluation: true,
      maxRegressions: 0,
      minEvaluatedCases: 0,
      forbidSelfApproval: false,
      allowApiTokens: true,
    });
    const ids: string[] = (await getSet(run.id)).body.cases.map(
      (c: { executionId: string }) => c.executionId,
    );
    const [fixedCase, brokenCase, ...rest] = ids as [string, string, ...string[]];
    // The second change alone breaks brokenCase (and so does the candidate); the first alone only fixes.
    const results = [
      ...ids.map((id) => ({ executionId: id, arm: 'base', passed: id !== fixedCase })),
      ...ids.map((id) => ({ executionId: id, arm: 'candidate', passed: id !== brokenCase })),
      ...ids.map((id) => ({ executionId: id, arm: `change:${first}`, passed: true })),
      ...ids.map((id) => ({ executionId: id, arm: `change:${second}`, passed: id !== brokenCase })),
    ];
    for (let at = 0; at < results.length; at += 100) {
      expect((await post(run.id, results.slice(at, at + 100))).status).toBe(200);
    }
    expect(rest.length).toBeGreaterThan(0);

    const whole = await approve(run.id);
    expect(whole.status).toBe(409);
    expect(whole.body.details.regressions).toMatchObject({ basis: 'candidate', regressed: 1 });
    expect(whole.body.message).toContain('judged on the whole candidate');
    const breaking = await approve(run.id, admin.principal, { changeIds: [second] });
    expect(breaking.status).toBe(409);
    expect(breaking.body.details.regressions).toEqual({
      basis: 'chosen_changes',
      changeIds: [second],
      regressed: 1,
      text: `judged on change ${second}, each replayed alone on the base`,
    });
    expect((await getRun(run.id)).body.status).toBe('generated');

    // Leaving out the change that broke a case follows the recommendation without an override.
    const approved = await approve(run.id, admin.principal, { changeIds: [first] });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', approvedChangeIds: [first] });
    expect(approved.body.approvalOverrideReason ?? null).toBeNull();
  });

  it('make an API token a 403 where a person must approve, and never let an override pass self-approval', async () => {
    const pipeline = await newPipeline(10);
    const run = await generatedRun(pipeline.id);
    await putRules(pipeline.id, {
      requireEvaluation: false,
      maxRegressions: 0,
      minEvaluatedCases: 0,
      forbidSelfApproval: true,
      allowApiTokens: false,
    });

    expect((await approve(run.id, admin.principal)).status).toBe(403);
    const self = await approve(run.id, asSession(admin), { override: { reason: 'mine' } });
    expect(self.status).toBe(409);
    expect(self.body.details.rules).toEqual(['forbidSelfApproval']);
    const other = await approve(run.id, { ...asSession(member), role: 'member' });
    expect(other.status).toBe(200);
    expect(other.body.approvedBy).toBe('member-user');
  });
});

/** The team's events in the outbox (the audit log), newest first. */
async function teamEvents(teamId: string, filter: { pipelineId?: string } = {}) {
  return (await listTeamEvents(db, names.Events, teamId, filter, { limit: 100 })).items;
}
