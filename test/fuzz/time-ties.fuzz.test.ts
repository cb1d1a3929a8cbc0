/**
 * Records that share one timestamp, generated: a few instants, each shared by up to 250 signals and
 * executions with random ids (random ids clump on the shards, as nanoids do), recorded through the
 * handlers on DynamoDB Local; then every merged read (export, both listings at a random page size,
 * a run's evidence and evaluation set). Asserted: no 5xx, every record read once. `npm run fuzz`
 * runs FUZZ_RUNS / 20 layouts (each writes hundreds of records); `npm test` a fixed seed of 2.
 */
import { createHash } from 'node:crypto';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SLOTS } from '../../local/seed.ts';
import {
  apiEvent,
  type Caller,
  createCaller,
  type HttpLambda,
  invoke,
  loadHandlers,
  type SqsLambda,
  setUpApiEnvironment,
} from '../integration/api/harness.ts';
import { exportLines, listAll, MERGED_READ_HANDLERS, runReads } from '../support/merged-reads.ts';

const LAYOUTS = Math.max(2, Math.ceil(Number(process.env.FUZZ_RUNS ?? 20) / 20));
const sqs = mockClient(SQSClient);
let admin: Caller;
let http: Record<string, HttpLambda>;
let worker: SqsLambda;
const tally = { layouts: 0, records: 0, serverErrors: 0 };

beforeAll(async () => {
  const { db, names } = await setUpApiEnvironment();
  admin = await createCaller(db, names);
  http = await loadHandlers([
    'create-pipeline',
    'record-signals',
    'record-executions',
    ...MERGED_READ_HANDLERS,
  ]);
  worker = (await import('../../lambdas/handlers/process-synthesis-jobs.ts')).handler as SqsLambda;
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
});
afterAll(() => {
  console.log(
    `fuzz of records sharing one time: ${tally.layouts} layouts, ${tally.records} records, ${tally.serverErrors} × 5xx`,
  );
});

const call = (entry: string, input: Omit<Parameters<typeof apiEvent>[0], 'principal'>) =>
  invoke(http[entry] as HttpLambda, apiEvent({ ...input, principal: admin.principal }));

/** Instants a little apart (ms), each with how many signals and executions share it. */
const layout = fc.array(
  fc.record({
    afterMs: fc.integer({ min: 1, max: 5_000 }),
    signals: fc.integer({ min: 0, max: 250 }),
    executions: fc.integer({ min: 0, max: 250 }),
  }),
  { minLength: 1, maxLength: 3 },
);

async function record(
  pipelineId: string,
  kind: 'signals' | 'executions',
  all: Array<{ id: string; at: string }>,
) {
  for (let from = 0; from < all.length; from += 100) {
    const batch = all
      .slice(from, from + 100)
      .map(({ id, at }, index) =>
        kind === 'signals'
          ? { id, kind: 'timeout', severity: 'critical', message: `timed out ${index}`, occurredAt: at }
          : { id, status: index % 3 ? 'succeeded' : 'failed', durationMs: 10, startedAt: at },
      );
    const answer = await call(`record-${kind}`, {
      method: 'POST',
      resource: `/pipelines/{pipelineId}/${kind}`,
      pathParameters: { pipelineId },
      body: { [kind]: batch },
    });
    expect(answer.status).toBe(201);
  }
}

describe('records sharing one timestamp, through every merged read', () => {
  it('answers no 5xx and reads every record once', async () => {
    await fc.assert(
      fc.asyncProperty(
        layout,
        fc.integer({ min: 0, max: 2 ** 30 }),
        fc.integer({ min: 1, max: 100 }),
        async (instants, idSeed, limit) => {
          const pipeline = await call('create-pipeline', {
            method: 'POST',
            resource: '/pipelines',
            body: { name: 'ties', slots: DEMO_SLOTS },
          });
          const pipelineId = pipeline.body.id;
          // As random as nanoids (they clump on the shards), yet fixed by the seed.
          let next = 0;
          const fresh = () =>
            createHash('sha256').update(`${idSeed}-${next++}`).digest('base64url').slice(0, 21);
          let at = Date.now() - 3_600_000;
          const signals: Array<{ id: string; at: string }> = [];
          const executions: Array<{ id: string; at: string }> = [];
          for (const instant of instants) {
            at += instant.afterMs;
            const iso = new Date(at).toISOString();
            for (let i = 0; i < instant.signals; i++) signals.push({ id: fresh(), at: iso });
            for (let i = 0; i < instant.executions; i++) executions.push({ id: fresh(), at: iso });
          }
          await record(pipelineId, 'signals', signals);
          await record(pipelineId, 'executions', executions);
          tally.layouts++;
          tally.records += signals.length + executions.length;

          const reader = { http, principal: admin.principal };
          const exported = await exportLines(reader, pipelineId);
          const listedSignals = await listAll(reader, 'list-signals', pipelineId, limit);
          const listedExecutions = await listAll(reader, 'list-executions', pipelineId, limit);
          const reads = await runReads(
            reader,
            () => sqs.commandCalls(SendMessageCommand).at(-1)?.args[0].input.MessageBody as string,
            worker,
            pipelineId,
          );
          const statuses = [
            ...exported.statuses,
            ...listedSignals.statuses,
            ...listedExecutions.statuses,
            reads.evidence.status,
            reads.set.status,
          ];
          tally.serverErrors += statuses.filter((status) => status >= 500).length;

          expect(statuses.filter((status) => status >= 500)).toEqual([]);
          const exportedOf = (type: string) =>
            exported.lines
              .filter((line) => line.type === type)
              .map((line) => line.record.id)
              .sort();
          expect(exportedOf('signal')).toEqual(signals.map((s) => s.id).sort());
          expect(exportedOf('execution')).toEqual(executions.map((e) => e.id).sort());
          expect([...listedSignals.ids].sort()).toEqual(signals.map((s) => s.id).sort());
          expect([...listedExecutions.ids].sort()).toEqual(executions.map((e) => e.id).sort());
        },
      ),
      { numRuns: LAYOUTS, seed: 4747 },
    );
  }, 900_000);
});
