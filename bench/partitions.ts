/**
 * The partition limit: the local stack on a DynamoDB Local behind a tallying proxy (bench/write-tally.ts,
 * reached as DYNAMODB_ENDPOINT would be) while executions and signals are recorded during a rollout;
 * the hottest partition key's write units per record, the recording rate, and the rollout's effect.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DescribeTableCommand, DynamoDBClient, type KeySchemaElement } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { nanoid } from 'nanoid';
import { type CountedRollout, recordExecutions } from '../lambdas/store/records.ts';
import { startDynamoDbLocal } from '../local/dynamodb.ts';
import { startEarly } from '../local/early.ts';
import { type LocalStack, startLocalStack } from '../local/stack.ts';
import { pipelineWithGeneratedRun, type StackApi, stackApi, UNLIMITED } from './stack-api.ts';
import { startWriteTally, type TableKeys } from './write-tally.ts';

const EXECUTIONS = 3_000;
const SIGNALS = 1_000;
/** About 1 KB an execution stored: its fields plus an input of this many characters. */
const INPUT_CHARACTERS = 800;

export interface PartitionFigures {
  records: number;
  hottest: { key: string; units: number };
  /** The hottest key of the records (all but the pipeline's own partition), which grows with them. */
  hottestRecords: { key: string; units: number };
  /** The pipeline's own partition: the guardrail's kept effect, written per judgement (time, not records). */
  pipelinePartition: { key: string; units: number };
  /** The next hottest keys, for the table. */
  top: Array<{ key: string; units: number }>;
  /** The hottest key of each kind (its shard suffix and the pipeline's id left out), hottest first. */
  kinds: Array<{ kind: string; key: string; units: number }>;
  recordsPerSecond: number;
  effectCounted: { base: number; applied: number };
  /** Executions per arm when the effect's latency was measured, its p50 and slowest against a poll's p50. */
  effectAt: { perArm: number; effectP50Ms: number; effectMaxMs: number; pollP50Ms: number; counted: number };
  /** How the executions past the first 3,000 were written, and how long that took. */
  straight: { executions: number; seconds: number };
}

const p50 = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

/** `ids`: named `e<n>`, for signals to cite (else the server names them). */
const executionBatch = (
  arms: [string, string],
  from: number,
  count: number,
  input: boolean,
  ids = false,
) => ({
  executions: Array.from({ length: count }, (_, i) => ({
    ...(ids ? { id: `e${from + i}` } : {}),
    configurationId: arms[(from + i) % 2],
    status: (from + i) % 10 === 0 ? 'failed' : 'succeeded',
    durationMs: 100 + ((from + i) % 50),
    slotResults: [{ slotId: 'retrieve', status: 'succeeded', durationMs: 50 }],
    ...(input ? { input: { question: `q${from + i} ${'x'.repeat(INPUT_CHARACTERS)}` } } : {}),
  })),
});

/** 100 signals; `cited`: relevance scores citing executions `e<from>`… (a guarded signal), else timeouts. */
const signalBatch = (from: number, cited = false) => ({
  signals: Array.from({ length: 100 }, (_, i) =>
    cited
      ? {
          kind: 'relevance',
          severity: 'info',
          message: `Relevance of answer ${from + i}`,
          executionId: `e${from + i}`,
          value: ((from + i) % 7) / 7,
        }
      : {
          kind: 'timeout',
          severity: 'warning',
          message: `Retrieval timed out (${from + i})`,
          slotId: 'retrieve',
        },
  ),
});

/** Runs `jobs` with `callers` at once. */
async function inParallel(jobs: Array<() => Promise<unknown>>, callers: number) {
  let next = 0;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (next < jobs.length) await (jobs[next++] as () => Promise<unknown>)();
    }),
  );
}

async function tableKeys(endpoint: string, tables: Record<string, string>) {
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const keys = new Map<string, TableKeys>();
  for (const name of Object.values(tables)) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
    const hash = (schema: KeySchemaElement[] | undefined) =>
      schema?.find((key) => key.KeyType === 'HASH')?.AttributeName ?? '';
    const range = (schema: KeySchemaElement[] | undefined) =>
      schema?.find((key) => key.KeyType === 'RANGE')?.AttributeName;
    keys.set(name, {
      pk: hash(Table?.KeySchema),
      indexes: (Table?.GlobalSecondaryIndexes ?? []).map((index) => ({
        name: index.IndexName ?? '',
        pk: hash(index.KeySchema),
        ...(range(index.KeySchema) ? { sk: range(index.KeySchema) as string } : {}),
      })),
    });
  }
  client.destroy();
  return keys;
}

/** The effect's p50 against a poll's, each measured afresh (a new execution before each call). */
async function effectLatency(api: StackApi, runId: string, pipelineId: string, configurationId: string) {
  const effects: number[] = [];
  const polls: number[] = [];
  const timed = async (route: string) => {
    const start = performance.now();
    await api('GET', route);
    return performance.now() - start;
  };
  for (let i = 0; i < 25; i++) {
    polls.push(await timed(`/synthesis-runs/${runId}`));
    await api('POST', `/pipelines/${pipelineId}/executions`, {
      executions: [{ configurationId, status: 'succeeded', durationMs: 5 }],
    });
    effects.push(await timed(`/synthesis-runs/${runId}/effect`));
  }
  const counted = (await api('GET', `/synthesis-runs/${runId}/effect`)).arms.base.executions as number;
  return {
    effectP50Ms: p50(effects.slice(5)),
    effectMaxMs: Math.max(...effects.slice(5)),
    pollP50Ms: p50(polls.slice(5)),
    counted,
  };
}

/**
 * Executions written straight to the data table through the store's own recording (records.ts
 * recordExecutions: the sharded keys, id markers and the rollout's counts in the same
 * transactions), 8 writers at once: 200,000 through the local stack's HTTP API would take
 * longer than the rest of the bench. Small executions, the arms alternating.
 */
async function writeStraight(
  endpoint: string,
  tableName: string,
  pipelineId: string,
  rollout: CountedRollout,
  count: number,
) {
  const db = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  );
  const arms = [rollout.baseConfigurationId, rollout.candidateConfigurationId];
  // 99 a batch: with the counts' update, one transaction of records (a full 100 takes two).
  const size = 99;
  const start = performance.now();
  await inParallel(
    Array.from({ length: Math.ceil(count / size) }, (_, b) => () => {
      const startedAt = new Date().toISOString();
      const executions = Array.from({ length: Math.min(size, count - b * size) }, (_, i) => ({
        id: nanoid(),
        pipelineId,
        configurationId: arms[(b * size + i) % 2] as string,
        status: (b * size + i) % 10 === 0 ? ('failed' as const) : ('succeeded' as const),
        durationMs: 100 + ((b * size + i) % 50),
        startedAt,
        slotResults: [{ slotId: 'retrieve', status: 'succeeded' as const, durationMs: 50 }],
      }));
      return recordExecutions({ db, tableName }, executions, 90, rollout);
    }),
    8,
  );
  db.destroy();
  return { executions: count, seconds: (performance.now() - start) / 1000 };
}

/**
 * A pipeline with a run approved into a 50 % rollout, then 3,000 executions of ~1 KB and 1,000
 * signals recorded through the API by 4 callers, interleaved as a busy pipeline sends them (a
 * batch of signals after every three of executions); `onStart` just before the first.
 */
export async function recordDuringRollout(
  api: StackApi,
  onStart: () => void = () => undefined,
  guardrails?: unknown[],
) {
  const { pipeline, run } = await pipelineWithGeneratedRun(api, 'partitions');
  await api('POST', `/synthesis-runs/${run.id}/approve`, {
    rollout: { percent: 50, minExecutions: 100_000, ...(guardrails ? { guardrails } : {}) },
  });
  const arms: [string, string] = [pipeline.activeConfigurationId, run.proposedConfigurationId];
  const record = (route: string, body: unknown) => () =>
    api('POST', `/pipelines/${pipeline.id}/${route}`, body);
  const ordered = Array.from({ length: EXECUTIONS / 100 }, (_, b) => [
    record('executions', executionBatch(arms, b * 100, 100, true, guardrails !== undefined)),
    // Guarded: scores citing the executions of two batches before (most recorded, some not yet).
    ...(b % 3 === 2
      ? [record('signals', guardrails ? signalBatch((b - 2) * 100, true) : signalBatch((b - 2) * 33))]
      : []),
  ]).flat();
  onStart();
  const start = performance.now();
  await inParallel(ordered, 4);
  const recordsPerSecond = (EXECUTIONS + SIGNALS) / ((performance.now() - start) / 1000);
  return { pipeline, run, arms, recordsPerSecond };
}

/**
 * A local stack on DynamoDB Local behind the write tally (every write unit counted by key), the
 * first seeded team's API, all stopped once `use` is done.
 */
async function onTalliedStack<T>(
  stateDirPrefix: string,
  use: (bench: {
    stack: LocalStack;
    tally: Awaited<ReturnType<typeof startWriteTally>>;
    dynamodb: Awaited<ReturnType<typeof startDynamoDbLocal>>;
    api: ReturnType<typeof stackApi>;
  }) => Promise<T>,
): Promise<T> {
  const dynamodb = await startDynamoDbLocal();
  let keys = new Map<string, TableKeys>();
  const tally = await startWriteTally(dynamodb.endpoint, () => keys);
  const stateDir = await mkdtemp(path.join(tmpdir(), stateDirPrefix));
  const stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir,
    limits: UNLIMITED,
    early: await startEarly(tally.url),
  });
  try {
    keys = await tableKeys(dynamodb.endpoint, stack.tables);
    const team = stack.teams[0];
    if (!team) throw new Error('the local stack seeds two teams');
    return await use({ stack, tally, dynamodb, api: stackApi(stack.apiUrl, team.apiToken) });
  } finally {
    await stack.stop();
    await tally.stop();
    await dynamodb.stop();
  }
}

export async function measurePartitions(perArm = 100_000): Promise<PartitionFigures> {
  return onTalliedStack('pipeline-synthesis-bench-partitions-', async ({ stack, tally, dynamodb, api }) => {
    const { pipeline, run, arms, recordsPerSecond } = await recordDuringRollout(api, () => tally.reset());
    const own = `local-Data PIPELINE#${pipeline.id}`;
    const ranked = [...tally.units.entries()]
      .map(([key, units]) => ({ key, units }))
      .sort((a, b) => b.units - a.units);
    const effect = await api('GET', `/synthesis-runs/${run.id}/effect`);
    const effectCounted = { base: effect.arms.base.executions, applied: effect.arms.applied.executions };
    // Up to `perArm` an arm, written straight to the table, then the effect's latency against a poll's.
    const rollout = (await api('GET', `/pipelines/${pipeline.id}/rollout`)) as CountedRollout;
    const straight = await writeStraight(
      dynamodb.endpoint,
      stack.tables.Data,
      pipeline.id,
      rollout,
      Math.max(0, perArm * 2 - EXECUTIONS),
    );
    const latency = await effectLatency(api, run.id, pipeline.id, arms[0]);
    return {
      records: EXECUTIONS + SIGNALS,
      hottest: ranked[0] ?? { key: 'none', units: 0 },
      hottestRecords: ranked.find((row) => row.key !== own) ?? { key: 'none', units: 0 },
      pipelinePartition: ranked.find((row) => row.key === own) ?? { key: own, units: 0 },
      top: ranked.slice(0, 6),
      kinds: hottestOfEachKind(ranked, pipeline.id),
      recordsPerSecond,
      effectCounted,
      effectAt: { perArm: Math.max(perArm, EXECUTIONS / 2), ...latency },
      straight,
    };
  });
}

/** The hottest key's units per record during a rollout guarding failure_rate, duration_ms and a signal. */
export interface GuardedPartitionFigures {
  records: number;
  hottestRecords: { key: string; units: number };
  kinds: Array<{ kind: string; key: string; units: number }>;
  recordsPerSecond: number;
  counted: { base: number; applied: number; scores: number };
}

/**
 * The same recording during a rollout guarding three metrics (failure_rate, duration_ms and a
 * relevance score, every signal citing an execution with a value), on a stack of its own.
 */
export async function measureGuardedPartitions(guardrails: unknown[]): Promise<GuardedPartitionFigures> {
  return onTalliedStack('pipeline-synthesis-bench-partitions-guarded-', async ({ tally, api }) => {
    const { pipeline, run, recordsPerSecond } = await recordDuringRollout(
      api,
      () => tally.reset(),
      guardrails,
    );
    const own = `local-Data PIPELINE#${pipeline.id}`;
    const ranked = [...tally.units.entries()]
      .map(([key, units]) => ({ key, units }))
      .sort((a, b) => b.units - a.units);
    const effect = await api('GET', `/synthesis-runs/${run.id}/effect`);
    // biome-ignore lint/suspicious/noExplicitAny: the effect's metrics, read by name
    const score = effect.metrics?.find((metric: any) => metric.metric === 'signal');
    return {
      records: EXECUTIONS + SIGNALS,
      hottestRecords: ranked.find((row) => row.key !== own) ?? { key: 'none', units: 0 },
      kinds: hottestOfEachKind(ranked, pipeline.id).slice(0, 6),
      recordsPerSecond,
      counted: {
        base: effect.arms.base.executions,
        applied: effect.arms.applied.executions,
        scores: (score?.base.n ?? 0) + (score?.applied.n ?? 0),
      },
    };
  });
}

export function formatGuardedPartitions(f: GuardedPartitionFigures): string {
  const ok = (pass: boolean) => (pass ? 'ok' : 'MISSED');
  const perRecord = f.hottestRecords.units / f.records;
  const all = EXECUTIONS / 2;
  return [
    `during a rollout guarding failure_rate, duration_ms and signal relevance (every signal a score citing an execution): the records' hottest key ${f.hottestRecords.key} took ${f.hottestRecords.units}, ${perRecord.toFixed(3)} a record (target ≤ ${UNITS_PER_RECORD_MAX}) ${ok(perRecord <= UNITS_PER_RECORD_MAX)}; ${f.recordsPerSecond.toFixed(0)} records a second`,
    ...f.kinds.map(
      (row) => `    ${row.units} units, ${(row.units / f.records).toFixed(3)} a record  ${row.kind}`,
    ),
    `  counted: base ${f.counted.base}, candidate ${f.counted.applied} (each ${all}), ${f.counted.scores} scores (${SIGNALS}) ${ok(f.counted.base === all && f.counted.applied === all && f.counted.scores === SIGNALS)}`,
  ].join('\n');
}

/** The hottest key of each kind of key (`PIPELINE#<id>#EXECUTIONS#<nn>`, …), hottest first. */
function hottestOfEachKind(ranked: Array<{ key: string; units: number }>, pipelineId: string) {
  const kinds = new Map<string, { kind: string; key: string; units: number }>();
  for (const row of ranked) {
    const kind = row.key.replaceAll(pipelineId, '<id>').replace(/#\d\d$/, '#<nn>');
    if (!kinds.has(kind)) kinds.set(kind, { kind, ...row });
  }
  return [...kinds.values()];
}

/** Hottest key's units per record at most this: 5,000 records a second stay under a key's 1,000 units. */
const UNITS_PER_RECORD_MAX = 0.2;

export function formatPartitions(f: PartitionFigures): string {
  const ok = (pass: boolean) => (pass ? 'ok' : 'MISSED');
  const perRecord = f.hottestRecords.units / f.records;
  const recordingSeconds = f.records / f.recordsPerSecond;
  const ownPerSecond = f.pipelinePartition.units / recordingSeconds;
  const effectRatio = f.effectAt.effectP50Ms / f.effectAt.pollP50Ms;
  const all = EXECUTIONS / 2;
  return [
    `${f.records.toLocaleString('en-US')} records (${EXECUTIONS.toLocaleString('en-US')} executions of ~1 KB, ${SIGNALS.toLocaleString('en-US')} signals) during a rollout: hottest key ${f.hottest.key} took ${f.hottest.units} write units (${(f.hottest.units / f.records).toFixed(3)} a record at this rate)`,
    `  the records' hottest key ${f.hottestRecords.key} took ${f.hottestRecords.units}, ${perRecord.toFixed(3)} a record (target ≤ ${UNITS_PER_RECORD_MAX}) ${ok(perRecord <= UNITS_PER_RECORD_MAX)}`,
    `  the pipeline's own partition (the guardrail's kept effect, written once a judgement, about every 5 s, whatever the rate): ${f.pipelinePartition.units} units in ${recordingSeconds.toFixed(0)} s, ${ownPerSecond.toFixed(0)} a second (a key takes 1,000) ${ok(ownPerSecond <= 1000)}`,
    `  at 5,000 records a second: ${(perRecord * 5000).toFixed(0)} units a second on that key (a key takes 1,000), so one pipeline is throttled at about ${(1000 / perRecord).toFixed(0)} records a second`,
    ...f.top.map((row) => `    ${row.units} units  ${row.key}`),
    '  the hottest key of each kind (units, a record):',
    ...f.kinds.map(
      (row) => `    ${row.units} units, ${(row.units / f.records).toFixed(3)} a record  ${row.kind}`,
    ),
    `recording through the local stack: ${f.recordsPerSecond.toFixed(0)} records a second (4 callers; compare with main's run of this section, docs/scaling.md)`,
    `effect with ${all.toLocaleString('en-US')} executions an arm counts base ${f.effectCounted.base}, applied ${f.effectCounted.applied} (target: all ${all}) ${ok(f.effectCounted.base === all && f.effectCounted.applied === all)}`,
    `  then ${f.straight.executions.toLocaleString('en-US')} more written straight to the table through the store's recording (keys, markers, counts; not the HTTP API) in ${f.straight.seconds.toFixed(0)} s`,
    `effect measured afresh at ${f.effectAt.perArm.toLocaleString('en-US')} executions an arm (a new execution before each; it counted ${f.effectAt.counted.toLocaleString('en-US')} base): p50 ${f.effectAt.effectP50Ms.toFixed(1)} ms vs a poll's ${f.effectAt.pollP50Ms.toFixed(1)} ms: ${effectRatio.toFixed(2)}× (target ≤ 5×) ${ok(effectRatio <= 5)}; slowest ${f.effectAt.effectMaxMs.toFixed(0)} ms (${(f.effectAt.effectMaxMs / f.effectAt.pollP50Ms).toFixed(1)}×: the sample read again, every 10 s or 1 % growth)`,
  ].join('\n');
}
