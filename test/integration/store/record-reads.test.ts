/**
 * The listings read back across the shards on DynamoDB Local (store/record-reads.ts): page by page
 * newest first, every execution once (the legacy partition's included), filtered by status, the
 * cursor bound to its pipeline, and one execution read by its id wherever its shard is.
 */
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { nanoid } from 'nanoid';
import { beforeAll, describe, expect, it } from 'vitest';
import { RETENTION_DAYS } from '../../../lambdas/core/lifecycle.ts';
import type { RecordReads } from '../../../lambdas/core/ports/record-reads.ts';
import type { Execution } from '../../../lambdas/core/schemas/records.ts';
import { executionIdKey, executionsPartition } from '../../../lambdas/store/keys.ts';
import { makePipelineRepository } from '../../../lambdas/store/pipelines.ts';
import { makeRecordReads } from '../../../lambdas/store/record-reads.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { setUpApiEnvironment } from '../api/harness.ts';

const SINCE = '2000-01-01T00:00:00.000Z';
const BASE = Date.parse('2026-02-01T00:00:00.000Z');

let db: DynamoDBDocumentClient;
let names: TableNames;
let reads: RecordReads;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  reads = makeRecordReads(db, names.Data);
});

const execution = (pipelineId: string, index: number): Execution => ({
  id: `e-${index}`,
  pipelineId,
  configurationId: 'config-1',
  status: index % 7 === 0 ? 'failed' : 'succeeded',
  durationMs: index,
  startedAt: new Date(BASE + index * 1000).toISOString(),
});

async function history(pipelineId: string, count: number, legacy: number) {
  const all = Array.from({ length: count }, (_, index) => execution(pipelineId, index));
  const pipelines = makePipelineRepository(db, names.Data, names.Events);
  const sharded = all.slice(legacy);
  for (let at = 0; at < sharded.length; at += 100) {
    await pipelines.recordExecutions(sharded.slice(at, at + 100), RETENTION_DAYS.default, null);
  }
  // The oldest under the keys of versions before the shards.
  const items = all.slice(0, legacy).flatMap((record) => [
    { pk: executionsPartition(pipelineId, null), sk: `${record.startedAt}#${record.id}`, ...record },
    { ...executionIdKey(pipelineId, record.id, true), recordTime: record.startedAt },
  ]);
  for (let at = 0; at < items.length; at += 25) {
    const requests = items.slice(at, at + 25).map((Item) => ({ PutRequest: { Item } }));
    await db.send(new BatchWriteCommand({ RequestItems: { [names.Data]: requests } }));
  }
  return all;
}

async function everyPage(pipelineId: string, filter: { status?: Execution['status'] }, limit: number) {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const read = await reads.listExecutions(pipelineId, { since: SINCE, ...filter }, { limit, cursor });
    ids.push(...read.items.map((item) => item.id));
    if (read.nextCursor === null) return ids;
    cursor = read.nextCursor;
  }
  throw new Error('The pages did not end.');
}

describe('listings across the shards', () => {
  it('says a page ending at the last execution is the last, however the executions fall over the shards', async () => {
    // The second page re-reads the first page's last item (its cursor); whether it was counted
    // as the item past the page depended on which shards the ids hashed to.
    const pipelineIds = Array.from({ length: 20 }, () => `p-${nanoid()}`);
    const pages = await Promise.all(
      pipelineIds.map(async (pipelineId) => {
        const records = Array.from({ length: 4 }, (_, index) => ({
          ...execution(pipelineId, index),
          id: `e-${nanoid()}`,
          startedAt: new Date(Date.now() - 90_000 + index * 10_000).toISOString(),
        }));
        await makePipelineRepository(db, names.Data, names.Events).recordExecutions(
          records,
          RETENTION_DAYS.default,
          null,
        );
        // As the API asks: since the start of the team's retention window.
        const since = new Date(Date.now() - RETENTION_DAYS.default * 86_400_000).toISOString();
        const first = await reads.listExecutions(pipelineId, { since }, { limit: 2 });
        const cursor = first.nextCursor ?? undefined;
        const second = await reads.listExecutions(pipelineId, { since }, { limit: 2, cursor });
        return [first.items.length, second.items.length, second.nextCursor];
      }),
    );
    expect(pages).toEqual(pipelineIds.map(() => [2, 2, null]));
  });

  it('pages through every execution once, newest first, and by status', async () => {
    const pipelineId = `p-${nanoid()}`;
    const all = await history(pipelineId, 230, 30);
    const newestFirst = [...all].reverse();

    expect(await everyPage(pipelineId, {}, 25)).toEqual(newestFirst.map((record) => record.id));
    expect(await everyPage(pipelineId, { status: 'failed' }, 6)).toEqual(
      newestFirst.filter((record) => record.status === 'failed').map((record) => record.id),
    );
    const last = await reads.listExecutions(pipelineId, { since: SINCE }, { limit: 230 });
    expect(last.items).toHaveLength(230);
    expect(last.nextCursor).toBeNull();
    expect(await reads.getExecution(pipelineId, 'e-3', SINCE)).toMatchObject(all[3] as Execution);
    expect(await reads.getExecution(pipelineId, 'e-200', SINCE)).toMatchObject(all[200] as Execution);
    expect(await reads.getExecution(pipelineId, 'e-200', '2027-01-01T00:00:00.000Z')).toBeNull();
  });

  it("refuses another pipeline's cursor", async () => {
    const [one, other] = [`p-${nanoid()}`, `p-${nanoid()}`];
    await history(one, 10, 0);
    const page = await reads.listExecutions(one, { since: SINCE }, { limit: 3 });
    expect(page.nextCursor).toEqual(expect.any(String));
    await expect(
      reads.listExecutions(other, { since: SINCE }, { limit: 3, cursor: page.nextCursor ?? undefined }),
    ).rejects.toThrow(/cursor is invalid/);
  });
});
