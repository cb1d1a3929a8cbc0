/*
 * Keys of what is kept beside a pipeline's records (the layout is in store/keys.ts): the ends of its
 * executions' history and the snapshots of its rollouts' effects, each sharded like the records.
 */
import { type ItemKey, pipelinePartition, type Shard, sharded } from './keys.ts';

/**
 * The ends of a pipeline's executions, kept with the recording (store/records.ts keepEnds): per
 * shard (the shard of a batch's first execution) the oldest start of the first batch written there
 * and the newest start of any, so an evaluation set finds the history's ends with one BatchGetItem
 * instead of a Query a shard at each end. Small items, one update a batch, spread like the records.
 *   execution ends pk PIPELINE#<id>#EXECUTIONENDS#<nn>  sk ENDS
 */
export const executionEndsPartition = (pipelineId: string, shard: Shard) =>
  sharded(`${pipelinePartition(pipelineId)}#EXECUTIONENDS`, shard);

export const executionEndsKey = (pipelineId: string, shard: number): ItemKey => ({
  pk: executionEndsPartition(pipelineId, shard),
  sk: 'ENDS',
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
