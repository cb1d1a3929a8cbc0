import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
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
let viewer: Caller;
let otherTeam: Caller;
let http: Record<string, Handler>;
let worker: SqsLambda;

beforeAll(async () => {
  const { db, names } = await setUpApiEnvironment();
  [admin, otherTeam] = await Promise.all([createCaller(db, names), createCaller(db, names)]);
  // A viewer in the admin's team.
  viewer = { apiToken: '', principal: { ...admin.principal, role: 'viewer' } };
  const entries = [
    'create-pipeline',
    'get-pipeline',
    'record-signals',
    'synthesize-pipeline',
    'get-synthesis-run',
    'approve-synthesis-run',
    'reject-synthesis-run',
    'get-synthesis-run-diff',
    'list-synthesis-runs',
    'activate-configuration',
    'list-activations',
    'get-synthesis-run-evidence',
  ];
  http = await loadHandlers(entries);
  worker = (await import('../../../lambdas/handlers/process-synthesis-jobs.ts')).handler as SqsLambda;
});

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
});

const call = (entry: string, input: Parameters<typeof apiEvent>[0]) =>
  invoke(http[entry] as Handler, apiEvent(input));

async function newPipeline(caller: Caller = admin) {
  const pipeline = (
    await call('create-pipeline', {
      method: 'POST',
      resource: '/pipelines',
      body: { name: 'bot', slots: DEMO_SLOTS },
      principal: caller.principal,
    })
  ).body;
  const signals = Array.from({ length: 4 }, (_, i) => ({
    kind: 'timeout',
    severity: 'critical',
    message: `Retrieval timed out #${i}`,
    slotId: 'retrieve',
  }));
  await call('record-signals', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/signals',
    pathParameters: { pipelineId: pipeline.id },
    body: { signals },
    principal: caller.principal,
  });
  return pipeline;
}

function synthesize(pipelineId: string, options: { key?: string; body?: object; caller?: Caller } = {}) {
  return call('synthesize-pipeline', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/synthesize',
    pathParameters: { pipelineId },
    body: options.body ?? {},
    headers: options.key ? { 'Idempotency-Key': options.key } : {},
    principal: (options.caller ?? admin).principal,
  });
}

async function generatedRun(pipelineId: string) {
  const started = await synthesize(pipelineId);
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
const getPipeline = async (pipelineId: string) =>
  (
    await call('get-pipeline', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}',
      pathParameters: { pipelineId },
      principal: admin.principal,
    })
  ).body;
const decide = (decision: 'approve' | 'reject', id: string, caller: Caller = admin, body?: object) =>
  call(`${decision}-synthesis-run`, {
    method: 'POST',
    resource: `/synthesis-runs/{id}/${decision}`,
    pathParameters: { id },
    body: body ?? null,
    principal: caller.principal,
  });
const activate = (pipelineId: string, configurationId: string, body?: object, caller: Caller = admin) =>
  call('activate-configuration', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/configurations/{configurationId}/activate',
    pathParameters: { pipelineId, configurationId },
    body: body ?? null,
    principal: caller.principal,
  });

describe('approve', () => {
  it('approves a generated run and makes its proposal the active configuration, recording the activation', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);

    const approved = await decide('approve', run.id);

    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({
      id: run.id,
      status: 'approved',
      approvedBy: admin.principal.userId,
    });
    expect(approved.body.approvedAt).toEqual(expect.any(String));
    expect((await getPipeline(pipeline.id)).activeConfigurationId).toBe(run.proposedConfigurationId);
    const history = await call('list-activations', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}/activations',
      pathParameters: { pipelineId: pipeline.id },
      principal: admin.principal,
    });
    expect(history.body.items).toEqual([
      expect.objectContaining({ source: 'approval', synthesisRunId: run.id, version: 2, previousVersion: 1 }),
    ]);
  });

  it('answers 409 naming the status for a run that is not generated, and changes nothing', async () => {
    const pipeline = await newPipeline();
    const pending = await synthesize(pipeline.id);
    const refused = await decide('approve', pending.body.id);
    expect(refused).toMatchObject({ status: 409, body: { error: 'CONFLICT' } });
    expect(refused.body.message).toContain('pending');
    expect((await decide('reject', pending.body.id)).body.message).toContain('pending');

    const run = await generatedRun(pipeline.id);
    expect((await decide('approve', run.id)).status).toBe(200);
    const again = await decide('approve', run.id);
    expect(again.status).toBe(409);
    expect(again.body.message).toContain('approved');
    expect((await decide('reject', run.id)).body.message).toContain('approved');
  });

  it('refuses a run whose base is no longer active with 409, and nothing changes', async () => {
    const pipeline = await newPipeline();
    const first = await generatedRun(pipeline.id);
    const second = await generatedRun(pipeline.id);
    expect((await decide('approve', first.id)).status).toBe(200);

    const stale = await decide('approve', second.id);

    expect(stale).toMatchObject({ status: 409, body: { error: 'CONFLICT' } });
    expect(stale.body.message).toContain('no longer');
    expect((await getRun(second.id)).body.status).toBe('generated');
    expect((await getPipeline(pipeline.id)).activeConfigurationId).toBe(first.proposedConfigurationId);
  });

  it('lets exactly one of concurrent decisions on one run win', async () => {
    const pipeline = await newPipeline();
    const race = await generatedRun(pipeline.id);
    const results = await Promise.all([decide('approve', race.id), decide('reject', race.id)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const final = (await getRun(race.id)).body.status;
    expect(['approved', 'rejected']).toContain(final);
    expect((await getPipeline(pipeline.id)).activeConfigurationId).toBe(
      final === 'approved' ? race.proposedConfigurationId : pipeline.activeConfigurationId,
    );

    const pipeline2 = await newPipeline();
    const twice = await generatedRun(pipeline2.id);
    const approvals = await Promise.all([decide('approve', twice.id), decide('approve', twice.id)]);
    expect(approvals.map((r) => r.status).sort()).toEqual([200, 409]);
  });

  it('refuses viewers and other teams', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);
    expect(await decide('approve', run.id, viewer)).toMatchObject({
      status: 403,
      body: { error: 'FORBIDDEN' },
    });
    expect(await decide('reject', run.id, viewer)).toMatchObject({
      status: 403,
      body: { error: 'FORBIDDEN' },
    });
    expect(await decide('approve', run.id, otherTeam)).toMatchObject({
      status: 403,
      body: { error: 'FORBIDDEN' },
    });
    expect((await getRun(run.id)).body.status).toBe('generated');
  });
});

describe('reject', () => {
  it('rejects a generated run with the reviewer and reason stored', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);
    expect((await decide('reject', run.id, admin, { reason: 'x'.repeat(5000) })).status).toBe(400);

    const rejected = await decide('reject', run.id, admin, { reason: 'Timeouts were a network incident.' });

    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({
      status: 'rejected',
      rejectedBy: admin.principal.userId,
      rejectionReason: 'Timeouts were a network incident.',
    });
    expect((await getPipeline(pipeline.id)).activeConfigurationId).toBe(pipeline.activeConfigurationId);
  });
});

describe('listing, diff and rollback', () => {
  it('lists a pipeline runs newest first, by status, a page at a time', async () => {
    const pipeline = await newPipeline();
    const generated = await generatedRun(pipeline.id);
    const pending = (await synthesize(pipeline.id)).body;
    const list = (query: Record<string, string>) =>
      call('list-synthesis-runs', {
        method: 'GET',
        resource: '/pipelines/{pipelineId}/synthesis-runs',
        pathParameters: { pipelineId: pipeline.id },
        query,
        principal: admin.principal,
      });

    expect((await list({})).body.items.map((r: { id: string }) => r.id)).toEqual([pending.id, generated.id]);
    expect((await list({ status: 'generated' })).body.items.map((r: { id: string }) => r.id)).toEqual([
      generated.id,
    ]);
    const page1 = await list({ limit: '1' });
    const page2 = await list({ limit: '1', cursor: page1.body.nextCursor });
    expect(page2.body.items[0].id).toBe(generated.id);
    expect((await list({ status: 'bogus' })).status).toBe(400);
    expect((await list({ cursor: `${page1.body.nextCursor}x` })).status).toBe(400);
    const forged = Buffer.from(
      JSON.stringify({ id: 'a', pipelineId: 'someone-else', createdAt: 'z' }),
    ).toString('base64url');
    expect(await list({ cursor: forged })).toMatchObject({
      status: 400,
      body: { error: 'VALIDATION_ERROR' },
    });
  });

  it('shows what a proposal changes, slot by slot', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);
    const diff = await call('get-synthesis-run-diff', {
      method: 'GET',
      resource: '/synthesis-runs/{id}/diff',
      pathParameters: { id: run.id },
      principal: admin.principal,
    });
    expect(diff.status).toBe(200);
    expect(diff.body.base).toEqual({ id: pipeline.activeConfigurationId, version: 1 });
    expect(diff.body.proposed).toEqual({ id: run.proposedConfigurationId, version: 2 });
    const retrieve = diff.body.slots.find((slot: { slotId: string }) => slot.slotId === 'retrieve');
    expect(retrieve.status).toBe('changed');
    expect(retrieve.settings).toContainEqual({ key: 'timeoutMs', before: 1500, after: expect.any(Number) });
    expect(retrieve.changeIds.length).toBeGreaterThan(0);
    expect(diff.body.slots.map((slot: { slotId: string }) => slot.slotId)).toEqual(
      DEMO_SLOTS.map((slot) => slot.id),
    );
  });

  it('rolls back to an earlier configuration with who, when and why recorded', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);
    await decide('approve', run.id);

    const rollback = await activate(pipeline.id, pipeline.activeConfigurationId, {
      reason: 'Latency regressed',
    });

    expect(rollback.status).toBe(200);
    expect(rollback.body).toMatchObject({
      source: 'rollback',
      configurationId: pipeline.activeConfigurationId,
      version: 1,
      previousVersion: 2,
      reason: 'Latency regressed',
      activatedBy: admin.principal.userId,
      summary: 'Restored version 1 (replacing version 2).',
    });
    expect((await getPipeline(pipeline.id)).activeConfigurationId).toBe(pipeline.activeConfigurationId);
    expect((await activate(pipeline.id, pipeline.activeConfigurationId)).status).toBe(409);
    expect((await activate(pipeline.id, 'no-such-config')).status).toBe(404);
    expect((await activate(pipeline.id, run.proposedConfigurationId, {}, viewer)).status).toBe(403);
    expect((await activate(pipeline.id, run.proposedConfigurationId, {}, otherTeam)).status).toBe(403);
    // The approved proposal was active before: rolling forward to it again is fine.
    expect((await activate(pipeline.id, run.proposedConfigurationId)).status).toBe(200);
  });

  it('refuses to activate a proposal nobody approved (generated or rejected) with 409, changing nothing', async () => {
    const pipeline = await newPipeline();
    const pending = await generatedRun(pipeline.id);
    const rejected = await generatedRun(pipeline.id);
    await decide('reject', rejected.id, admin, { reason: 'not convincing' });

    const bypass = await activate(pipeline.id, pending.proposedConfigurationId);
    const revived = await activate(pipeline.id, rejected.proposedConfigurationId);

    expect(bypass).toMatchObject({ status: 409, body: { error: 'CONFLICT' } });
    expect(bypass.body.message).toMatch(/never active.*approve that run/);
    expect(revived).toMatchObject({ status: 409, body: { error: 'CONFLICT' } });
    expect(revived.body.message).toContain('rejected');
    expect((await getPipeline(pipeline.id)).activeConfigurationId).toBe(pipeline.activeConfigurationId);
  });
});

describe('Idempotency-Key on synthesize', () => {
  it('answers a repeat with the same run and queues no second job', async () => {
    const pipeline = await newPipeline();
    const first = await synthesize(pipeline.id, { key: 'deploy-42' });
    const repeat = await synthesize(pipeline.id, { key: 'deploy-42' });
    expect(first.status).toBe(202);
    expect(repeat.status).toBe(202);
    expect(repeat.body.id).toBe(first.body.id);
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(1);

    const other = await synthesize(pipeline.id, { key: 'deploy-43' });
    expect(other.body.id).not.toBe(first.body.id);
  });

  it('answers concurrent repeats with one run', async () => {
    const pipeline = await newPipeline();
    const responses = await Promise.all(
      Array.from({ length: 4 }, () => synthesize(pipeline.id, { key: 'burst' })),
    );
    const ids = new Set(responses.filter((r) => r.status === 202).map((r) => r.body.id));
    expect(ids.size).toBe(1);
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(1);
  });

  it('refuses the same key with a different body, and a malformed key', async () => {
    const pipeline = await newPipeline();
    await synthesize(pipeline.id, { key: 'k1' });
    const different = await synthesize(pipeline.id, {
      key: 'k1',
      body: { synthesisHandler: 'heuristic-v1' },
    });
    expect(different).toMatchObject({ status: 409, body: { error: 'CONFLICT' } });
    expect(different.body.message).toContain('Idempotency-Key');
    const elsewhere = await synthesize((await newPipeline()).id, { key: 'k1' });
    expect(elsewhere.status).toBe(409);
    expect((await synthesize(pipeline.id, { key: 'has space' })).status).toBe(400);
    expect((await synthesize(pipeline.id, { key: 'x'.repeat(256) })).status).toBe(400);
  });

  it('does not pin a key to a run whose job could not be queued', async () => {
    const pipeline = await newPipeline();
    sqs.on(SendMessageCommand).rejectsOnce(new Error('down')).resolves({ MessageId: 'm' });
    expect((await synthesize(pipeline.id, { key: 'retry-me' })).status).toBe(503);
    const retried = await synthesize(pipeline.id, { key: 'retry-me' });
    expect(retried.status).toBe(202);
    expect(retried.body.status).toBe('pending');
  });
});

describe('GET /synthesis-runs/{id}/evidence', () => {
  const evidence = (runId: string, caller: Caller = admin) =>
    call('get-synthesis-run-evidence', {
      method: 'GET',
      resource: '/synthesis-runs/{id}/evidence',
      pathParameters: { id: runId },
      principal: caller.principal,
    });

  it('answers the very signals the findings cite, as records, and keeps them after newer signals arrive', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);
    const cited = new Set<string>(
      run.diagnosis.findings.flatMap((finding: { signalIds: string[] }) => finding.signalIds),
    );
    await call('record-signals', {
      method: 'POST',
      resource: '/pipelines/{pipelineId}/signals',
      pathParameters: { pipelineId: pipeline.id },
      body: {
        signals: Array.from({ length: 100 }, () => ({
          kind: 'feedback',
          severity: 'info',
          message: 'later',
        })),
      },
      principal: admin.principal,
    });

    const answer = await evidence(run.id);

    expect(answer.status).toBe(200);
    expect(cited.size).toBeGreaterThan(0);
    expect(new Set(answer.body.signals.map((signal: { id: string }) => signal.id))).toEqual(cited);
    for (const signal of answer.body.signals) {
      expect(signal).toMatchObject({ pipelineId: pipeline.id, kind: 'timeout', message: expect.any(String) });
    }
    expect(answer.body.executions).toEqual([]);
  });

  it('is 403 for another team and 404 for a run that does not exist', async () => {
    const run = await generatedRun((await newPipeline()).id);
    expect((await evidence(run.id, otherTeam)).status).toBe(403);
    expect((await evidence('A'.repeat(21))).status).toBe(404);
  });
});
