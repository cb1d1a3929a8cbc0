/*
 * The ends of a pipeline's execution history for an evaluation set, on DynamoDB Local: its oldest
 * start kept with the recording (store/kept-keys.ts executionOldestKey) in a few writes, its newest
 * read with the last slice, so sampling reads no more items than one partition's Queries did, and
 * executions written before the start was kept (the legacy partition, older) are still sampled.
 */
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { nanoid } from 'nanoid';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Execution } from '../../../lambdas/core/schemas/records.ts';
import { makeEvaluationStore } from '../../../lambdas/store/evaluations.ts';
import { executionIdKey, executionsPartition } from '../../../lambdas/store/keys.ts';
import { recordExecutions } from '../../../lambdas/store/records.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { setUpApiEnvironment } from '../api/harness.ts';

const WHOLE_HISTORY = '2000-01-01T00:00:00.000Z';
const BASE = Date.parse('2026-03-01T00:00:00.000Z');

let db: DynamoDBDocumentClient;
let names: TableNames;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
});

const executions = (pipelineId: string, count: number, from: number, prefix: string): Execution[] =>
  Array.from({ length: count }, (_, index) => ({
    id: `${prefix}-${index}`,
    pipelineId,
    configurationId: 'c1',
    status: index % 4 === 0 ? 'failed' : 'succeeded',
    durationMs: 100,
    startedAt: new Date(from + index * 1_000).toISOString(),
  }));

async function record(all: Execution[]) {
  for (let at = 0; at < all.length; at += 100) {
    await recordExecutions({ db, tableName: names.Data }, all.slice(at, at + 100), 90, null);
  }
}

/** Items read by the Queries of the ends (of one key each, reading the key only), while `read` runs. */
async function endReads(read: () => Promise<unknown>) {
  let items = 0;
  const name = `count-end-reads-${nanoid(6)}`;
  db.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args);
      const input = args.input as { Limit?: number; ProjectionExpression?: string };
      const output = result.output as { ScannedCount?: number };
      if (input.Limit === 1 && input.ProjectionExpression === 'sk') items += output.ScannedCount ?? 0;
      return result;
    },
    { step: 'initialize', name },
  );
  try {
    return { answer: await read(), items };
  } finally {
    db.middlewareStack.remove(name);
  }
}

describe("an evaluation set's history ends", () => {
  const store = () => makeEvaluationStore(db, { runs: names.Runs, data: names.Data });

  it('come from the ends kept with the recording: no item is read to find them', async () => {
    const pipelineId = `p-${nanoid()}`;
    await record(executions(pipelineId, 600, BASE, 'e'));

    const { answer, items } = await endReads(() => store().sampleExecutions(pipelineId, WHOLE_HISTORY));

    // 600 over ten slices of at most 100: every one, the oldest and the newest included.
    const ids = (answer as Array<{ id: string }>).map((stub) => stub.id);
    expect(ids).toHaveLength(600);
    expect(ids).toContain('e-0');
    expect(ids).toContain('e-599');
    expect(items).toBe(0);
  });

  it('keep the oldest start in a few writes: once an environment, again only for an older start', async () => {
    const pipelineId = `p-${nanoid()}`;
    const writes: string[] = [];
    const name = `count-oldest-writes-${nanoid(6)}`;
    db.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as {
          Key?: { sk?: string };
          ExpressionAttributeValues?: Record<string, string>;
        };
        if (input.Key?.sk === 'OLDEST') writes.push(String(input.ExpressionAttributeValues?.[':oldest']));
        return next(args);
      },
      { step: 'initialize', name },
    );
    try {
      await record(executions(pipelineId, 1000, BASE, 'e'));
      expect(writes).toEqual([new Date(BASE).toISOString()]);
      // Sent late, an hour before the rest: the history now starts there.
      await record(executions(pipelineId, 5, BASE - 3_600_000, 'late'));
      await record(executions(pipelineId, 5, BASE - 1_800_000, 'later'));
      expect(writes).toEqual([new Date(BASE).toISOString(), new Date(BASE - 3_600_000).toISOString()]);
    } finally {
      db.middlewareStack.remove(name);
    }
    const ids = (await store().sampleExecutions(pipelineId, WHOLE_HISTORY)).map((stub) => stub.id);
    expect(ids).toContain('late-0');
    expect(ids).toContain('e-999');
  });

  it('read no more items than one partition did: two ends and ten slices of 100', async () => {
    const pipelineId = `p-${nanoid()}`;
    // 2,000 over a minute, as `npm run bench -- partitions` records them (its ids are random).
    const all = Array.from({ length: 2000 }, (_, index) => ({
      ...executions(pipelineId, 1, BASE + index * 30, `x${index}`)[0],
      status: index % 10 === 0 ? ('failed' as const) : ('succeeded' as const),
    })) as Execution[];
    await record(all);
    let items = 0;
    const name = `count-items-${nanoid(6)}`;
    db.middlewareStack.add(
      (next) => async (args) => {
        const result = await next(args);
        const output = result.output as { ScannedCount?: number; Item?: unknown };
        items += (output.ScannedCount ?? 0) + (output.Item === undefined ? 0 : 1);
        return result;
      },
      { step: 'initialize', name },
    );
    let sampled: Array<{ id: string }>;
    try {
      sampled = await store().sampleExecutions(pipelineId, WHOLE_HISTORY);
    } finally {
      db.middlewareStack.remove(name);
    }
    // The newest 100 of each tenth of the minute: the 100 before every 200th start.
    const expected = Array.from({ length: 10 }, (_, slice) =>
      Array.from({ length: 100 }, (_, index) => `x${slice * 200 + 199 - index}-0`),
    ).flat();
    expect(sampled.map((stub) => stub.id)).toEqual(expected);
    expect(items).toBeLessThanOrEqual(1002);
  });

  it('still reach executions written before the ends were kept, older than every kept start', async () => {
    const pipelineId = `p-${nanoid()}`;
    // As versions before the shards wrote them: the legacy partition, a day before the rest.
    const legacy = executions(pipelineId, 30, BASE - 86_400_000, 'old');
    const items = legacy.flatMap((execution) => [
      {
        pk: executionsPartition(pipelineId, null),
        sk: `${execution.startedAt}#${execution.id}`,
        ...execution,
      },
      { ...executionIdKey(pipelineId, execution.id, true), recordTime: execution.startedAt },
    ]);
    for (let at = 0; at < items.length; at += 25) {
      const requests = items.slice(at, at + 25).map((Item) => ({ PutRequest: { Item } }));
      await db.send(new BatchWriteCommand({ RequestItems: { [names.Data]: requests } }));
    }
    await record(executions(pipelineId, 200, BASE, 'new'));

    const sampled = await store().sampleExecutions(pipelineId, WHOLE_HISTORY);
    const ids = sampled.map((stub) => stub.id);

    expect(ids).toContain('old-0');
    expect(ids).toContain('old-29');
    expect(ids).toContain('new-199');
  });

  it('leave the window: an end before the retention floor is not read', async () => {
    const pipelineId = `p-${nanoid()}`;
    await record(executions(pipelineId, 50, BASE, 'e'));
    const floor = new Date(BASE + 25_000).toISOString();

    const sampled = await store().sampleExecutions(pipelineId, floor);

    expect(sampled.map((stub) => stub.id).sort()).toEqual(
      Array.from({ length: 25 }, (_, index) => `e-${index + 25}`).sort(),
    );
    expect(await store().sampleExecutions(pipelineId, new Date(BASE + 86_400_000).toISOString())).toEqual([]);
  });
});
