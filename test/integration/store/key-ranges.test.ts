import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeEffectStore } from '../../../lambdas/store/effects.ts';
import { makeEvaluationStore } from '../../../lambdas/store/evaluations.ts';
import { recordExecutions } from '../../../lambdas/store/records.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { setUpApiEnvironment } from '../api/harness.ts';

/*
 * The Queries that read a sort-key range between two computed bounds, on DynamoDB Local: a range
 * whose bounds cross (DynamoDB's "upper bound must be ≥ lower bound") is read as empty, never a 500.
 */

let db: DynamoDBDocumentClient;
let names: TableNames;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
});

const WHOLE_HISTORY = '2000-01-01T00:00:00.000Z';

async function executionsAt(pipelineId: string, times: string[]) {
  await recordExecutions(
    { db, tableName: names.Data },
    times.map((startedAt, i) => ({
      id: `e-${i}`,
      pipelineId,
      configurationId: 'c1',
      status: i % 2 === 0 ? 'failed' : 'succeeded',
      durationMs: 100,
      startedAt,
    })),
    90,
    null,
  );
}

describe('sampling a history for an evaluation set', () => {
  const store = () => makeEvaluationStore(db, { runs: names.Runs, data: names.Data });

  it('reads every execution when they all started at the same time', async () => {
    const at = new Date(Date.now() - 60_000).toISOString();
    await executionsAt(
      'same-time',
      Array.from({ length: 12 }, () => at),
    );

    const sampled = await store().sampleExecutions('same-time', WHOLE_HISTORY);

    expect(sampled.map((e) => e.id).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `e-${i}`).sort());
  });

  it('reads every execution once when the history spans a few milliseconds', async () => {
    const from = Date.now() - 60_000;
    await executionsAt(
      'few-ms',
      Array.from({ length: 12 }, (_, i) => new Date(from + (i % 3)).toISOString()),
    );

    const sampled = await store().sampleExecutions('few-ms', WHOLE_HISTORY);

    expect(sampled).toHaveLength(12);
    expect(new Set(sampled.map((e) => e.id)).size).toBe(12);
  });
});

describe("an effect arm's executions", () => {
  it('are none when the window ended before the retention floor its read starts at', async () => {
    await executionsAt('closed-arm', [new Date(Date.now() - 60_000).toISOString()]);
    const effects = makeEffectStore(db, names.Data);

    const read = await effects.executionsRecorded(
      'closed-arm',
      {
        configurationId: 'c1',
        recordedFrom: '2026-01-01T00:00:00.000Z',
        recordedBefore: '2026-01-02T00:00:00.000Z',
        after: '2026-03-01T00:00:00.000Z',
      },
      100,
    );

    expect(read).toEqual([]);
  });
});
