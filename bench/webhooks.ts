/**
 * Events and webhooks through the local stack (DynamoDB Local's stream → the event deliverer → the
 * local queue → the webhook deliverer → a receiver on 127.0.0.1):
 *
 *   - latency: POST …/synthesize 100 times, one after the other; for each `synthesis_run.generated`
 *     event, the time from its commit (the event's timestamp, stamped in the transaction that moves
 *     the run) to its arrival at the receiver. p50 and p99; target p50 ≤ 1 s.
 *   - fan-out: 1,000 events written to the outbox (eventPut, as a change's transaction does) to a
 *     team with 5 webhooks, one of them down (nothing listens): all 4,000 good deliveries arrive,
 *     none lost, each once; the down one's first attempts are recorded `pending` and tried again
 *     on schedule (5 s later).
 */

import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { nanoid } from 'nanoid';
import { newEvent } from '../lambdas/core/events.ts';
import {
  CARRIED_EVENT_ATTRIBUTE,
  carriedEventValue,
  carryingEvent,
  eventItem,
  eventPut,
} from '../lambdas/store/events.ts';
import { approvalRulesKey, webhookDeliveriesPartition } from '../lambdas/store/keys.ts';
import { RUNS_TABLE } from '../lambdas/store/table-definitions.ts';
import { teamSettingsWrites } from '../lambdas/store/team-settings.ts';
import { createDocumentClient } from '../lambdas/wiring/aws.ts';
import { createTable } from '../local/dynamodb.ts';
import { startLocalStack } from '../local/stack.ts';
import { UNLIMITED as UNTHROTTLED } from './stack-api.ts';

/** The latency part starts 100 runs in a row on one team. */
const UNLIMITED = { ...UNTHROTTLED, synthesisRunsPerTeamPerHour: 1_000_000 };

export interface WebhookFigures {
  /** p50 of a run's status move as reject wrote it before events (no runs stream), and now, carrying its event. */
  changeAloneP50Ms: number;
  changeWithEventP50Ms: number;
  /** POST /synthesis-runs/{id}/reject through the local gateway (with its event), p50. */
  rejectP50Ms: number;
  /** PUT …/approval-rules through the gateway (its Put now carries its event), p50. */
  approvalRulesP50Ms: number;
  /** p50 of the approval rules' Put as it was, and as it is now, carrying its event. */
  rulesAloneP50Ms: number;
  rulesWithEventP50Ms: number;
  /** PATCH /teams/{teamId}/settings through the gateway (a transaction before events, one item more now), p50. */
  teamSettingsP50Ms: number;
  /** p50 of the team settings' transaction as it was, and with its event item. */
  settingsTxAloneP50Ms: number;
  settingsTxWithEventP50Ms: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencySamples: number;
  fanOutEvents: number;
  goodDeliveries: number;
  duplicateDeliveries: number;
  fanOutSeconds: number;
  downPending: number;
  downRetried: number;
  /**
   * The heap each deliverer keeps through the fan-out, MB: sampled every 200 ms (its largest
   * environment), the lowest sample of each quarter of the fan-out (just after a collection).
   */
  delivererHeapMb: Array<{
    entry: string;
    quartersMb: number[];
    maxMb: number;
    samples: number;
  }>;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** The outbox reader and the webhook deliverer: whose memory must stay flat through the fan-out. */
const DELIVERERS = ['deliver-events', 'deliver-webhooks'];

/**
 * What each running environment of a function holds: the resident memory of a child process (as
 * Lambda's memory size bounds it; Linux's /proc), or the V8 heap of a worker thread.
 */
async function environmentMemoryBytes(fn: {
  kind: string;
  environmentPids(): number[];
  environmentHeapBytes(): Promise<number[]>;
}): Promise<number[]> {
  if (fn.kind !== 'process') return fn.environmentHeapBytes();
  const resident = await Promise.all(
    fn.environmentPids().map(async (pid) => {
      const statm = await readFile(`/proc/${pid}/statm`, 'utf8').catch(() => '');
      const pages = Number(statm.split(' ')[1]);
      return Number.isFinite(pages) && pages > 0 ? pages * 4096 : null;
    }),
  );
  return resident.filter((bytes): bytes is number => bytes !== null);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean | Promise<boolean>, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await condition()) && Date.now() < deadline) await sleep(20);
}

export async function measureWebhooks(options: { latencyEvents?: number; fanOutEvents?: number } = {}) {
  const latencyEvents = options.latencyEvents ?? 100;
  const fanOutEvents = options.fanOutEvents ?? 1000;
  const arrivals = new Map<string, { at: number; headers: IncomingHttpHeaders; path: string }[]>();
  const receiver = createServer((request, response) => {
    const at = Date.now();
    request.resume();
    request.on('end', () => {
      const id = String(request.headers['webhook-id']);
      arrivals.set(id, [
        ...(arrivals.get(id) ?? []),
        { at, headers: request.headers, path: request.url ?? '' },
      ]);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-bench-webhooks-'));
  // Worker-thread environments (the default on Lambda's Node, as `npm run bench` runs), so that the
  // deliverers' V8 heaps can be read during the fan-out; a child process's resident size only grows.
  const stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir,
    limits: UNLIMITED,
    log: () => undefined,
  });
  try {
    const [team, other] = stack.teams;
    if (!team || !other) throw new Error('two seeded teams expected');
    const api = async (token: string, method: string, route: string, body?: unknown) => {
      const response = await fetch(`${stack.apiUrl}${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      // biome-ignore lint/suspicious/noExplicitAny: bench reads a few fields
      return (await response.json()) as any;
    };

    // Latency: change → arrival.
    await api(team.apiToken, 'POST', '/webhooks', {
      url: `${base}/latency`,
      eventTypes: ['synthesis_run.generated'],
    });
    const latencies: number[] = [];
    const runIds: string[] = [];
    const pipelineId = team.pipelineIds[0] ?? '';
    for (let index = 0; index < latencyEvents; index++) {
      const run = await api(team.apiToken, 'POST', `/pipelines/${pipelineId}/synthesize`, {});
      runIds.push(run.id);
      const eventId = `evt_${run.id}_synthesis_run_generated`;
      await until(() => arrivals.has(eventId), 30_000);
      const arrival = arrivals.get(eventId)?.[0];
      if (!arrival) continue;
      const audit = await api(
        team.apiToken,
        'GET',
        `/audit-events?pipelineId=${pipelineId}&type=synthesis_run.generated&limit=1`,
      );
      const committed = Date.parse(audit.items?.[0]?.timestamp ?? '');
      if (Number.isFinite(committed)) latencies.push(arrival.at - committed);
    }

    // The whole operation that now writes one more item: reject, through the gateway.
    const rejects: number[] = [];
    for (const runId of runIds) {
      const started = performance.now();
      await api(team.apiToken, 'POST', `/synthesis-runs/${runId}/reject`, { reason: 'bench' });
      rejects.push(performance.now() - started);
    }

    // Fan-out: 1,000 events to 5 webhooks of the other team, one down.
    const webhookIds: string[] = [];
    for (let index = 0; index < 4; index++) {
      webhookIds.push(
        (
          await api(other.apiToken, 'POST', '/webhooks', {
            url: `${base}/good/${index}`,
            eventTypes: ['pipeline.deleted'],
          })
        ).id,
      );
    }
    const outbox = await measureOutboxCost(stack.dynamodbEndpoint, stack.tables.Runs);

    // The other operation whose one write became a transaction with its event: the approval rules
    // (changed by a person: a session's access token, never an API token).
    const login = await fetch(`${stack.apiUrl}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: team.email, password: team.password, delivery: 'body' }),
    });
    const sessionToken = ((await login.json()) as { accessToken: string }).accessToken;
    const ruleWrites: number[] = [];
    for (let index = 0; index < latencyEvents; index++) {
      const started = performance.now();
      await api(sessionToken, 'PUT', `/pipelines/${pipelineId}/approval-rules`, {
        requireEvaluation: index % 2 === 0,
        maxRegressions: 0,
        minEvaluatedCases: 20,
        forbidSelfApproval: true,
        allowApiTokens: true,
      });
      ruleWrites.push(performance.now() - started);
    }
    // An operation that was a transaction already: the event is one more item in it.
    const settingsWrites: number[] = [];
    for (let index = 0; index < latencyEvents; index++) {
      const started = performance.now();
      // Lengthening windows only: no retention job is due, the transaction is the settings' one Put.
      await api(team.apiToken, 'PATCH', `/teams/${team.teamId}/settings`, {
        signalRetentionDays: 400 + index,
        executionRetentionDays: 400 + index,
      });
      settingsWrites.push(performance.now() - started);
    }
    const settingsCost = await measureTransactionItemCost(
      stack.dynamodbEndpoint,
      stack.tables.Data,
      stack.tables.Events,
    );
    const rulesCost = await measureRulesEventCost(
      stack.dynamodbEndpoint,
      stack.tables.Data,
      stack.tables.Events,
    );
    const down = await api(other.apiToken, 'POST', '/webhooks', {
      url: 'http://127.0.0.1:9/down',
      eventTypes: ['pipeline.deleted'],
    });
    const db = createDocumentClient(localClient(stack.dynamodbEndpoint));
    const memorySamples = new Map<string, number[]>(DELIVERERS.map((entry) => [entry, []]));
    const sampler = setInterval(() => {
      for (const entry of DELIVERERS) {
        const fn = stack.functions.get(entry);
        if (!fn) continue;
        void environmentMemoryBytes(fn).then(
          (bytes) => bytes.length > 0 && memorySamples.get(entry)?.push(Math.max(...bytes) / 2 ** 20),
        );
      }
    }, 200);
    const startedAt = Date.now();
    const events = Array.from({ length: fanOutEvents }, () =>
      newEvent(
        'pipeline.deleted',
        { teamId: other.teamId, pipelineId: nanoid(), actor: { userId: 'system', credential: 'system' } },
        { at: new Date().toISOString(), key: nanoid() },
      ),
    );
    for (let start = 0; start < events.length; start += 25) {
      await db.send(
        new BatchWriteCommand({
          RequestItems: {
            [stack.tables.Events]: events
              .slice(start, start + 25)
              .map((event) => ({ PutRequest: { Item: eventItem(event) } })),
          },
        }),
      );
    }
    const good = () =>
      events.reduce(
        (sum, event) =>
          sum + (arrivals.get(event.id)?.filter((arrival) => arrival.path.startsWith('/good/')).length ?? 0),
        0,
      );
    await until(() => good() >= fanOutEvents * 4, 600_000);
    const fanOutSeconds = (Date.now() - startedAt) / 1000;
    clearInterval(sampler);
    const delivererHeapMb = DELIVERERS.map((entry) => {
      const samples = memorySamples.get(entry) ?? [];
      const size = Math.max(1, Math.ceil(samples.length / 4));
      // The lowest sample of a quarter is the heap just after a collection: what the deliverer keeps.
      const quarters = [0, 1, 2, 3].map((index) =>
        Math.min(...samples.slice(index * size, (index + 1) * size)),
      );
      return { entry, quartersMb: quarters, maxMb: Math.max(...samples), samples: samples.length };
    });
    const distinct = events.reduce(
      (sum, event) =>
        sum +
        new Set(
          arrivals
            .get(event.id)
            ?.filter((arrival) => arrival.path.startsWith('/good/'))
            .map((arrival) => arrival.path),
        ).size,
      0,
    );
    const attemptsOfDown = async () => {
      const attempts: number[] = [];
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await db.send(
          new QueryCommand({
            TableName: stack.tables.Data,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': webhookDeliveriesPartition(down.id) },
            ExclusiveStartKey: startKey,
          }),
        );
        for (const item of page.Items ?? []) attempts.push(Number(item.attempt));
        startKey = page.LastEvaluatedKey;
      } while (startKey);
      return attempts;
    };
    // The second attempt comes 5 s after the first (the schedule's first wait).
    await until(
      async () => (await attemptsOfDown()).filter((attempt) => attempt === 2).length >= fanOutEvents,
      120_000,
    );
    const downAttempts = await attemptsOfDown();
    return {
      ...outbox,
      rejectP50Ms: percentile(rejects, 50),
      approvalRulesP50Ms: percentile(ruleWrites, 50),
      ...rulesCost,
      teamSettingsP50Ms: percentile(settingsWrites, 50),
      ...settingsCost,
      latencyP50Ms: percentile(latencies, 50),
      latencyP99Ms: percentile(latencies, 99),
      latencySamples: latencies.length,
      fanOutEvents,
      goodDeliveries: distinct,
      duplicateDeliveries: good() - distinct,
      fanOutSeconds,
      downPending: downAttempts.filter((attempt) => attempt === 1).length,
      downRetried: downAttempts.filter((attempt) => attempt === 2).length,
      delivererHeapMb,
    } satisfies WebhookFigures;
  } finally {
    await stack.stop();
    receiver.close();
  }
}

function localClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}

/**
 * A write as it was before events (`false`) and as it is now, with its event (`true`), alternated
 * 200 times each: `prepare` sets up one sample and returns the write, which alone is timed.
 */
async function beforeAndNow(prepare: (now: boolean) => Promise<() => Promise<unknown>>) {
  const samples = { false: [] as number[], true: [] as number[] };
  for (let index = 0; index < 200; index++) {
    for (const now of [false, true] as const) {
      const write = await prepare(now);
      const started = performance.now();
      await write();
      samples[`${now}`].push(performance.now() - started);
    }
  }
  return { beforeP50Ms: percentile(samples.false, 50), nowP50Ms: percentile(samples.true, 50) };
}

const BENCH_ACTOR = { userId: 'u', credential: 'session' } as const;

/**
 * What the event adds to reject's write: the same conditional status move of a run item as the
 * UpdateItem it was before events (on a copy of the runs table without its stream), and as it is
 * now, carrying its event, on the stack's runs table (whose stream the stack's relay is reading).
 */
async function measureOutboxCost(endpoint: string, runsTable: string) {
  const client = localClient(endpoint);
  const db = createDocumentClient(client);
  const { stream: _noStream, ...runsTableBefore } = RUNS_TABLE;
  const tableBefore = `${runsTable}-before-events`;
  await createTable(client, runsTableBefore, tableBefore);
  const { beforeP50Ms, nowP50Ms } = await beforeAndNow(async (now) => {
    const id = nanoid();
    const table = now ? runsTable : tableBefore;
    await db.send(new PutCommand({ TableName: table, Item: { id, status: 'generated' } }));
    const event = newEvent(
      'synthesis_run.rejected',
      { teamId: 't', pipelineId: 'p', runId: id, status: 'rejected', actor: BENCH_ACTOR },
      { at: new Date().toISOString(), key: id },
    );
    const update = {
      TableName: table,
      Key: { id },
      UpdateExpression: 'SET #status = :to, rejectedAt = :at',
      ConditionExpression: '#status = :from',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':to': 'rejected', ':from': 'generated', ':at': new Date().toISOString() },
    };
    return () => db.send(new UpdateCommand(carryingEvent(update, now ? event : undefined)));
  });
  return { changeAloneP50Ms: beforeP50Ms, changeWithEventP50Ms: nowP50Ms };
}

/**
 * What the event adds to the approval rules' write: the Put of the data table it was before events,
 * and the Put of the settings table carrying its event it is now (whose stream the stack's relay
 * is reading).
 */
async function measureRulesEventCost(endpoint: string, dataTable: string, settingsTable: string) {
  const db = createDocumentClient(localClient(endpoint));
  const { beforeP50Ms, nowP50Ms } = await beforeAndNow(async (now) => {
    const pipelineId = nanoid();
    const at = new Date().toISOString();
    const rules = {
      ...approvalRulesKey(pipelineId),
      pipelineId,
      requireEvaluation: true,
      maxRegressions: 0,
      minEvaluatedCases: 20,
      forbidSelfApproval: true,
      allowApiTokens: false,
      updatedAt: at,
      updatedBy: 'u',
    };
    const event = newEvent(
      'approval_rules.updated',
      { teamId: 't', pipelineId, actor: BENCH_ACTOR },
      { at, key: pipelineId },
    );
    const put = now
      ? { TableName: settingsTable, Item: { ...rules, [CARRIED_EVENT_ATTRIBUTE]: carriedEventValue(event) } }
      : { TableName: dataTable, Item: rules };
    return () => db.send(new PutCommand(put));
  });
  return { rulesAloneP50Ms: beforeP50Ms, rulesWithEventP50Ms: nowP50Ms };
}

/**
 * What the event adds to a change that was a transaction already: the team settings' transaction
 * of its one Put, without and with the event item.
 */
async function measureTransactionItemCost(endpoint: string, dataTable: string, eventsTable: string) {
  const db = createDocumentClient(localClient(endpoint));
  const { beforeP50Ms, nowP50Ms } = await beforeAndNow(async (now) => {
    const teamId = nanoid();
    const at = new Date().toISOString();
    const settings = {
      teamId,
      signalRetentionDays: 90,
      executionRetentionDays: 90,
      modelBudgetUsdPerMonth: null,
      updatedAt: at,
      updatedBy: 'u',
    };
    const writes = teamSettingsWrites(dataTable, settings, settings);
    const event = newEvent('team_settings.updated', { teamId, actor: BENCH_ACTOR }, { at, key: teamId });
    return () =>
      db.send(
        new TransactWriteCommand({ TransactItems: now ? [...writes, eventPut(eventsTable, event)] : writes }),
      );
  });
  return { settingsTxAloneP50Ms: beforeP50Ms, settingsTxWithEventP50Ms: nowP50Ms };
}

export function formatWebhooks(figures: WebhookFigures): string {
  const verdict = (ok: boolean) => (ok ? 'ok' : 'MISSED');
  const added = figures.changeWithEventP50Ms - figures.changeAloneP50Ms;
  // The operation without its event item would take what it takes now, less what the item adds.
  const operationRatio = figures.rejectP50Ms / (figures.rejectP50Ms - added);
  const rulesAdded = figures.rulesWithEventP50Ms - figures.rulesAloneP50Ms;
  const rulesRatio = figures.approvalRulesP50Ms / (figures.approvalRulesP50Ms - rulesAdded);
  const settingsAdded = figures.settingsTxWithEventP50Ms - figures.settingsTxAloneP50Ms;
  const settingsRatio = figures.teamSettingsP50Ms / (figures.teamSettingsP50Ms - settingsAdded);
  return [
    `the write alone: a run's status move carrying its event (runs stream on) p50 ${figures.changeWithEventP50Ms.toFixed(2)} ms vs the UpdateItem it was (no stream) ${figures.changeAloneP50Ms.toFixed(2)} ms (+${added.toFixed(2)} ms)`,
    `POST …/reject through the gateway p50 ${figures.rejectP50Ms.toFixed(1)} ms: ${operationRatio.toFixed(3)}× the same without the event item (target ≤ 1.15×) ${verdict(operationRatio <= 1.15)}`,
    `the approval rules' write: its Put carrying its event (settings stream on) p50 ${figures.rulesWithEventP50Ms.toFixed(2)} ms vs the Put it was (data table) ${figures.rulesAloneP50Ms.toFixed(2)} ms (+${rulesAdded.toFixed(2)} ms)`,
    `PUT …/approval-rules through the gateway p50 ${figures.approvalRulesP50Ms.toFixed(1)} ms: ${rulesRatio.toFixed(3)}× the same without the event item (target ≤ 1.15×) ${verdict(rulesRatio <= 1.15)}`,
    `the team settings' transaction with its event item p50 ${figures.settingsTxWithEventP50Ms.toFixed(2)} ms vs without ${figures.settingsTxAloneP50Ms.toFixed(2)} ms (+${settingsAdded.toFixed(2)} ms)`,
    `PATCH /teams/{teamId}/settings through the gateway p50 ${figures.teamSettingsP50Ms.toFixed(1)} ms: ${settingsRatio.toFixed(3)}× the same without the event item (target ≤ 1.15×) ${verdict(settingsRatio <= 1.15)}`,
    `change → webhook arrival over ${figures.latencySamples} events: p50 ${figures.latencyP50Ms.toFixed(0)} ms, p99 ${figures.latencyP99Ms.toFixed(0)} ms (target p50 ≤ 1000 ms) ${verdict(figures.latencyP50Ms <= 1000)}`,
    `${figures.fanOutEvents} events to 5 webhooks, one down: ${figures.goodDeliveries}/${figures.fanOutEvents * 4} good deliveries in ${figures.fanOutSeconds.toFixed(1)} s (${figures.duplicateDeliveries} duplicates; target all, none lost) ${verdict(figures.goodDeliveries === figures.fanOutEvents * 4)}; the down one: ${figures.downPending} first attempts pending, ${figures.downRetried} retried 5 s later ${verdict(figures.downRetried === figures.fanOutEvents)}`,
    ...figures.delivererHeapMb.map((heap) => {
      const [, second = Number.NaN, , last = Number.NaN] = heap.quartersMb;
      return `  ${heap.entry} heap kept, by quarter of the fan-out (${heap.samples} samples): ${heap.quartersMb.map((mb) => mb.toFixed(1)).join(' → ')} MB, peak ${heap.maxMb.toFixed(1)} MB (target flat: the last quarter ≤ 1.25 × the second, after warm-up) ${verdict(last <= 1.25 * second)}`;
    }),
  ].join('\n');
}
