/**
 * Rollouts through the local stack, as ratios against a poll (GET /synthesis-runs/{id}) measured
 * in the same process on the same stack (absolute numbers mean little on a shared machine):
 *   - serving: GET …/serving-configuration?routingKey during a rollout, p50 and throughput at 16
 *     callers. Targets: p50 ≤ 1.2 × poll, throughput ≥ 0.9 × poll.
 *   - recording: POST …/executions (100 a batch) on a pipeline with an active rollout against one
 *     without. Target ≤ 1.2 ×.
 *   - effect: GET …/effect of a rollout with 1,000 executions per arm, p50 against a poll's, with
 *     nothing new recorded and measured afresh (a new execution before each call; target ≤ 5× a
 *     poll); and, as the history grows, its time and the items one fresh measurement reads
 *     (counted in-process by the same use case on the stack's DynamoDB Local).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SETTLE_MS } from '../lambdas/core/rollouts/effect-state.ts';
import { makeGetEffect } from '../lambdas/core/use-cases/effect.ts';
import { makeRolloutRepository } from '../lambdas/store/rollouts.ts';
import { makeRunRepository } from '../lambdas/store/runs.ts';
import { makeTeamSettingsStore } from '../lambdas/store/team-settings.ts';
import { systemClock } from '../lambdas/wiring/clock.ts';
import { makeRecentEffectStates } from '../lambdas/wiring/recent-effect-states.ts';
import { startLocalStack } from '../local/stack.ts';
import { pipelineWithGeneratedRun, stackApi, UNLIMITED } from './stack-api.ts';

function p50(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

export interface RolloutFigures {
  pollP50Ms: number;
  servingP50Ms: number;
  pollPerSecond: number;
  servingPerSecond: number;
  recordWithoutMs: number;
  recordDuringMs: number;
  effectP50Ms: number;
  /** A poll's p50 measured beside the effect's samples (one poll before each). */
  effectPollP50Ms: number;
  /** With a new execution before each call: the measurement made anew, not the kept one. */
  effectFreshP50Ms: number;
  effectFreshPollP50Ms: number;
  /** Measured afresh at each history size, with the executions the arms counted (at most 1,000 each). */
  effectByHistory: Array<{
    history: number;
    p50Ms: number;
    pollP50Ms: number;
    counted: number;
    /** By a measurement in an environment that made the previous one (as a warm Lambda). */
    itemsRead: number;
    /** By one whose remembered state is far behind (other environments measured meanwhile). */
    itemsReadBehind: number;
  }>;
}

/** Counts the items every DynamoDB answer of `client` carries (Query Items, GetItem Item). */
function countingClient(endpoint: string) {
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const counter = { items: 0 };
  client.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args);
      const output = (result.output ?? {}) as { Items?: unknown[]; Item?: unknown };
      counter.items += output.Items?.length ?? (output.Item ? 1 : 0);
      return result;
    },
    { step: 'initialize', name: 'countItems' },
  );
  return { db: DynamoDBDocumentClient.from(client), counter };
}

export async function measureRollouts(): Promise<RolloutFigures> {
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-bench-rollouts-'));
  const stack = await startLocalStack({ port: 0, quiet: true, stateDir, limits: UNLIMITED });
  try {
    const team = stack.teams[0];
    if (!team) throw new Error('the local stack seeds two teams');
    const api = stackApi(stack.apiUrl, team.apiToken);
    const newPipeline = (name: string) => pipelineWithGeneratedRun(api, name);
    const during = await newPipeline('during a rollout');
    const without = await newPipeline('without a rollout');
    await api('POST', `/synthesis-runs/${during.run.id}/approve`, {
      // autoRollback (the default) makes every batch queue a guardrail check: its cost is measured.
      // The minimum is never reached here, so the judge keeps the rollout.
      rollout: { percent: 50, minExecutions: 100_000 },
    });
    const poll = `/synthesis-runs/${during.run.id}`;
    const serve = (i: number) =>
      `/pipelines/${during.pipeline.id}/serving-configuration?routingKey=user-${i}`;

    const sequential = async (route: (i: number) => string, samples: number) => {
      const times: number[] = [];
      for (let i = 0; i < samples; i++) {
        const start = performance.now();
        await api('GET', route(i));
        times.push(performance.now() - start);
      }
      return p50(times);
    };
    const throughput = async (route: (i: number) => string, ms: number) => {
      let done = 0;
      const until = performance.now() + ms;
      await Promise.all(
        Array.from({ length: 16 }, async (_, caller) => {
          while (performance.now() < until) {
            await api('GET', route(caller * 1_000_000 + done));
            done += 1;
          }
        }),
      );
      return done / (ms / 1000);
    };
    // Warm both functions, then alternate so drift hits both alike.
    await sequential(() => poll, 20);
    await sequential(serve, 20);
    const pollP50Ms = p50([await sequential(() => poll, 150), await sequential(() => poll, 150)]);
    const servingP50Ms = p50([await sequential(serve, 150), await sequential(serve, 150)]);
    // Alternated and repeated: the machine is shared, and load drifts during a measurement.
    const pollRates: number[] = [];
    const servingRates: number[] = [];
    for (let round = 0; round < 3; round++) {
      pollRates.push(await throughput(() => poll, 2_000));
      servingRates.push(await throughput(serve, 2_000));
    }
    const pollPerSecond = p50(pollRates);
    const servingPerSecond = p50(servingRates);

    const batch = (configurationId: string, failedEvery: number) => ({
      executions: Array.from({ length: 100 }, (_, i) => ({
        configurationId,
        status: i % failedEvery === 0 ? 'failed' : 'succeeded',
        durationMs: 100 + i,
        slotResults: [
          { slotId: 'retrieve', status: i % failedEvery === 0 ? 'failed' : 'succeeded', durationMs: 50 },
        ],
      })),
    });
    const record = async (pipelineId: string, configurationId: string, failedEvery: number) => {
      const start = performance.now();
      await api('POST', `/pipelines/${pipelineId}/executions`, batch(configurationId, failedEvery));
      return performance.now() - start;
    };
    const withoutTimes: number[] = [];
    const duringTimes: number[] = [];
    for (let i = 0; i < 10; i++) {
      withoutTimes.push(await record(without.pipeline.id, without.pipeline.activeConfigurationId, 10));
      duringTimes.push(await record(during.pipeline.id, during.pipeline.activeConfigurationId, 10));
      duringTimes.push(await record(during.pipeline.id, during.run.proposedConfigurationId, 20));
      withoutTimes.push(await record(without.pipeline.id, without.pipeline.activeConfigurationId, 10));
    }
    // 1,000 a arm now; the effect's time as more history piles up on top. After a burst, the
    // first measurements within SETTLE_MS read the burst's last 2 s again (the marks stay that far
    // behind): the rows are measured once it settled, as executions arriving at a steady pace are.
    const settled = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS + 250));
    await settled();
    const effect = `/synthesis-runs/${during.run.id}/effect`;
    const effectByHistory: RolloutFigures['effectByHistory'] = [];
    // Each effect sample beside a poll sample: the machine is shared and its load drifts.
    const timed = async (route: string) => {
      const start = performance.now();
      const body = await api('GET', route);
      return { ms: performance.now() - start, body };
    };
    // The first call builds the kept state from scratch (not "nothing new"); a few more warm the function.
    for (let i = 0; i < 5; i++) await timed(effect);
    const effectTimes: number[] = [];
    const effectPollTimes: number[] = [];
    for (let i = 0; i < 30; i++) {
      effectPollTimes.push((await timed(poll)).ms);
      effectTimes.push((await timed(effect)).ms);
    }
    const effectP50Ms = p50(effectTimes);
    const effectPollP50Ms = p50(effectPollTimes);
    // The same use case in-process on the stack's tables, its reads counted.
    const counting = countingClient(stack.dynamodbEndpoint);
    const countedEffect = makeGetEffect({
      runs: makeRunRepository(counting.db, {
        runs: stack.tables.Runs,
        data: stack.tables.Data,
        events: stack.tables.Events,
      }),
      rollouts: makeRolloutRepository(counting.db, stack.tables.Data, stack.tables.Events),
      settings: makeTeamSettingsStore(counting.db, stack.tables.Data),
      clock: systemClock,
      recentStates: makeRecentEffectStates(),
    });
    const principal = {
      principalId: 'bench',
      userId: 'bench',
      teamId: team.teamId,
      role: 'admin' as const,
      method: 'api-token' as const,
    };
    // Measured afresh: one new execution before each call, as during a rollout executions keep arriving.
    const measureFresh = async () => {
      const fresh: number[] = [];
      const polls: number[] = [];
      let counted = 0;
      for (let i = 0; i < 20; i++) {
        polls.push((await timed(poll)).ms);
        await api('POST', `/pipelines/${during.pipeline.id}/executions`, {
          executions: [
            { configurationId: during.pipeline.activeConfigurationId, status: 'succeeded', durationMs: 5 },
          ],
        });
        const { ms, body: measured } = await timed(effect);
        fresh.push(ms);
        counted = measured.arms.base.executions + measured.arms.applied.executions;
      }
      // In-process: the first measurement after the stack's (this process's remembered state is
      // behind), then one more after one new execution (as a warm environment measures).
      const countOne = async () => {
        await api('POST', `/pipelines/${during.pipeline.id}/executions`, {
          executions: [
            { configurationId: during.run.proposedConfigurationId, status: 'succeeded', durationMs: 5 },
          ],
        });
        counting.counter.items = 0;
        await countedEffect(principal, during.run.id);
        return counting.counter.items;
      };
      const itemsReadBehind = await countOne();
      const itemsRead = await countOne();
      return { p50Ms: p50(fresh), pollP50Ms: p50(polls), counted, itemsRead, itemsReadBehind };
    };
    const first = await measureFresh();
    effectByHistory.push({ history: 2_000, ...first });
    let recorded = 2_000;
    for (const target of [10_000, 100_000]) {
      for (; recorded < target; recorded += 200) {
        await record(during.pipeline.id, during.pipeline.activeConfigurationId, 10);
        await record(during.pipeline.id, during.run.proposedConfigurationId, 20);
      }
      await settled();
      effectByHistory.push({ history: target, ...(await measureFresh()) });
    }
    const effectFreshP50Ms = first.p50Ms;
    const effectFreshPollP50Ms = first.pollP50Ms;
    return {
      pollP50Ms,
      servingP50Ms,
      pollPerSecond,
      servingPerSecond,
      recordWithoutMs: p50(withoutTimes),
      recordDuringMs: p50(duringTimes),
      effectP50Ms,
      effectPollP50Ms,
      effectFreshP50Ms,
      effectFreshPollP50Ms,
      effectByHistory,
    };
  } finally {
    await stack.stop();
  }
}

/**
 * What one fresh measurement may read, whatever the history: the run, the team's settings, the
 * kept item and the rollout (GetItems), and what was recorded since the kept marks (at most about
 * 50 before a measurement writes them forward, plus what arrived since the previous measurement).
 */
const FRESH_ITEMS_BOUND = 100;
/** Plus, when the environment's remembered state is far behind, its early reads (≤ 100 an arm and 100 signals). */
const BEHIND_ITEMS_BOUND = FRESH_ITEMS_BOUND + 300;

export function formatRollouts(f: RolloutFigures): string {
  const ok = (pass: boolean) => (pass ? 'ok' : 'MISSED');
  const r = (n: number) => n.toFixed(2);
  const serving = f.servingP50Ms / f.pollP50Ms;
  const servingRate = f.servingPerSecond / f.pollPerSecond;
  const recording = f.recordDuringMs / f.recordWithoutMs;
  const effect = f.effectP50Ms / f.effectPollP50Ms;
  const fresh = f.effectFreshP50Ms / f.effectFreshPollP50Ms;
  return [
    `serving p50 ${r(f.servingP50Ms)} ms vs poll ${r(f.pollP50Ms)} ms: ${r(serving)}× (target ≤ 1.2×) ${ok(serving <= 1.2)}`,
    `serving ${f.servingPerSecond.toFixed(0)}/s vs poll ${f.pollPerSecond.toFixed(0)}/s at 16 callers: ${r(servingRate)}× (target ≥ 0.9×) ${ok(servingRate >= 0.9)}`,
    `recording 100 executions during a rollout ${r(f.recordDuringMs)} ms vs without ${r(f.recordWithoutMs)} ms: ${r(recording)}× (target ≤ 1.2×) ${ok(recording <= 1.2)}`,
    `effect, 1,000 executions a arm, p50 ${r(f.effectP50Ms)} ms vs poll ${r(f.effectPollP50Ms)} ms beside it: ${r(effect)}× a poll (target ≤ 5×) ${ok(effect <= 5)} (nothing new recorded: the kept measurement)`,
    `effect measured afresh (a new execution before each call) p50 ${r(f.effectFreshP50Ms)} ms vs poll ${r(f.effectFreshPollP50Ms)} ms beside it: ${r(fresh)}× a poll (target ≤ 5×) ${ok(fresh <= 5)}`,
    ...f.effectByHistory.map(
      (row) =>
        `  effect measured afresh with ${row.history.toLocaleString('en-US')} executions recorded: p50 ${r(row.p50Ms)} ms (${r(row.p50Ms / row.pollP50Ms)}× a poll beside it), ${row.counted.toLocaleString('en-US')} executions counted (at most 1,000 a arm), ${row.itemsRead} items read by a fresh measurement (target ≤ ${FRESH_ITEMS_BOUND}) ${ok(row.itemsRead <= FRESH_ITEMS_BOUND)}, ${row.itemsReadBehind} by one in an environment left behind (≤ ${BEHIND_ITEMS_BOUND}) ${ok(row.itemsReadBehind <= BEHIND_ITEMS_BOUND)}`,
    ),
  ].join('\n');
}
