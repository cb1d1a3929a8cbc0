import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Principal } from '../../../lambdas/core/principal.ts';
import { makeAuthRepository } from '../../../lambdas/wiring/repositories.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { DEMO_SLOTS } from '../../../local/seed.ts';
import {
  apiEvent,
  type Caller,
  createCaller,
  type HttpLambda as Handler,
  invoke,
  loadHandlers,
  setUpApiEnvironment,
} from './harness.ts';

/*
 * Changes made by hand (POST …/proposals) and feedback on an execution (POST …/feedback), through
 * the operations' handlers: a proposal is a generated "manual" run checked like a model's, which
 * approval then treats as any run; feedback is a human_feedback signal that names who said it.
 */

const sqs = mockClient(SQSClient);
let db: DynamoDBDocumentClient;
let names: TableNames;
let admin: Caller;
let outsider: Caller;
let viewer: Principal;
let http: Record<string, Handler>;
let pipelineId: string;
let email: string;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  [admin, outsider] = await Promise.all([createCaller(db, names), createCaller(db, names)]);
  viewer = { ...admin.principal, role: 'viewer' };
  email =
    (await makeAuthRepository(db, names.Auth, names.Events).getUser(admin.principal.userId))?.email ?? '';
  http = await loadHandlers([
    'create-pipeline',
    'record-executions',
    'propose-changes',
    'get-synthesis-run',
    'get-configuration',
    'approve-synthesis-run',
    'put-approval-rules',
    'get-synthesis-run-evaluation-set',
    'record-execution-feedback',
    'get-execution',
    'list-signals',
    'list-synthesis-runs',
  ]);
  pipelineId = (
    await call('create-pipeline', {
      method: 'POST',
      resource: '/pipelines',
      body: { name: 'hand bot', slots: DEMO_SLOTS },
      principal: admin.principal,
    })
  ).body.id;
});

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
});

const call = (entry: string, input: Parameters<typeof apiEvent>[0]) =>
  invoke(http[entry] as Handler, apiEvent(input));

const propose = (body: object, principal: Principal = admin.principal) =>
  call('propose-changes', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/proposals',
    pathParameters: { pipelineId },
    body,
    principal,
  });

const lowerTemperature = {
  slotId: 'answer-model',
  description: 'Lower the temperature',
  rationale: 'Answers wander',
  patch: { temperature: 0.2 },
};

describe('changes made by hand', () => {
  it('become a generated manual run, cost 0, triggered by the person, with the patched configuration', async () => {
    const made = await propose({
      note: 'Steadier answers',
      changes: [
        lowerTemperature,
        {
          slotId: 'answer-prompt',
          description: 'Ask for sources',
          patch: { template: 'Cite sources.\n{{question}}' },
        },
      ],
    });
    expect(made.status).toBe(201);
    expect(made.headers.location).toBe(`/prod/synthesis-runs/${made.body.id}`);
    expect(made.body).toMatchObject({
      status: 'generated',
      synthesisHandler: 'manual',
      triggeredBy: admin.principal.userId,
      triggeredByName: email,
      costUsd: 0,
      estimatedCostUsd: 0,
      diagnosis: { summary: 'Steadier answers', findings: [] },
      changes: [
        { id: '1', slotId: 'answer-model', patch: { temperature: 0.2 }, rationale: 'Answers wander' },
        { id: '2', slotId: 'answer-prompt', rationale: '' },
      ],
    });
    const proposed = await call('get-configuration', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}/configurations/{configurationId}',
      pathParameters: { pipelineId, configurationId: made.body.proposedConfigurationId },
      principal: admin.principal,
    });
    expect(proposed.body.version).toBe(2);
    const bySlot = new Map(proposed.body.slots.map((slot: { id: string }) => [slot.id, slot]));
    expect(bySlot.get('answer-model')).toMatchObject({
      settings: { temperature: 0.2, maxTokens: 256, model: 'claude-sonnet-4-5' },
    });
    expect(bySlot.get('answer-prompt')).toMatchObject({
      settings: { template: 'Cite sources.\n{{question}}' },
    });
  });

  it('refuses each change a model would have had dropped, naming it, and stores nothing', async () => {
    const cases: Array<[object, RegExp]> = [
      [
        { slotId: 'nope', description: 'x', patch: { a: 1 } },
        /Change 2 is refused: it targets slot "nope", which is not in the active configuration/,
      ],
      [
        { slotId: 'answer-model', description: 'x', patch: { temperature: 7 } },
        /Change 2 is refused: its patch would make the settings of slot "answer-model" invalid \(temperature: /,
      ],
      [
        { slotId: 'answer-model', description: 'x', patch: { maxTokens: 256 } },
        /Change 2 is refused: its patch leaves the settings of slot "answer-model" unchanged/,
      ],
    ];
    for (const [second, message] of cases) {
      const refused = await propose({ changes: [lowerTemperature, second] });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ error: 'VALIDATION_ERROR', details: [{ path: 'changes.1' }] });
      expect(refused.body.message).toMatch(message);
    }
    const reserved = await propose({
      changes: [{ ...lowerTemperature, patch: JSON.parse('{"__proto__": {"x": 1}}') }],
    });
    expect(reserved.body.message).toMatch(/__proto__/);
    for (const body of [{ changes: [] }, { changes: [{ slotId: 'answer-model', patch: {} }] }, {}]) {
      expect((await propose(body)).status).toBe(400);
    }
    const runs = await call('list-synthesis-runs', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}/synthesis-runs',
      pathParameters: { pipelineId },
      principal: admin.principal,
    });
    // Only the first test's proposal: no refused one left a run behind.
    expect(runs.body.items).toHaveLength(1);
  });

  it('a viewer cannot propose, another team gets a 403, an unknown pipeline a 404', async () => {
    expect((await propose({ changes: [lowerTemperature] }, viewer)).status).toBe(403);
    expect((await propose({ changes: [lowerTemperature] }, outsider.principal)).status).toBe(403);
    const unknown = await call('propose-changes', {
      method: 'POST',
      resource: '/pipelines/{pipelineId}/proposals',
      pathParameters: { pipelineId: 'doesNotExist123' },
      body: { changes: [lowerTemperature] },
      principal: admin.principal,
    });
    expect(unknown.status).toBe(404);
  });

  it('is approved like any run: forbidSelfApproval keeps its author from approving it', async () => {
    const rules = await call('put-approval-rules', {
      method: 'PUT',
      resource: '/pipelines/{pipelineId}/approval-rules',
      pathParameters: { pipelineId },
      body: {
        requireEvaluation: false,
        maxRegressions: 0,
        minEvaluatedCases: 0,
        forbidSelfApproval: true,
        allowApiTokens: true,
      },
      principal: { ...admin.principal, method: 'session', tokenId: undefined, sessionId: 's' },
    });
    expect(rules.status).toBe(200);
    const made = await propose({ changes: [{ ...lowerTemperature, patch: { temperature: 0.1 } }] });
    const approve = (principal: Principal) =>
      call('approve-synthesis-run', {
        method: 'POST',
        resource: '/synthesis-runs/{id}/approve',
        pathParameters: { id: made.body.id },
        body: { rollout: { percent: 10 } },
        principal,
      });
    const own = await approve({ ...admin.principal, method: 'session', tokenId: undefined, sessionId: 's' });
    expect(own.status).toBe(409);
    expect(JSON.stringify(own.body)).toMatch(/forbidSelfApproval/);
    const colleague = await createCaller(db, names);
    const other = {
      ...colleague.principal,
      teamId: admin.principal.teamId,
      method: 'session' as const,
      tokenId: undefined,
      sessionId: 't',
    };
    await makeAuthRepository(db, names.Auth, names.Events).putMembership({
      userId: other.userId,
      teamId: other.teamId,
      role: 'admin',
      createdAt: new Date().toISOString(),
    });
    const approved = await approve(other);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({
      status: 'approved',
      approvedBy: other.userId,
      rolloutId: expect.any(String),
    });
  });
});

describe('feedback on an execution', () => {
  it('records a human_feedback signal citing it, value 1 or 0, naming the person', async () => {
    const executions = await call('record-executions', {
      method: 'POST',
      resource: '/pipelines/{pipelineId}/executions',
      pathParameters: { pipelineId },
      body: { executions: [{ status: 'succeeded', durationMs: 120 }] },
      principal: admin.principal,
    });
    const executionId = executions.body.executions[0].id;
    const feedback = (body: object, principal: Principal = admin.principal, id = executionId) =>
      call('record-execution-feedback', {
        method: 'POST',
        resource: '/pipelines/{pipelineId}/executions/{executionId}/feedback',
        pathParameters: { pipelineId, executionId: id },
        body,
        principal,
      });
    const good = await feedback({ rating: 'good' });
    expect(good.status).toBe(201);
    expect(good.body).toMatchObject({
      kind: 'human_feedback',
      severity: 'info',
      value: 1,
      executionId,
      recordedBy: admin.principal.userId,
      recordedByName: `${email} (API token "bootstrap")`,
    });
    const bad = await feedback(
      { rating: 'bad', note: 'Cited the wrong policy' },
      {
        ...admin.principal,
        method: 'session',
        tokenId: undefined,
        sessionId: 's',
      },
    );
    expect(bad.body).toMatchObject({ value: 0, severity: 'warning', recordedByName: email });
    expect(bad.body.message).toBe(`Bad, said ${email}: Cited the wrong policy`);

    const shown = await call('get-execution', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}/executions/{executionId}',
      pathParameters: { pipelineId, executionId },
      principal: admin.principal,
    });
    expect(shown.body.signals.map((signal: { value: number }) => signal.value).sort()).toEqual([0, 1]);

    expect((await feedback({ rating: 'meh' })).status).toBe(400);
    expect((await feedback({ rating: 'good', recordedBy: 'someone-else' })).status).toBe(400);
    expect((await feedback({ rating: 'good' }, viewer)).status).toBe(403);
    expect((await feedback({ rating: 'good' }, outsider.principal)).status).toBe(403);
    expect((await feedback({ rating: 'good' }, admin.principal, 'noSuchExecution1')).status).toBe(404);
  });
});
