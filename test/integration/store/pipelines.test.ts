/**
 * Signal and execution ids are unique in their pipeline, whatever the record's time: written
 * against DynamoDB Local, with a request that dies between the two transactions and with races.
 */
import { type DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { nanoid } from 'nanoid';
import { beforeAll, describe, expect, it } from 'vitest';
import { RETENTION_DAYS } from '../../../lambdas/core/lifecycle.ts';
import type { PipelineRepository } from '../../../lambdas/core/ports/pipelines.ts';
import type { Execution, Signal } from '../../../lambdas/core/schemas/records.ts';
import { makePipelineRepository } from '../../../lambdas/store/pipelines.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { setUpApiEnvironment } from '../api/harness.ts';

/** The lower bound of a read of every record (no record is dated before 2000). */
const WHOLE_HISTORY = '2000-01-01T00:00:00.000Z';

let db: DynamoDBDocumentClient;
let names: TableNames;
let pipelines: PipelineRepository;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  pipelines = makePipelineRepository(db, names.Data, names.Events);
});

const T1 = '2026-02-01T00:00:00.000Z';
const T2 = '2026-02-01T00:00:01.000Z';

const signal = (pipelineId: string, id: string, occurredAt = T1): Signal => ({
  id,
  pipelineId,
  kind: 'error',
  severity: 'warning',
  message: `signal ${id}`,
  occurredAt,
});

const execution = (pipelineId: string, id: string, startedAt = T1): Execution => ({
  id,
  pipelineId,
  configurationId: 'config-1',
  status: 'failed',
  durationMs: 10,
  startedAt,
});

/** The ids of the pipeline's stored signals, each as often as it is stored. */
const storedSignalIds = async (pipelineId: string) =>
  (await pipelines.recentSignals(pipelineId, 200, WHOLE_HISTORY)).map((stored) => stored.id).sort();

/** A client whose request dies right after its first transaction (a Lambda timeout, a crash). */
function dyingAfterFirstTransaction(): DynamoDBDocumentClient {
  let transactions = 0;
  const send = (command: unknown) => {
    if (command instanceof TransactWriteCommand && ++transactions > 1)
      return Promise.reject(new Error('the Lambda died here'));
    return db.send(command as TransactWriteCommand);
  };
  return { send } as unknown as DynamoDBDocumentClient;
}

describe('a signal id in its pipeline', () => {
  it('is a 409 naming the ids when sent again with another time, and nothing of that batch is stored', async () => {
    const pipelineId = nanoid();
    await pipelines.recordSignals(
      [signal(pipelineId, 'sig-a'), signal(pipelineId, 'sig-b')],
      RETENTION_DAYS.default,
    );

    const refused = pipelines.recordSignals(
      [signal(pipelineId, 'sig-new'), signal(pipelineId, 'sig-a', T2), signal(pipelineId, 'sig-b', T2)],
      RETENTION_DAYS.default,
    );

    await expect(refused).rejects.toMatchObject({
      statusCode: 409,
      message:
        'These signal ids are already recorded in this pipeline with another time: sig-a, sig-b. ' +
        'An id names one record of a pipeline; nothing in the batch was recorded.',
    });
    expect(await storedSignalIds(pipelineId)).toEqual(['sig-a', 'sig-b']);
    // Nothing of the refused batch holds an id: sig-new can still be recorded, at any time.
    await pipelines.recordSignals([signal(pipelineId, 'sig-new', T2)], RETENTION_DAYS.default);
    expect(await storedSignalIds(pipelineId)).toEqual(['sig-a', 'sig-b', 'sig-new']);
  });

  it('is still a 409 "already recorded" when sent again with the same time', async () => {
    const pipelineId = nanoid();
    await pipelines.recordSignals([signal(pipelineId, 'sig-a')], RETENTION_DAYS.default);

    await expect(
      pipelines.recordSignals([signal(pipelineId, 'sig-a')], RETENTION_DAYS.default),
    ).rejects.toMatchObject({
      statusCode: 409,
      message: 'These signals are already recorded: sig-a. Nothing in the batch was recorded.',
    });
    expect(await storedSignalIds(pipelineId)).toEqual(['sig-a']);
  });

  it('may be used in another pipeline', async () => {
    const [first, second] = [nanoid(), nanoid()];
    await pipelines.recordSignals([signal(first, 'sig-a')], RETENTION_DAYS.default);
    await pipelines.recordSignals([signal(second, 'sig-a', T2)], RETENTION_DAYS.default);
    expect(await storedSignalIds(second)).toEqual(['sig-a']);
  });

  it('lets a batch whose request died between its two transactions be sent again: 201, stored once', async () => {
    const pipelineId = nanoid();
    const batch = [signal(pipelineId, 'sig-a'), signal(pipelineId, 'sig-b', T2)];
    const dying = makePipelineRepository(dyingAfterFirstTransaction(), names.Data, names.Events);
    await expect(dying.recordSignals(batch, RETENTION_DAYS.default)).rejects.toThrow('the Lambda died here');
    expect(await storedSignalIds(pipelineId)).toEqual([]);

    await pipelines.recordSignals(batch, RETENTION_DAYS.default);

    expect(await storedSignalIds(pipelineId)).toEqual(['sig-a', 'sig-b']);
  });

  it('is stored exactly once when two batches race with it at different times', async () => {
    const pipelineId = nanoid();
    const ids = Array.from({ length: 10 }, (_, index) => `sig-${index}`);

    const outcomes = await Promise.allSettled(
      ids.flatMap((id) => [
        pipelines.recordSignals([signal(pipelineId, id, T1)], RETENTION_DAYS.default),
        pipelines.recordSignals([signal(pipelineId, id, T2)], RETENTION_DAYS.default),
      ]),
    );

    expect(await storedSignalIds(pipelineId)).toEqual(ids.sort());
    const refused = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(refused).toHaveLength(ids.length);
    for (const outcome of refused) expect(outcome.reason).toMatchObject({ statusCode: 409 });
  });
});

describe('an execution id in its pipeline', () => {
  it('is a 409 naming the id when sent again with another start, and nothing of that batch is stored', async () => {
    const pipelineId = nanoid();
    await pipelines.recordExecutions([execution(pipelineId, 'run-a')], RETENTION_DAYS.default, null);

    await expect(
      pipelines.recordExecutions(
        [execution(pipelineId, 'run-new'), execution(pipelineId, 'run-a', T2)],
        RETENTION_DAYS.default,
        null,
      ),
    ).rejects.toMatchObject({
      statusCode: 409,
      message: expect.stringContaining('already recorded in this pipeline with another time: run-a.'),
    });
    const stored = (await pipelines.recentExecutions(pipelineId, 200, WHOLE_HISTORY)).map(
      (stored) => stored.id,
    );
    expect(stored).toEqual(['run-a']);
  });

  it('lets a batch whose request died between its two transactions be sent again', async () => {
    const pipelineId = nanoid();
    const batch = [execution(pipelineId, 'run-a')];
    const dying = makePipelineRepository(dyingAfterFirstTransaction(), names.Data, names.Events);
    await expect(dying.recordExecutions(batch, RETENTION_DAYS.default, null)).rejects.toThrow(
      'the Lambda died here',
    );

    await pipelines.recordExecutions(batch, RETENTION_DAYS.default, null);

    expect(
      (await pipelines.recentExecutions(pipelineId, 200, WHOLE_HISTORY)).map((stored) => stored.id),
    ).toEqual(['run-a']);
  });
});
