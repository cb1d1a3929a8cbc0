/**
 * A pipeline's series on DynamoDB Local (store/series.ts): records at known times give exact
 * buckets (counts, failures, tokens, score means) and percentiles within 2 % of the nearest-rank
 * value; a second read of ended periods reads their packs; a late record is counted at once; a
 * batch sent again is counted once; a batch spread over many buckets still fits its transactions.
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { RETENTION_DAYS } from '../../../lambdas/core/lifecycle.ts';
import type { PipelineRepository } from '../../../lambdas/core/ports/pipelines.ts';
import type { SeriesReadStats } from '../../../lambdas/core/ports/series.ts';
import type { Execution, Signal } from '../../../lambdas/core/schemas/records.ts';
import { makePipelineRepository } from '../../../lambdas/store/pipelines.ts';
import { makeSeriesReads } from '../../../lambdas/store/series.ts';
import {
  legacySeriesPartition,
  seriesIndexPartition,
  seriesPackPartition,
} from '../../../lambdas/store/series-keys.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { setUpApiEnvironment } from '../api/harness.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;

let db: DynamoDBDocumentClient;
let names: TableNames;
let pipelines: PipelineRepository;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  pipelines = makePipelineRepository(db, names.Data, names.Events);
});

/** Three hours ending two hours ago, on the hour: periods that have settled. */
const START = Math.floor(Date.now() / HOUR) * HOUR - 5 * HOUR;

function executionsOver(pipelineId: string, count: number): Execution[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `e${i}`,
    pipelineId,
    configurationId: i % 4 === 0 ? 'config-b' : 'config-a',
    status: i % 7 === 0 ? 'failed' : 'succeeded',
    // Durations spread over three orders of magnitude.
    durationMs: 20 + ((i * 7919) % 4000),
    startedAt: new Date(START + Math.floor((i * 3 * HOUR) / count)).toISOString(),
    slotResults: [
      { slotId: 'answer', status: 'succeeded', durationMs: 10, inputTokens: 100 + (i % 5), outputTokens: 10 },
    ],
  }));
}

/** A read of the three hours by the minute. */
const threeHoursOfMinutes = (pipelineId: string, byConfiguration: boolean) => ({
  pipelineId,
  from: START,
  to: START + 3 * HOUR,
  step: 'minute' as const,
  byConfiguration,
  retentionDays: 90,
});

function scoresOver(pipelineId: string, count: number): Signal[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `s${i}`,
    pipelineId,
    kind: 'relevance',
    severity: i % 10 === 0 ? 'warning' : 'info',
    message: `relevance ${i}`,
    value: (i % 9) / 8,
    occurredAt: new Date(START + Math.floor((i * 3 * HOUR) / count) + 30_000).toISOString(),
  }));
}

async function record(executions: Execution[], signals: Signal[]) {
  for (let i = 0; i < executions.length; i += 100)
    await pipelines.recordExecutions(executions.slice(i, i + 100), RETENTION_DAYS.default, null);
  for (let i = 0; i < signals.length; i += 100)
    await pipelines.recordSignals(signals.slice(i, i + 100), RETENTION_DAYS.default, null);
}

const nearestRank = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1] as number;
};

describe('series kept with the recording', () => {
  it('gives exact minute and hour buckets, and percentiles within 2 % of the nearest rank', async () => {
    const pipelineId = 'series-exact';
    const executions = executionsOver(pipelineId, 900);
    const signals = scoresOver(pipelineId, 300);
    await record(executions, signals);
    const reads = makeSeriesReads({ db, tableName: names.Data });
    const base = { pipelineId, from: START, to: START + 3 * HOUR, byConfiguration: true, retentionDays: 90 };

    const hours = await reads.read({ ...base, step: 'hour' });
    expect(hours.all).toHaveLength(3);
    for (const [h, bucket] of hours.all.entries()) {
      const inHour = executions.filter((e) => Math.floor((Date.parse(e.startedAt) - START) / HOUR) === h);
      const scores = signals.filter((s) => Math.floor((Date.parse(s.occurredAt) - START) / HOUR) === h);
      expect(bucket.at).toBe(new Date(START + h * HOUR).toISOString());
      expect(bucket.executions).toBe(inHour.length);
      expect(bucket.failed).toBe(inHour.filter((e) => e.status === 'failed').length);
      const durations = inHour.map((e) => e.durationMs);
      expect(bucket.durationMs.mean).toBeCloseTo(durations.reduce((a, b) => a + b, 0) / durations.length, 2);
      for (const [q, value] of [
        [0.5, bucket.durationMs.p50],
        [0.95, bucket.durationMs.p95],
        [0.99, bucket.durationMs.p99],
      ] as const) {
        const exact = nearestRank(durations, q);
        expect(Math.abs((value as number) - exact) / exact).toBeLessThanOrEqual(0.02);
      }
      expect(bucket.tokens.input).toBe(
        inHour.reduce((sum, e) => sum + (e.slotResults?.[0]?.inputTokens ?? 0), 0),
      );
      expect(bucket.signals.warning).toBe(scores.filter((s) => s.severity === 'warning').length);
      expect(bucket.scores.relevance?.count).toBe(scores.length);
      expect(bucket.scores.relevance?.mean).toBeCloseTo(
        scores.reduce((sum, s) => sum + (s.value ?? 0), 0) / scores.length,
        6,
      );
    }
    // Per configuration: the executions split, summing to the whole.
    const a = hours.byConfiguration.get('config-a') ?? [];
    const b = hours.byConfiguration.get('config-b') ?? [];
    expect(a.map((x, i) => x.executions + (b[i]?.executions ?? 0))).toEqual(
      hours.all.map((x) => x.executions),
    );
    expect(b[0]?.executions).toBe(
      executions.filter((e, i) => i % 4 === 0 && Date.parse(e.startedAt) < START + HOUR).length,
    );

    // By the minute: 180 buckets, each exact.
    const minutes = await reads.read({ ...base, step: 'minute', byConfiguration: false });
    expect(minutes.all).toHaveLength(180);
    const expected = new Map<string, number>();
    for (const e of executions) {
      const at = new Date(Math.floor(Date.parse(e.startedAt) / MINUTE) * MINUTE).toISOString();
      expected.set(at, (expected.get(at) ?? 0) + 1);
    }
    for (const bucket of minutes.all) expect(bucket.executions).toBe(expected.get(bucket.at) ?? 0);
  });

  it('reads the packs of ended periods the second time: one Query of their index, one read unit', async () => {
    const pipelineId = 'series-packs';
    await record(executionsOver(pipelineId, 600), []);
    // Read as two minutes from now: the late records' writes (into periods long ended) are done then.
    const reads = makeSeriesReads({ db, tableName: names.Data }, () => Date.now() + 2 * MINUTE);
    const request = threeHoursOfMinutes(pipelineId, false);
    const first: SeriesReadStats = { queries: 0, itemsRead: 0 };
    const before = await reads.read(request, first);
    const second: SeriesReadStats = { queries: 0, itemsRead: 0 };
    const after = await reads.read(request, second);
    expect(after.all).toEqual(before.all);
    expect(second.queries).toBe(1);
    // Three hours: an index entry each (its late mark on it), a few bytes, not the packs of 60
    // buckets that the first read fetched (DynamoDB bills a Query by the items' whole size).
    expect(second.itemsRead).toBe(3);
    expect(second.readUnits).toBeLessThanOrEqual(1);
    expect(first.itemsRead).toBeGreaterThan(100);
    expect(first.readUnits).toBeGreaterThan(3);
    // Per configuration from the same packs: the configurations add up to the whole, minute by minute.
    const grouped = await reads.read({ ...request, byConfiguration: true });
    const a = grouped.byConfiguration.get('config-a') ?? [];
    const b = grouped.byConfiguration.get('config-b') ?? [];
    expect(a.map((bucket, i) => bucket.executions + (b[i]?.executions ?? 0))).toEqual(
      after.all.map((bucket) => bucket.executions),
    );
    expect(b.reduce((sum, bucket) => sum + bucket.executions, 0)).toBe(150);
  });

  it('counts a record sent late into a packed period at once', async () => {
    const pipelineId = 'series-late';
    const executions = executionsOver(pipelineId, 300);
    await record(executions, []);
    const realNow = Date.now.bind(Date);
    // Every clock (the writer's and the reader's) two minutes on: the periods are packed by the first read.
    const ahead = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 2 * MINUTE);
    try {
      const reads = makeSeriesReads({ db, tableName: names.Data });
      const request = threeHoursOfMinutes(pipelineId, false);
      const packed = await reads.read(request);
      const fromPacks: SeriesReadStats = { queries: 0, itemsRead: 0 };
      await reads.read(request, fromPacks);
      expect(fromPacks.queries).toBe(1);
      // A minute later, a record of the first minute arrives.
      ahead.mockImplementation(() => realNow() + 3 * MINUTE);
      await record(
        [
          {
            ...(executions[0] as Execution),
            id: 'late-1',
            startedAt: new Date(START + 10_000).toISOString(),
          },
        ],
        [],
      );
      const stats: SeriesReadStats = { queries: 0, itemsRead: 0 };
      const again = await reads.read(request, stats);
      expect(again.all[0]?.executions).toBe((packed.all[0]?.executions ?? 0) + 1);
      expect(stats.queries).toBeGreaterThan(1);
      const window = await reads.window(pipelineId, START, START + MINUTE);
      expect(window.executions).toBe(again.all[0]?.executions);
    } finally {
      ahead.mockRestore();
    }
  });

  it('reads a period from its counters again when its pack is gone before its index entry', async () => {
    const pipelineId = 'series-gone';
    await record(executionsOver(pipelineId, 300), []);
    const clock = () => Date.now() + 2 * MINUTE;
    const request = threeHoursOfMinutes(pipelineId, true);
    const before = await makeSeriesReads({ db, tableName: names.Data }, clock).read(request);
    // A pack expires with the default window and its index entry in any order after it: the first
    // hour's packs are gone, and another environment (no packs kept) reads.
    const key = (sk: string) => ({ pk: seriesPackPartition(pipelineId, 'minute'), sk });
    const first = new Date(START).toISOString();
    for (const sk of [`${first}#A`, `${first}#C#config-b`])
      await db.send(new DeleteCommand({ TableName: names.Data, Key: key(sk) }));
    vi.resetModules();
    const elsewhere = await import('../../../lambdas/store/series.ts');
    const after = await elsewhere.makeSeriesReads({ db, tableName: names.Data }, clock).read(request);
    expect(after.all).toEqual(before.all);
    expect(after.byConfiguration.get('config-b')).toEqual(before.byConfiguration.get('config-b'));
    expect(after.all.slice(0, 60).reduce((sum, bucket) => sum + bucket.executions, 0)).toBe(100);
    // And packed again.
    const { Item } = await db.send(new GetCommand({ TableName: names.Data, Key: key(`${first}#A`) }));
    expect(Item?.b).toEqual(expect.any(String));
  });

  it('counts the buckets kept in the layout before (a partition a shard) once their period is packed', async () => {
    const pipelineId = 'series-legacy';
    await record(executionsOver(pipelineId, 120), []);
    // What the version before wrote for the same first minute: two shards' items, in their own
    // partitions, each execution counted on the whole pipeline's item and on its configuration's.
    const minute = new Date(START).toISOString();
    for (const shard of [1, 3]) {
      for (const grain of ['minute', 'hour'] as const) {
        for (const sk of [`${minute}#A`, `${minute}#C#config-a`]) {
          await db.send(
            new PutCommand({
              TableName: names.Data,
              Item: { pk: legacySeriesPartition(pipelineId, grain, shard), sk, n: 2, f: 1, ds: 300, d300: 2 },
            }),
          );
        }
      }
    }
    const reads = makeSeriesReads({ db, tableName: names.Data }, () => Date.now() + 2 * MINUTE);
    const request = { pipelineId, from: START, to: START + HOUR, byConfiguration: false, retentionDays: 90 };
    for (const step of ['minute', 'hour'] as const) {
      const recorded = executionsOver(pipelineId, 120).filter(
        (e) => Date.parse(e.startedAt) < START + (step === 'minute' ? MINUTE : HOUR),
      );
      const { all } = await reads.read({ ...request, step });
      expect(all[0]?.executions).toBe(recorded.length + 4);
      expect(all[0]?.failed).toBe(recorded.filter((e) => e.status === 'failed').length + 2);
      // Packed with them: the second read (from the pack) says the same.
      const again = await reads.read({ ...request, step });
      expect(again.all[0]?.executions).toBe(recorded.length + 4);
    }
  });

  it('writes nothing for a pipeline without records (a made-up id costs no writes)', async () => {
    const reads = makeSeriesReads({ db, tableName: names.Data }, () => Date.now() + 2 * MINUTE);
    const { all } = await reads.read({
      pipelineId: 'series-none',
      from: START,
      to: START + 3 * HOUR,
      step: 'minute',
      byConfiguration: true,
      retentionDays: 90,
    });
    expect(all.every((bucket) => bucket.executions === 0)).toBe(true);
    for (const grain of ['minute', 'hour'] as const) {
      const { Items = [] } = await db.send(
        new QueryCommand({
          TableName: names.Data,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': seriesPackPartition('series-none', grain) },
        }),
      );
      expect(Items).toEqual([]);
      const index = await db.send(
        new QueryCommand({
          TableName: names.Data,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': seriesIndexPartition('series-none', grain) },
        }),
      );
      expect(index.Items).toEqual([]);
    }
  });

  it('counts a batch sent again once, and a batch over 100 buckets exactly', async () => {
    const pipelineId = 'series-retry';
    const spread: Execution[] = Array.from({ length: 100 }, (_, i) => ({
      id: `x${i}`,
      pipelineId,
      configurationId: i % 2 === 0 ? 'config-a' : 'config-b',
      status: 'succeeded',
      durationMs: 100,
      // Each in its own minute and, every 60, its own hour: up to 400 counters for one batch.
      startedAt: new Date(START + i * 61_000).toISOString(),
    }));
    await pipelines.recordExecutions(spread, RETENTION_DAYS.default, null);
    await expect(pipelines.recordExecutions(spread, RETENTION_DAYS.default, null)).rejects.toThrow();
    const reads = makeSeriesReads({ db, tableName: names.Data });
    const { all } = await reads.read({
      pipelineId,
      from: START,
      to: START + 3 * HOUR,
      step: 'minute',
      byConfiguration: false,
      retentionDays: 90,
    });
    expect(all.reduce((sum, b) => sum + b.executions, 0)).toBe(100);
    expect(all.filter((b) => b.executions > 1)).toEqual([]);
  });
});
