/*
 * Records that share one millisecond, through every merged read of the sharded partitions (store/
 * shards.ts), on DynamoDB Local through the operations' handlers: the export, the signal and
 * execution listings, a run's evidence and its evaluation set. Two batches sent without a time are
 * stamped in one millisecond each; a page bound rounded to that millisecond once lay before the
 * previous page's start key, and DynamoDB refused the Query (a 500).
 */
import { createHash } from 'node:crypto';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_SLOTS } from '../../../local/seed.ts';
import { exportLines, listAll, MERGED_READ_HANDLERS, runReads } from '../../support/merged-reads.ts';
import {
  apiEvent,
  type Caller,
  createCaller,
  type HttpLambda,
  invoke,
  loadHandlers,
  type SqsLambda,
  setUpApiEnvironment,
} from './harness.ts';

const sqs = mockClient(SQSClient);
let admin: Caller;
let http: Record<string, HttpLambda>;
let worker: SqsLambda;

beforeAll(async () => {
  const { db, names } = await setUpApiEnvironment();
  admin = await createCaller(db, names);
  http = await loadHandlers([
    'create-pipeline',
    'record-signals',
    'record-executions',
    ...MERGED_READ_HANDLERS,
  ]);
  worker = (await import('../../../lambdas/handlers/process-synthesis-jobs.ts')).handler as SqsLambda;
});

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
});

const reader = () => ({ http, principal: admin.principal });
const lastJob = () => sqs.commandCalls(SendMessageCommand).at(-1)?.args[0].input.MessageBody as string;
const call = (entry: string, input: Omit<Parameters<typeof apiEvent>[0], 'principal'>) =>
  invoke(http[entry] as HttpLambda, apiEvent({ ...input, principal: admin.principal }));

/** Signals and executions each: two hundred at one instant, two hundred at the next. */
const RECORDS = 400;

/**
 * Ids as random as nanoid's yet fixed, so each record's shard is too: sequential ids spread evenly
 * over the shards, random ones clump, and it took a clump (of these seeds) for a page to stop
 * inside the shared millisecond.
 */
const fixedId = (seed: string, index: number) =>
  createHash('sha256').update(`${seed}-${index}`).digest('base64url').slice(0, 21);

describe('records that share one millisecond', () => {
  let pipelineId: string;
  const signalIds: string[] = [];
  const executionIds: string[] = [];

  beforeAll(async () => {
    const created = await call('create-pipeline', {
      method: 'POST',
      resource: '/pipelines',
      body: { name: 'ties', slots: DEMO_SLOTS },
    });
    pipelineId = created.body.id;
    // Two instants, each shared by hundreds of records (as batches sent without a time are).
    const first = Date.now() - 60_000;
    const instants = [new Date(first).toISOString(), new Date(first + 600).toISOString()];
    for (let batch = 0; batch < Math.ceil(RECORDS / 100); batch++) {
      const count = Math.min(100, RECORDS - batch * 100);
      const occurredAt = instants[batch < 2 ? 0 : 1];
      const answer = await call('record-signals', {
        method: 'POST',
        resource: '/pipelines/{pipelineId}/signals',
        pathParameters: { pipelineId },
        body: {
          signals: Array.from({ length: count }, (_, i) => ({
            id: fixedId('tie10', batch * 100 + i),
            kind: 'timeout',
            severity: i % 2 ? 'warning' : 'critical',
            message: `Retrieval timed out (${batch}.${i})`,
            slotId: 'retrieve',
            occurredAt,
          })),
        },
      });
      expect(answer.status).toBe(201);
      signalIds.push(...answer.body.signals.map((signal: { id: string }) => signal.id));
      const executions = await call('record-executions', {
        method: 'POST',
        resource: '/pipelines/{pipelineId}/executions',
        pathParameters: { pipelineId },
        body: {
          executions: Array.from({ length: count }, (_, i) => ({
            id: fixedId('tie16', batch * 100 + i),
            status: i % 3 ? 'succeeded' : 'failed',
            durationMs: 100 + i,
            startedAt: occurredAt,
            input: { question: `q ${batch}.${i}` },
          })),
        },
      });
      expect(executions.status).toBe(201);
      executionIds.push(...executions.body.executions.map((execution: { id: string }) => execution.id));
    }
  }, 120_000);

  it('exports every record once, page after page', async () => {
    const { lines, statuses } = await exportLines(reader(), pipelineId);

    expect(statuses.every((status) => status === 200)).toBe(true);
    const ofType = (type: string) => lines.filter((line) => line.type === type).map((line) => line.record.id);
    expect(ofType('signal').sort()).toEqual([...signalIds].sort());
    expect(ofType('execution').sort()).toEqual([...executionIds].sort());
  });

  it('lists every signal and every execution once, page after page', async () => {
    const signals = await listAll(reader(), 'list-signals', pipelineId);
    const executions = await listAll(reader(), 'list-executions', pipelineId);

    expect(signals.statuses.every((status) => status === 200)).toBe(true);
    expect(executions.statuses.every((status) => status === 200)).toBe(true);
    expect([...signals.ids].sort()).toEqual([...signalIds].sort());
    expect([...executions.ids].sort()).toEqual([...executionIds].sort());
  });

  it("reads a run's evidence and its evaluation set", async () => {
    const { started, run, evidence, set } = await runReads(reader(), lastJob, worker, pipelineId);

    expect(started.status).toBe(202);
    expect(run.body.status).toBe('generated');
    expect(run.body.analyzedSignalIds.length).toBeGreaterThan(0);
    expect(evidence.status).toBe(200);
    expect(evidence.body.signals.length).toBeGreaterThan(0);
    expect(set.status).toBe(200);
    expect(set.body.cases.length).toBeGreaterThan(50);
    const known = new Set(executionIds);
    expect(set.body.cases.every((c: { executionId: string }) => known.has(c.executionId))).toBe(true);
  });
});
