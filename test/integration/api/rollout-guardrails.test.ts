/*
 * Guarded rollouts on DynamoDB Local through the operations' handlers: several metrics judged by
 * the anytime-valid test on counters kept with the recording (a score whose signals arrive before
 * or after their executions, the mean duration), steps that raise the share while keys stay in
 * the candidate, and the compatibility of a rollout started without guardrails.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { servesCandidate } from '../../../lambdas/core/rollouts/routing.ts';
import { makeJudgeRollouts } from '../../../lambdas/core/use-cases/guardrails.ts';
import { listTeamEvents } from '../../../lambdas/store/events.ts';
import { pipelineKey, rolloutKey } from '../../../lambdas/store/keys.ts';
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
    'record-signals',
    'record-executions',
    'synthesize-pipeline',
    'get-synthesis-run',
    'approve-synthesis-run',
    'get-pipeline-rollout',
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

const post = async (pipelineId: string, what: 'signals' | 'executions', records: object[]) => {
  for (let i = 0; i < records.length; i += 100) {
    const recorded = await call(`record-${what}`, {
      method: 'POST',
      resource: `/pipelines/{pipelineId}/${what}`,
      pathParameters: { pipelineId },
      body: { [what]: records.slice(i, i + 100) },
    });
    expect(recorded.status, JSON.stringify(recorded.body)).toBe(201);
  }
};

/** A pipeline with a generated run, approved into a rollout with these settings. */
async function inRollout(rollout: object) {
  const created = await call('create-pipeline', {
    method: 'POST',
    resource: '/pipelines',
    body: { name: 'bot', slots: DEMO_SLOTS },
  });
  const pipeline = created.body as { id: string; activeConfigurationId: string };
  await post(pipeline.id, 'signals', [
    ...Array.from({ length: 4 }, (_, i) => ({
      kind: 'timeout',
      severity: 'critical',
      message: `Retrieval timed out after 1500 ms (query ${i})`,
      slotId: 'retrieve',
    })),
  ]);
  const started = await call('synthesize-pipeline', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/synthesize',
    pathParameters: { pipelineId: pipeline.id },
    body: {},
  });
  const body = sqs.commandCalls(SendMessageCommand).at(-1)?.args[0].input.MessageBody as string;
  await worker(sqsEvent([body]), lambdaContext());
  const approved = await call('approve-synthesis-run', {
    method: 'POST',
    resource: '/synthesis-runs/{id}/approve',
    pathParameters: { id: started.body.id },
    body: { rollout },
  });
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  return {
    pipeline,
    runId: started.body.id as string,
    base: pipeline.activeConfigurationId,
    candidate: approved.body.appliedConfigurationId as string,
  };
}

const judge = () =>
  makeJudgeRollouts({
    pipelines: makePipelineRepository(db, names.Data),
    rollouts: makeRolloutRepository(db, names.Data, names.Events),
    runs: makeRunRepository(db, { runs: names.Runs, data: names.Data, events: names.Events }),
    clock: systemClock,
    ids: nanoidGenerator,
  })();

const getRollout = async (pipelineId: string) =>
  (
    await call('get-pipeline-rollout', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}/rollout',
      pathParameters: { pipelineId },
    })
  ).body;
const effect = async (runId: string, history = false) =>
  (
    await call('get-synthesis-run-effect', {
      method: 'GET',
      resource: '/synthesis-runs/{id}/effect',
      pathParameters: { id: runId },
      ...(history ? { query: { history: 'true' } } : {}),
    })
  ).body;

/** n executions of a configuration, none failed, with durations around `meanMs`. */
const executions = (prefix: string, configurationId: string, n: number, meanMs = 1000) =>
  Array.from({ length: n }, (_, i) => ({
    id: `${prefix}-${i}`,
    configurationId,
    status: i % 50 === 0 ? 'failed' : 'succeeded',
    durationMs: meanMs + ((i * 37) % 200) - 100,
  }));
/** A relevance score for each execution id. */
const scores = (prefix: string, n: number, mean: number) =>
  Array.from({ length: n }, (_, i) => ({
    kind: 'relevance',
    severity: 'info',
    message: 'relevance judged',
    executionId: `${prefix}-${i}`,
    value: mean + (((i * 13) % 20) - 10) / 100,
  }));

describe('a guarded score', () => {
  it('counts signals for the arm of the execution they cite, sent before or after it, and rolls a worse score back by name', async () => {
    const { pipeline, runId, base, candidate } = await inRollout({
      percent: 50,
      minExecutions: 30,
      guardrails: [
        { metric: 'failure_rate' },
        { metric: 'signal', kind: 'relevance', direction: 'higher_is_better', threshold: 0.05 },
      ],
    });
    // Half of each arm's scores arrive before their executions, half after.
    await post(pipeline.id, 'signals', [...scores('b', 100, 0.8), ...scores('c', 100, 0.6)]);
    await post(pipeline.id, 'executions', [
      ...executions('b', base, 200),
      ...executions('c', candidate, 200),
    ]);
    await post(pipeline.id, 'signals', [
      ...scores('b', 200, 0.8).slice(100),
      ...scores('c', 200, 0.6).slice(100),
    ]);

    const [outcome] = await judge();

    expect(outcome?.action).toBe('rolled_back');
    const ended = await getRollout(pipeline.id);
    expect(ended).toMatchObject({ status: 'rolled_back', endedBy: 'system' });
    expect(ended.endReason).toMatch(
      /^Guardrail: signal relevance is worse on the candidate: signal relevance 0\.595 \(n = 200\) on the candidate against 0\.795 \(n = 200\)/,
    );
    const measured = await effect(runId, true);
    expect(measured.metrics.map((m: { metric: string; verdict: string }) => [m.metric, m.verdict])).toEqual([
      ['failure_rate', 'inconclusive'],
      ['signal', 'worse'],
    ]);
    // The same failure rate on both arms: only the score says worse.
    expect(measured.metrics[0].difference).toBeCloseTo(0, 10);
    expect(measured.history).toHaveLength(1);
    expect(measured.history[0].metrics[1].interval[1]).toBeLessThan(0);
  });
});

describe('a guarded score recorded while executions arrive', () => {
  it('counts a batch where some executions have scores waiting and others not, each score once', async () => {
    const { pipeline, runId, base, candidate } = await inRollout({
      percent: 50,
      minExecutions: 30,
      guardrails: [{ metric: 'signal', kind: 'relevance', direction: 'higher_is_better', threshold: 0.05 }],
    });
    const baseScores = scores('m', 100, 0.7);
    // A third of the scores before their executions, in both arms' batches; the rest after.
    await post(pipeline.id, 'signals', [...baseScores.slice(0, 30), ...scores('n', 100, 0.7).slice(0, 30)]);
    await post(pipeline.id, 'executions', [...executions('m', base, 100)]);
    await post(pipeline.id, 'executions', [...executions('n', candidate, 100)]);
    await post(pipeline.id, 'signals', [...baseScores.slice(30), ...scores('n', 100, 0.7).slice(30)]);

    const score = (await effect(runId)).metrics[0];
    expect([score.base.n, score.applied.n]).toEqual([100, 100]);
    const mean = baseScores.reduce((sum, s) => sum + s.value, 0) / 100;
    expect(score.base.mean).toBeCloseTo(mean, 10);
    expect(score.applied.mean).toBeCloseTo(mean, 10);
  });
});

describe('a guarded mean duration', () => {
  it('rolls a slower candidate back naming the mean duration, with both means in ms', async () => {
    const { pipeline, base, candidate } = await inRollout({
      percent: 50,
      minExecutions: 30,
      guardrails: [{ metric: 'failure_rate' }, { metric: 'duration_ms', threshold: 100 }],
    });
    await post(pipeline.id, 'executions', [
      ...executions('b', base, 200, 1000),
      ...executions('c', candidate, 200, 1400),
    ]);

    await judge();

    const ended = await getRollout(pipeline.id);
    expect(ended.status).toBe('rolled_back');
    expect(ended.endReason).toContain(
      'mean duration is worse on the candidate: mean duration 1400 ms (n = 200) on the candidate against 1000 ms (n = 200)',
    );
    expect(ended.endReason).toContain('threshold 100 ms');
  });
});

describe('steps', () => {
  it('moves 5 → 20 → 50 as each step holds, keeps keys in the candidate, and promotes at the last', async () => {
    const { pipeline, base, candidate } = await inRollout({
      percent: 5,
      steps: [5, 20, 50],
      minExecutions: 30,
      autoPromote: true,
      guardrails: [{ metric: 'duration_ms', threshold: 300 }],
    });
    const serve = async (key: string) =>
      (
        await call('get-serving-configuration', {
          method: 'GET',
          resource: '/pipelines/{pipelineId}/serving-configuration',
          pathParameters: { pipelineId: pipeline.id },
          query: { routingKey: key },
        })
      ).body.arm as string;
    const keys = Array.from({ length: 200 }, (_, i) => `user-${i}`);
    const armsAt: string[][] = [];
    const rollouts: Array<{ percent: number; step?: number; status: string }> = [];
    for (let step = 0; step < 3; step++) {
      armsAt.push(await Promise.all(keys.map(serve)));
      await post(pipeline.id, 'executions', [
        ...executions(`b${step}`, base, 200, 1000),
        ...executions(`c${step}`, candidate, 200, 1000),
      ]);
      await judge();
      rollouts.push(await getRollout(pipeline.id));
    }

    expect(rollouts.map((r) => [r.status, r.percent, r.step])).toEqual([
      ['active', 20, 1],
      ['active', 50, 2],
      ['promoted', 50, 2],
    ]);
    // A key in the candidate stays in it as the share grows.
    for (const [i, arm] of (armsAt[0] ?? []).entries()) {
      if (arm === 'candidate') expect([armsAt[1]?.[i], armsAt[2]?.[i]]).toEqual(['candidate', 'candidate']);
    }
    const shares = armsAt.map((arms) => arms.filter((arm) => arm === 'candidate').length);
    expect(shares[0]).toBeLessThan(shares[1] ?? 0);
    expect(shares[1]).toBeLessThan(shares[2] ?? 0);
    expect(servesCandidate({ id: 'r', percent: 5 }, 'k')).toBe(servesCandidate({ id: 'r', percent: 5 }, 'k'));
    const page = await listTeamEvents(
      db,
      names.Events,
      admin.principal.teamId,
      { pipelineId: pipeline.id },
      { limit: 100 },
    );
    const stepped = page.items.filter((event) => event.type === 'rollout.stepped');
    expect(stepped.map((event) => [event.data.step, event.data.percent])).toEqual(
      expect.arrayContaining([
        [1, 20],
        [2, 50],
      ]),
    );
  });
});

describe('a rollout started before guardrails were kept', () => {
  it('is judged on its failure counts, and its effect says so', async () => {
    const { pipeline, runId, base, candidate } = await inRollout({ percent: 50, minExecutions: 30 });
    // As stored before this change: no guardrails on the rollout (nor on the pipeline's copy).
    const rollout = await getRollout(pipeline.id);
    await db.send(
      new UpdateCommand({
        TableName: names.Data,
        Key: rolloutKey(rollout),
        UpdateExpression: 'REMOVE guardrails',
      }),
    );
    await db.send(
      new UpdateCommand({
        TableName: names.Data,
        Key: pipelineKey(pipeline.id),
        UpdateExpression: 'REMOVE #r.guardrails',
        ExpressionAttributeNames: { '#r': 'rollout' },
      }),
    );
    await post(pipeline.id, 'executions', [
      ...executions('b', base, 100),
      ...Array.from({ length: 100 }, (_, i) => ({
        id: `c-${i}`,
        configurationId: candidate,
        status: i < 60 ? 'failed' : 'succeeded',
        durationMs: 5000,
      })),
    ]);

    const measured = await effect(runId);
    expect(measured.notes).toEqual([expect.stringContaining('before sums were kept')]);
    expect(measured.metrics).toEqual([expect.objectContaining({ metric: 'failure_rate', verdict: 'worse' })]);
    await judge();
    expect((await getRollout(pipeline.id)).status).toBe('rolled_back');
  });
});

describe('guardrail settings', () => {
  it('refuses a signal guardrail without its threshold, and steps that do not start at the percent', async () => {
    // A run already approved into a rollout: the body is refused before anything else is looked at.
    const { runId } = await inRollout({ percent: 5 });
    const approve = (rollout: object) =>
      call('approve-synthesis-run', {
        method: 'POST',
        resource: '/synthesis-runs/{id}/approve',
        pathParameters: { id: runId },
        body: { rollout },
      });
    const noThreshold = await approve({
      percent: 5,
      guardrails: [{ metric: 'signal', kind: 'relevance', direction: 'higher_is_better' }],
    });
    expect(noThreshold.status, JSON.stringify(noThreshold.body)).toBe(400);
    expect(JSON.stringify(noThreshold.body)).toContain('a signal guardrail needs a threshold');
    const steps = await approve({ percent: 5, steps: [10, 20] });
    expect(steps.status).toBe(400);
    expect(JSON.stringify(steps.body)).toContain('steps start at the rollout');
  });
});
