/**
 * Recording throughput with the data's shard count at 1 (the write pattern before the shards: every
 * execution, id marker and index entry of a pipeline under one key) against the default, the two
 * alternated in one run, each on a local stack of its own started with that RECORD_SHARDS.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_RECORD_SHARDS } from '../lambdas/store/keys.ts';
import { startLocalStack } from '../local/stack.ts';
import { recordDuringRollout } from './partitions.ts';
import { stackApi, UNLIMITED } from './stack-api.ts';

export interface ShardThroughput {
  /** Records a second, in run order, each with its shard count. */
  runs: Array<{ shards: number; recordsPerSecond: number }>;
}

/** One local stack with `shards`, the rollout's recording through it, and its rate. */
async function recordWithShards(shards: number): Promise<number> {
  const previous = process.env.RECORD_SHARDS;
  // Read by the stack's start (local/environment.ts) and handed to its functions' environments.
  process.env.RECORD_SHARDS = String(shards);
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-bench-shards-'));
  try {
    const stack = await startLocalStack({ port: 0, quiet: true, stateDir, limits: UNLIMITED });
    try {
      const team = stack.teams[0];
      if (!team) throw new Error('the local stack seeds two teams');
      return (await recordDuringRollout(stackApi(stack.apiUrl, team.apiToken))).recordsPerSecond;
    } finally {
      await stack.stop();
    }
  } finally {
    if (previous === undefined) delete process.env.RECORD_SHARDS;
    else process.env.RECORD_SHARDS = previous;
    await rm(stateDir, { recursive: true, force: true });
  }
}

/** `pairs` pairs, one shard then the default in each, so load drifting over the run hits both. */
export async function measureShardThroughput(pairs = 3): Promise<ShardThroughput> {
  const runs: ShardThroughput['runs'] = [];
  for (let pair = 0; pair < pairs; pair++) {
    // The order alternates too: neither always runs first in its pair.
    const order = pair % 2 === 0 ? [1, DEFAULT_RECORD_SHARDS] : [DEFAULT_RECORD_SHARDS, 1];
    for (const shards of order) runs.push({ shards, recordsPerSecond: await recordWithShards(shards) });
  }
  return { runs };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

/** Recording throughput at least this share of the one-shard baseline's. */
const THROUGHPUT_RATIO_MIN = 0.9;

export function formatShardThroughput({ runs }: ShardThroughput): string {
  const rates = (shards: number) =>
    runs.filter((run) => run.shards === shards).map((run) => run.recordsPerSecond);
  const ratio = median(rates(DEFAULT_RECORD_SHARDS)) / median(rates(1));
  const order = runs.map((run) => `${run.shards}: ${run.recordsPerSecond.toFixed(0)}`).join(', ');
  return [
    `recording throughput, ${DEFAULT_RECORD_SHARDS} shards vs 1 (the write pattern before the shards, on this code: one key per kind, the rollout's counts kept), alternated, records a second by shard count in run order: ${order}`,
    `  median ${median(rates(DEFAULT_RECORD_SHARDS)).toFixed(0)} vs ${median(rates(1)).toFixed(0)}: ${ratio.toFixed(2)}× (target ≥ ${THROUGHPUT_RATIO_MIN}×) ${ratio >= THROUGHPUT_RATIO_MIN ? 'ok' : 'MISSED'}`,
  ].join('\n');
}
