/*
 * Keys of what is kept beside a pipeline's records (the layout is in store/keys.ts): the oldest start
 * of its executions and the snapshots of its rollouts' effects (sharded like the records).
 */
import { type ItemKey, pipelinePartition, type Shard, sharded } from './keys.ts';

/**
 * The oldest start of a pipeline's executions, kept with the recording (store/records.ts
 * keepOldestStart) so an evaluation set finds its history's start with one GetItem instead of a
 * Query a shard; the newest comes from reading the last slice (store/evaluations.ts). Written a few
 * times in the pipeline's life (once an environment), so one unsharded key. Earlier versions kept
 * both ends per shard (sk ENDS under `#<nn>`): no longer read, removed with the pipeline's data.
 *   oldest start  pk PIPELINE#<id>#EXECUTIONENDS  sk OLDEST
 */
export const executionEndsPartition = (pipelineId: string, shard: Shard) =>
  sharded(`${pipelinePartition(pipelineId)}#EXECUTIONENDS`, shard);

export const executionOldestKey = (pipelineId: string): ItemKey => ({
  pk: executionEndsPartition(pipelineId, null),
  sk: 'OLDEST',
});

/**
 * The snapshot of a run's maintained effect state (its effect item holds the delta since and names
 * the snapshot and its shard). Each new snapshot goes to the shard its random name hashes to, so
 * the snapshots' writes spread over RECORD_SHARDS keys and none lands in the pipeline's partition,
 * which every poll reads. A stale one left in another shard expires with its TTL.
 *   effect snapshot pk PIPELINE#<id>#EFFECTSTATE#<nn>  sk <runId>
 */
export const effectSnapshotsPartition = (pipelineId: string, shard: Shard) =>
  sharded(`${pipelinePartition(pipelineId)}#EFFECTSTATE`, shard);

export const effectSnapshotKey = (pipelineId: string, runId: string, shard: number): ItemKey => ({
  pk: effectSnapshotsPartition(pipelineId, shard),
  sk: runId,
});
