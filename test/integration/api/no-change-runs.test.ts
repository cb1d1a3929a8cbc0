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

/*
 * A run that finds nothing to change, through the operations' handlers on DynamoDB Local: it is
 * generated without a proposed configuration, takes no configuration version, and every action on
 * a proposal (approve, roll out, evaluate, compare) is a 409 that says why and writes nothing.
 */

const sqs = mockClient(SQSClient);
let admin: Caller;
let http: Record<string, Handler>;
let worker: SqsLambda;

beforeAll(async () => {
  const { db, names } = await setUpApiEnvironment();
  admin = await createCaller(db, names);
  http = await loadHandlers([
    'create-pipeline',
    'get-pipeline',
    'record-signals',
    'synthesize-pipeline',
    'get-synthesis-run',
    'approve-synthesis-run',
    'reject-synthesis-run',
    'get-synthesis-run-diff',
    'get-synthesis-run-evaluation-set',
    'record-synthesis-run-evaluations',
    'list-activations',
  ]);
  worker = (await import('../../../lambdas/handlers/process-synthesis-jobs.ts')).handler as SqsLambda;
});

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
});

const call = (entry: string, input: Parameters<typeof apiEvent>[0]) =>
  invoke(http[entry] as Handler, apiEvent(input));
const runCall = (entry: string, method: 'GET' | 'POST', suffix: string, id: string, body?: unknown) =>
  call(entry, {
    method,
    resource: `/synthesis-runs/{id}${suffix}`,
    pathParameters: { id },
    body: body ?? null,
    principal: admin.principal,
  });

async function newPipeline() {
  const created = await call('create-pipeline', {
    method: 'POST',
    resource: '/pipelines',
    body: { name: 'quiet bot', slots: DEMO_SLOTS },
    principal: admin.principal,
  });
  return created.body as { id: string; activeConfigurationId: string };
}

async function generatedRun(pipelineId: string) {
  const started = await call('synthesize-pipeline', {
    method: 'POST',
    resource: '/pipelines/{pipelineId}/synthesize',
    pathParameters: { pipelineId },
    body: {},
    principal: admin.principal,
  });
  const message = sqs.commandCalls(SendMessageCommand).at(-1)?.args[0].input.MessageBody as string;
  await worker(sqsEvent([message]), lambdaContext());
  return (await runCall('get-synthesis-run', 'GET', '', started.body.id)).body;
}

const pipelineOf = async (pipelineId: string) =>
  (
    await call('get-pipeline', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}',
      pathParameters: { pipelineId },
      principal: admin.principal,
    })
  ).body;

describe('a run with nothing to change', () => {
  it('is generated with no proposed configuration, a no_changes warning, and takes no version', async () => {
    const pipeline = await newPipeline();

    const run = await generatedRun(pipeline.id);

    expect(run).toMatchObject({ status: 'generated', changes: [], proposedConfigurationId: null });
    expect(run.structuredWarnings.map((w: { type: string }) => w.type)).toContain('no_changes');
    // The next proposal that changes something is version 2: the quiet run took no number.
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
    const next = await generatedRun(pipeline.id);
    const diff = await runCall('get-synthesis-run-diff', 'GET', '/diff', next.id);
    expect(diff.body.proposed.version).toBe(2);
  });

  it('cannot be approved, rolled out, evaluated or compared: 409 saying why, and nothing is written', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);

    const answers = [
      await runCall('approve-synthesis-run', 'POST', '/approve', run.id),
      await runCall('approve-synthesis-run', 'POST', '/approve', run.id, { rollout: { percent: 50 } }),
      await runCall('get-synthesis-run-evaluation-set', 'GET', '/evaluation-set', run.id),
      await runCall('record-synthesis-run-evaluations', 'POST', '/evaluations', run.id, {
        results: [{ executionId: 'exec-1', arm: 'candidate', passed: true }],
      }),
      await runCall('get-synthesis-run-diff', 'GET', '/diff', run.id),
    ];

    for (const answer of answers) {
      expect(answer.status).toBe(409);
      expect(answer.body.error).toBe('CONFLICT');
      expect(answer.body.message).toMatch(/found nothing to change/);
      expect(answer.body.message).toMatch(/nothing was written/);
    }
    expect((await runCall('get-synthesis-run', 'GET', '', run.id)).body).toEqual(run);
    const after = await pipelineOf(pipeline.id);
    expect(after).toMatchObject({ activeConfigurationId: pipeline.activeConfigurationId, rollout: null });
    const activations = await call('list-activations', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}/activations',
      pathParameters: { pipelineId: pipeline.id },
      principal: admin.principal,
    });
    expect(activations.body.items).toEqual([]);
  });

  it('can be rejected, to close it', async () => {
    const pipeline = await newPipeline();
    const run = await generatedRun(pipeline.id);

    const rejected = await runCall('reject-synthesis-run', 'POST', '/reject', run.id, { reason: 'seen' });

    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ status: 'rejected', proposedConfigurationId: null });
  });
});
