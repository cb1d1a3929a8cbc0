/**
 * An execution assembled from a trace revised by a fuller assembly (store/traces.ts) on DynamoDB
 * Local, with the shards' keys: replaced in place, read by its id afterwards, and the rollout's
 * exact counts follow a changed status (one off the old, one onto the new), counted once.
 */
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { nanoid } from 'nanoid';
import { beforeAll, describe, expect, it } from 'vitest';
import { RETENTION_DAYS } from '../../../lambdas/core/lifecycle.ts';
import type { PipelineRepository } from '../../../lambdas/core/ports/pipelines.ts';
import type { Execution } from '../../../lambdas/core/schemas/records.ts';
import { RECORD_SHARDS, rolloutCountsKey } from '../../../lambdas/store/keys.ts';
import { makePipelineRepository } from '../../../lambdas/store/pipelines.ts';
import { recordById } from '../../../lambdas/store/records.ts';
import { makeReviseExecution } from '../../../lambdas/store/traces.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { setUpApiEnvironment } from '../api/harness.ts';

let db: DynamoDBDocumentClient;
let names: TableNames;
let pipelines: PipelineRepository;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  pipelines = makePipelineRepository(db, names.Data, names.Events);
});

/** The rollout's counts summed over the counter shards, as the effect reads them. */
async function counts(pipelineId: string, rolloutId: string) {
  const sum = { base: 0, baseFailed: 0, candidate: 0, candidateFailed: 0 };
  for (let shard = 0; shard < RECORD_SHARDS; shard++) {
    const { Item } = await db.send(
      new GetCommand({ TableName: names.Data, Key: rolloutCountsKey(pipelineId, rolloutId, shard) }),
    );
    for (const field of Object.keys(sum) as Array<keyof typeof sum>) sum[field] += Number(Item?.[field] ?? 0);
  }
  return sum;
}

describe('revising an execution assembled from a trace', () => {
  it("moves the rollout's counts with a changed status, once", async () => {
    const pipelineId = `p-${nanoid()}`;
    const rollout = {
      id: `r-${nanoid()}`,
      baseConfigurationId: 'base-config',
      candidateConfigurationId: 'candidate-config',
      startedAt: new Date(Date.now() - 60_000).toISOString(),
    };
    const sparse: Execution & { spanCount: number } = {
      id: `trace-${nanoid()}`,
      pipelineId,
      configurationId: 'candidate-config',
      status: 'succeeded',
      durationMs: 40,
      startedAt: new Date(Date.now() - 5_000).toISOString(),
      source: 'otlp',
      spanCount: 2,
    };
    // A concurrent batch of the other arm, counted on its own.
    await pipelines.recordExecutions(
      [{ ...sparse, id: `api-${nanoid()}`, configurationId: 'base-config', source: 'api' }],
      RETENTION_DAYS.default,
      rollout,
    );
    await pipelines.recordExecutions([sparse], RETENTION_DAYS.default, rollout);
    expect(await counts(pipelineId, rollout.id)).toEqual({
      base: 1,
      baseFailed: 0,
      candidate: 1,
      candidateFailed: 0,
    });

    const revise = makeReviseExecution(db, names.Data);
    const fuller = { ...sparse, status: 'failed' as const, error: 'timeout', spanCount: 5 };
    expect(await revise(fuller, RETENTION_DAYS.default, rollout)).toBe('revised');
    // The same revision again (a retried request) changes nothing.
    expect(await revise(fuller, RETENTION_DAYS.default, rollout)).toBe('kept');

    expect(await counts(pipelineId, rollout.id)).toEqual({
      base: 1,
      baseFailed: 0,
      candidate: 1,
      candidateFailed: 1,
    });
    expect(await recordById({ db, tableName: names.Data }, 'execution', pipelineId, sparse.id)).toMatchObject(
      { status: 'failed', error: 'timeout', spanCount: 5 },
    );
  });
});
