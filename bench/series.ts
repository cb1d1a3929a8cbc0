/**
 * The pipeline over time (issue "The pipeline over time"):
 * - recording with the series against recording without them (the store's same transactions
 *   without the series' updates, SERIES_RECORDING), alternated on one DynamoDB Local, each run a
 *   fresh pipeline: 2,000 executions and 1,000 signals in batches of 100, four at a time;
 * - through the local stack, a day of minute buckets and 30 days of hours for a pipeline with
 *   traffic in every minute and hour, against a poll's p50 (alternated), and the Queries each read
 *   makes (the same read through the store, counted).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { RETENTION_DAYS } from '../lambdas/core/lifecycle.ts';
import type { SeriesReadStats } from '../lambdas/core/ports/series.ts';
import type { Execution, Signal } from '../lambdas/core/schemas/records.ts';
import { makePipelineRepository } from '../lambdas/store/pipelines.ts';
import { makeSeriesReads } from '../lambdas/store/series.ts';
import { SERIES_RECORDING } from '../lambdas/store/series-writes.ts';
import { createTables, startDynamoDbLocal } from '../local/dynamodb.ts';
import { startLocalStack } from '../local/stack.ts';
import { pipelineWithGeneratedRun, stackApi, UNLIMITED } from './stack-api.ts';

export const RECORDING_MIN_RATIO = 0.9;
export const READ_MAX_RATIO = 3;

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

export interface SeriesRecordingFigures {
  runs: Array<{ series: boolean; recordsPerSecond: number }>;
  ratio: number;
}

async function inParallel(tasks: Array<() => Promise<unknown>>, width: number) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < tasks.length) await (tasks[next++] as () => Promise<unknown>)();
    }),
  );
}

export async function measureSeriesRecording(pairs = 5): Promise<SeriesRecordingFigures> {
  const local = await startDynamoDbLocal();
  try {
    const client = new DynamoDBClient({
      endpoint: local.endpoint,
      region: 'local',
      credentials: CREDENTIALS,
    });
    const names = await createTables(client, 'series-bench-');
    const repository = makePipelineRepository(DynamoDBDocumentClient.from(client), names.Data, names.Events);
    const runs: SeriesRecordingFigures['runs'] = [];
    const once = async (series: boolean, run: number) => {
      const pipelineId = `bench-${run}-${series ? 's' : 'n'}`;
      const now = Date.now();
      const executions: Execution[] = Array.from({ length: 2_000 }, (_, i) => ({
        id: `e${i}`,
        pipelineId,
        configurationId: i % 2 === 0 ? 'base' : 'candidate',
        status: i % 10 === 0 ? 'failed' : 'succeeded',
        durationMs: 100 + (i % 500),
        startedAt: new Date(now - (i % 120) * 1_000).toISOString(),
        slotResults: [
          { slotId: 'answer', status: 'succeeded', durationMs: 50, inputTokens: 300, outputTokens: 40 },
        ],
      }));
      const signals: Signal[] = Array.from({ length: 1_000 }, (_, i) => ({
        id: `s${i}`,
        pipelineId,
        kind: 'relevance',
        severity: 'info',
        message: `relevance ${i}`,
        value: (i % 7) / 7,
        occurredAt: new Date(now - (i % 120) * 1_000).toISOString(),
      }));
      SERIES_RECORDING.on = series;
      const started = performance.now();
      const tasks = [
        ...Array.from(
          { length: 20 },
          (_, b) => () =>
            repository.recordExecutions(
              executions.slice(b * 100, b * 100 + 100),
              RETENTION_DAYS.default,
              null,
            ),
        ),
        ...Array.from(
          { length: 10 },
          (_, b) => () =>
            repository.recordSignals(signals.slice(b * 100, b * 100 + 100), RETENTION_DAYS.default, null),
        ),
      ];
      await inParallel(tasks, 4);
      runs.push({ series, recordsPerSecond: 3_000 / ((performance.now() - started) / 1000) });
    };
    // A warm-up of each, not counted; then pairs in alternating order.
    await once(true, -1);
    await once(false, -1);
    runs.length = 0;
    for (let pair = 0; pair < pairs; pair++) {
      const order = pair % 2 === 0 ? [true, false] : [false, true];
      for (const series of order) await once(series, pair);
    }
    const rate = (series: boolean) =>
      median(runs.filter((r) => r.series === series).map((r) => r.recordsPerSecond));
    return { runs, ratio: rate(true) / rate(false) };
  } finally {
    SERIES_RECORDING.on = true;
    await local.stop();
  }
}

export function formatSeriesRecording(f: SeriesRecordingFigures, verdict: (ok: boolean) => string): string {
  return [
    ...f.runs.map(
      (r) => `${r.series ? 'with series   ' : 'without series'} ${r.recordsPerSecond.toFixed(0)} records/s`,
    ),
    `recording with the series ${f.ratio.toFixed(2)} × without (target ≥ ${RECORDING_MIN_RATIO} ×) ${verdict(f.ratio >= RECORDING_MIN_RATIO)}`,
  ].join('\n');
}

export interface SeriesReadFigures {
  pollP50Ms: number;
  /** The last 24 hours by the hour (24 buckets): what the read costs without the answer's size. */
  dayByHourP50Ms: number;
  dayOfMinutes: { firstMs: number; p50Ms: number; queries: number; itemsRead: number; buckets: number };
  monthOfHours: { firstMs: number; p50Ms: number; queries: number; itemsRead: number; buckets: number };
}

export async function measureSeriesReads(rounds = 30): Promise<SeriesReadFigures> {
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-bench-series-'));
  const stack = await startLocalStack({ port: 0, quiet: true, stateDir, limits: UNLIMITED });
  try {
    const team = stack.teams[0];
    if (!team) throw new Error('the local stack seeds two teams');
    const api = stackApi(stack.apiUrl, team.apiToken);
    const { pipeline, run } = await pipelineWithGeneratedRun(api, 'series bench');
    const now = Date.now();
    // Traffic in every minute of the last day (3 a minute) and every hour of the 30 days before.
    const times = [
      ...Array.from(
        { length: 1_440 * 3 },
        (_, i) => now - DAY + Math.floor(i / 3) * MINUTE + (i % 3) * 1_000,
      ),
      ...Array.from({ length: 720 }, (_, i) => now - 30 * DAY + i * HOUR + 5 * MINUTE),
    ];
    const batches = Array.from({ length: Math.ceil(times.length / 100) }, (_, b) =>
      times.slice(b * 100, b * 100 + 100),
    );
    await inParallel(
      batches.map(
        (batch, b) => () =>
          api('POST', `/pipelines/${pipeline.id}/executions`, {
            executions: batch.map((at, i) => ({
              status: (b + i) % 9 === 0 ? 'failed' : 'succeeded',
              durationMs: 80 + ((b * 100 + i) % 900),
              startedAt: new Date(at).toISOString(),
            })),
          }),
      ),
      4,
    );
    // Every period was written late (after it ended): its pack is made once those writes are done.
    await new Promise((resolve) => setTimeout(resolve, 62_000));
    const day = `/pipelines/${pipeline.id}/metrics?step=minute&from=${new Date(Date.now() - DAY + MINUTE).toISOString()}`;
    const month = `/pipelines/${pipeline.id}/metrics?step=hour&from=${new Date(Date.now() - 30 * DAY + HOUR).toISOString()}`;
    const poll = `/synthesis-runs/${run.id}`;
    const timed = async (route: string) => {
      const started = performance.now();
      await api('GET', route);
      return performance.now() - started;
    };
    const firstDay = await timed(day);
    const firstMonth = await timed(month);
    const dayByHour = `/pipelines/${pipeline.id}/metrics?step=hour`;
    const samples = {
      poll: [] as number[],
      day: [] as number[],
      month: [] as number[],
      hours: [] as number[],
    };
    for (let i = 0; i < rounds; i++) {
      samples.poll.push(await timed(poll));
      samples.day.push(await timed(day));
      samples.month.push(await timed(month));
      samples.hours.push(await timed(dayByHour));
    }
    const dayAnswer = await api('GET', day);
    const monthAnswer = await api('GET', month);
    // The same reads through the store, counted.
    const client = new DynamoDBClient({
      endpoint: stack.dynamodbEndpoint,
      region: 'local',
      credentials: CREDENTIALS,
    });
    const reads = makeSeriesReads({ db: DynamoDBDocumentClient.from(client), tableName: stack.tables.Data });
    const counted = async (step: 'minute' | 'hour', from: number, to: number) => {
      const stats: SeriesReadStats = { queries: 0, itemsRead: 0 };
      await reads.read(
        { pipelineId: pipeline.id, from, to, step, byConfiguration: false, retentionDays: 90 },
        stats,
      );
      return stats;
    };
    const dayRange = [Date.parse(dayAnswer.from), Date.parse(dayAnswer.to)] as const;
    const monthRange = [Date.parse(monthAnswer.from), Date.parse(monthAnswer.to)] as const;
    return {
      pollP50Ms: median(samples.poll),
      dayByHourP50Ms: median(samples.hours),
      dayOfMinutes: {
        firstMs: firstDay,
        p50Ms: median(samples.day),
        ...(await counted('minute', ...dayRange)),
        buckets: dayAnswer.series[0].buckets.length,
      },
      monthOfHours: {
        firstMs: firstMonth,
        p50Ms: median(samples.month),
        ...(await counted('hour', ...monthRange)),
        buckets: monthAnswer.series[0].buckets.length,
      },
    };
  } finally {
    await stack.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

export function formatSeriesReads(f: SeriesReadFigures, verdict: (ok: boolean) => string): string {
  const line = (name: string, r: SeriesReadFigures['dayOfMinutes']) => {
    const ratio = r.p50Ms / f.pollP50Ms;
    return (
      `${name}: ${r.buckets} buckets, p50 ${r.p50Ms.toFixed(1)} ms = ${ratio.toFixed(2)} × a poll (target ≤ ${READ_MAX_RATIO} ×) ${verdict(ratio <= READ_MAX_RATIO)}; ` +
      `${r.queries} Queries and ${r.itemsRead} items a read (the first, packing the ended periods: ${r.firstMs.toFixed(0)} ms)`
    );
  };
  return [
    `poll p50 ${f.pollP50Ms.toFixed(1)} ms; the last 24 hours by the hour (24 buckets) ${f.dayByHourP50Ms.toFixed(1)} ms`,
    line('a day of minutes', f.dayOfMinutes),
    line('30 days of hours', f.monthOfHours),
  ].join('\n');
}
