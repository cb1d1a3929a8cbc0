/*
 * Every key of the runs and data tables, built in one place (the auth table's in store/auth/keys.ts,
 * the events table's in store/event-keys.ts): the stores, the local stack and the tests read and
 * write items only through these builders, so a key pattern cannot drift.
 */
import type { Activation } from '../core/schemas/pipelines.ts';
import type { Execution, Signal } from '../core/schemas/records.ts';
import type { Rollout } from '../core/schemas/rollouts.ts';

/** The attributes that place an item in the table and gsi1 (a gsi1 page's cursor carries exactly these). */
export const KEY_ATTRIBUTES = ['pk', 'sk', 'gsi1pk', 'gsi1sk'] as const;

/** A table's primary key (pk/sk tables). */
export interface ItemKey {
  pk: string;
  sk: string;
}

/** An item's place in the gsi1 index. */
export interface IndexKey {
  gsi1pk: string;
  gsi1sk: string;
}

/* ---- runs table: one item per run, keyed by the run id ---- */

export const runKey = (id: string) => ({ id });

/*
 * Data table. Signals and executions live in one partition per pipeline with a time-ordered sort
 * key, so "the newest N" is a single Query with Limit whatever the history size.
 *   pipeline       pk PIPELINE#<id>              sk PIPELINE        gsi1 TEAM#<teamId>#PIPELINES / <createdAt>#<id>
 *   configuration  pk PIPELINE#<id>              sk CONFIGURATION#<configurationId>
 *   activation     pk PIPELINE#<id>              sk ACTIVATION#<activatedAt>#<activationId>
 *   rollout        pk PIPELINE#<id>              sk ROLLOUT#<startedAt>#<rolloutId>
 *   serving        pk PIPELINE#<id>              sk SERVING   (what serving needs in one GetItem: the team, the
 *                                                               active configuration and the rollout's candidate;
 *                                                               rewritten in every transaction that moves them)
 *   effect kept    pk PIPELINE#<id>              sk EFFECT#<runId>   (a run's effect: the last answer, the marks
 *                                                                    and the delta since its snapshot; TTL)
 *   effect state   pk PIPELINE#<id>#EFFECTSTATE#<nn>  sk <runId>  (the snapshot: its arms' newest executions,
 *                                                     compressed, rewritten when the delta grows; kept-keys.ts)
 *                  (the active one is also copied onto the pipeline item, attribute `rollout`, with
 *                  gsi2 ROLLOUTS#ACTIVE / <startedAt>#<pipelineId> while it is active: the guardrail's list)
 *   signal         pk PIPELINE#<id>#SIGNALS#<nn>      sk <occurredAt>#<signalId>
 *                  gsi2 PIPELINE#<id>#SIGNALS#CITING#<nn> / <recordedAt>#<signalId>  (only when it cites an execution)
 *   execution      pk PIPELINE#<id>#EXECUTIONS#<nn>   sk <startedAt>#<executionId>
 *                  gsi2 PIPELINE#<id>#CONFIGURATION#<configurationId>#EXECUTIONS#<nn> / <recordedAt>#<executionId>
 *                  (recordedAt: the server's time when the batch was written; the effect reads by it)
 *   signal id      pk PIPELINE#<id>#SIGNALIDS#<nn>    sk <signalId>     (→ recordTime: an id is unique in its
 *   execution id   pk PIPELINE#<id>#EXECUTIONIDS#<nn> sk <executionId>  pipeline; internal)
 *   <nn> is the record's shard, 00-31, a hash of its id (recordShard): no partition key takes more
 *   than a thirty-second of a pipeline's recording (docs/scaling.md), and a record is still found by
 *   its id. Versions before the shards wrote the same keys without `#<nn>`: readers read that
 *   legacy partition as one more source (legacy: true) until retention ages it out.
 *   evidence       pk RUN#<runId>#EVIDENCE       sk SIGNAL#<signalId> | EXECUTION#<executionId>
 *   evaluation set pk RUN#<runId>#EVALUATION     sk SET             (the chosen cases' ids and times; written once)
 *   eval. result   pk RUN#<runId>#EVALUATION     sk RESULT#<executionId>#<arm>  (one per case and arm; a later one replaces it)
 *   approval rules pk PIPELINE#<id>              sk APPROVALRULES   (absent: the defaults)
 *   idempotency    pk IDEMPOTENCY#<scope>#<key>  sk IDEMPOTENCY    gsi1 PIPELINE#<id>#IDEMPOTENCY / <pk> (so a
 *                                                                  pipeline's deletion finds its keys)
 *   team settings  pk TEAM#<teamId>#SETTINGS     sk SETTINGS       (retention windows, model budget)
 *   model spend    pk TEAM#<teamId>#MODELSPEND   sk <YYYY-MM>      (estimates of runs in flight and
 *                                                                  costs of ended runs, in USD)
 *   retention due  pk TEAM#<teamId>#RETENTION    sk RETENTION      gsi1 RETENTION#DUE / <requestedAt>#<teamId>
 *                                                                  (a shortened window the retention job has
 *                                                                  still to apply; its checkpoint)
 *   deletion       pk DELETION#<deletionId>      sk DELETION       gsi1 DELETIONS#PENDING / <requestedAt>#<id> while
 *                                                                  pending (a pipeline deletion's receipt and progress)
 *   quota          pk QUOTA#<key>#<windowStart>  sk QUOTA
 * Signals, executions and their id markers carry `expiresAtEpoch` (the table's TTL attribute): the
 * record's time plus the team's retention window when it was written.
 * (Plain functions, not an object of them: a bundle keeps only the builders its Lambda uses.)
 */

/** The pipeline's own partition: the pipeline, its configurations and its activations. */
export const pipelinePartition = (pipelineId: string) => `PIPELINE#${pipelineId}`;

export const pipelineKey = (pipelineId: string): ItemKey => ({
  pk: pipelinePartition(pipelineId),
  sk: 'PIPELINE',
});

/** The gsi1 partition that lists a team's pipelines, newest first. */
export const teamPipelinesPartition = (teamId: string) => `TEAM#${teamId}#PIPELINES`;

export const pipelineIndexKey = (pipeline: { id: string; teamId: string; createdAt: string }): IndexKey => ({
  gsi1pk: teamPipelinesPartition(pipeline.teamId),
  gsi1sk: `${pipeline.createdAt}#${pipeline.id}`,
});

export const CONFIGURATION_PREFIX = 'CONFIGURATION#';

export const configurationKey = (pipelineId: string, configurationId: string): ItemKey => ({
  pk: pipelinePartition(pipelineId),
  sk: `${CONFIGURATION_PREFIX}${configurationId}`,
});

/** Activations sort by time within the pipeline's partition: the pipeline's history, one Query. */
export const ACTIVATION_PREFIX = 'ACTIVATION#';

export const activationKey = (
  activation: Pick<Activation, 'pipelineId' | 'activatedAt' | 'id'>,
): ItemKey => ({
  pk: pipelinePartition(activation.pipelineId),
  sk: `${ACTIVATION_PREFIX}${activation.activatedAt}#${activation.id}`,
});

/** Rollouts sort by start within the pipeline's partition: the latest is one Query with Limit 1. */
export const ROLLOUT_PREFIX = 'ROLLOUT#';

export const rolloutKey = (rollout: Pick<Rollout, 'pipelineId' | 'startedAt' | 'id'>): ItemKey => ({
  pk: pipelinePartition(rollout.pipelineId),
  sk: `${ROLLOUT_PREFIX}${rollout.startedAt}#${rollout.id}`,
});

/** The one item GET …/serving-configuration reads. */
export const servingKey = (pipelineId: string): ItemKey => ({
  pk: pipelinePartition(pipelineId),
  sk: 'SERVING',
});

/** A run's last measured effect, kept in its pipeline's partition (deleted with it). */
export const EFFECT_PREFIX = 'EFFECT#';

export const effectCacheKey = (pipelineId: string, runId: string): ItemKey => ({
  pk: pipelinePartition(pipelineId),
  sk: `${EFFECT_PREFIX}${runId}`,
});

/** Where versions before kept a run's effect state (read while an effect item names it; kept-keys.ts now). */
export const effectStateKey = (pipelineId: string, runId: string): ItemKey => ({
  pk: pipelinePartition(pipelineId),
  sk: `${EFFECT_PREFIX}${runId}#STATE`,
});

/** The gsi2 partition listing pipelines with an active rollout (only their pipeline items carry it). */
export const ACTIVE_ROLLOUTS_PARTITION = 'ROLLOUTS#ACTIVE';

/** An item's place in the gsi2 index. */
export interface Index2Key {
  gsi2pk: string;
  gsi2sk: string;
}

export const activeRolloutIndexKey = (rollout: Pick<Rollout, 'pipelineId' | 'startedAt'>): Index2Key => ({
  gsi2pk: ACTIVE_ROLLOUTS_PARTITION,
  gsi2sk: `${rollout.startedAt}#${rollout.pipelineId}`,
});

/** The shards of a deployment that sets no RECORD_SHARDS: holds 5,000 records a second (docs/scaling.md). */
export const DEFAULT_RECORD_SHARDS = 32;

/**
 * A deployment's shard count: RECORD_SHARDS in the functions' environment (the service stack's
 * `recordShards`, `npm start`'s variable), else the default; 1 to 99, anything else refused at
 * the function's start rather than writing under keys no reader reads.
 */
export function recordShardsOf(setting: string | undefined): number {
  if (setting === undefined || setting === '') return DEFAULT_RECORD_SHARDS;
  const count = Number(setting);
  if (!Number.isInteger(count) || count < 1 || count > 99) {
    throw new Error(`RECORD_SHARDS must be a whole number from 1 to 99, not "${setting}".`);
  }
  return count;
}

/**
 * How many shards a pipeline's time-ordered partitions are split into. Part of the key format:
 * every reader reads shards 0..RECORD_SHARDS-1 (and the legacy partition), so a deployment keeps
 * the count it first wrote with; changing it needs a job moving the records (docs/scaling.md).
 */
export const RECORD_SHARDS = /* @__PURE__ */ recordShardsOf(
  typeof process === 'undefined' ? undefined : process.env.RECORD_SHARDS,
);

/** A record's shard: FNV-1a of its id, mod RECORD_SHARDS (stable across processes and versions). */
export function recordShard(id: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < id.length; index++) {
    hash ^= id.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % RECORD_SHARDS;
}

/** A partition's shard suffix; `null`: the legacy partition (no suffix) written before the shards. */
export type Shard = number | null;

export const sharded = (partition: string, shard: Shard) =>
  shard === null ? partition : `${partition}#${String(shard).padStart(2, '0')}`;

/** Every source of a sharded partition, the legacy one first: what a reader merges. */
export const RECORD_SOURCES: readonly Shard[] = [
  null,
  ...Array.from({ length: RECORD_SHARDS }, (_, shard) => shard),
];

/**
 * The gsi2 partition of a configuration's executions in the order they were recorded (the server's
 * time, not the client's startedAt: one recorded late still sorts after the effect's mark), by shard.
 */
export const configurationExecutionsPartition = (pipelineId: string, configurationId: string, shard: Shard) =>
  sharded(`${pipelinePartition(pipelineId)}#CONFIGURATION#${configurationId}#EXECUTIONS`, shard);

/** A recording key: `<recordedAt>#<id>`, recordedAt the server's ISO time (always with milliseconds). */
export const recordingKey = (recordedAt: string, id: string) => `${recordedAt}#${id}`;

export const executionIndexKey = (
  execution: Pick<Execution, 'pipelineId' | 'configurationId' | 'id'>,
  recordedAt: string,
): Index2Key => ({
  gsi2pk: configurationExecutionsPartition(
    execution.pipelineId,
    execution.configurationId,
    recordShard(execution.id),
  ),
  gsi2sk: recordingKey(recordedAt, execution.id),
});

/** The gsi2 partition of a pipeline's signals that cite an execution, in the order they were recorded. */
export const citingSignalsPartition = (pipelineId: string, shard: Shard) =>
  sharded(`${pipelinePartition(pipelineId)}#SIGNALS#CITING`, shard);

/** A signal's place in gsi2: only a signal citing an execution has one (a sparse index). */
export const signalIndexKey = (
  signal: Pick<Signal, 'pipelineId' | 'executionId' | 'id'>,
  recordedAt: string,
): Index2Key | Record<string, never> =>
  signal.executionId === undefined
    ? {}
    : {
        gsi2pk: citingSignalsPartition(signal.pipelineId, recordShard(signal.id)),
        gsi2sk: recordingKey(recordedAt, signal.id),
      };

export const signalsPartition = (pipelineId: string, shard: Shard) =>
  sharded(`${pipelinePartition(pipelineId)}#SIGNALS`, shard);

export const signalKey = (signal: Pick<Signal, 'pipelineId' | 'occurredAt' | 'id'>): ItemKey => ({
  pk: signalsPartition(signal.pipelineId, recordShard(signal.id)),
  sk: `${signal.occurredAt}#${signal.id}`,
});

export const executionsPartition = (pipelineId: string, shard: Shard) =>
  sharded(`${pipelinePartition(pipelineId)}#EXECUTIONS`, shard);

export const executionKey = (execution: Pick<Execution, 'pipelineId' | 'startedAt' | 'id'>): ItemKey => ({
  pk: executionsPartition(execution.pipelineId, recordShard(execution.id)),
  sk: `${execution.startedAt}#${execution.id}`,
});

/**
 * The marker that holds a signal id in its pipeline, whatever the signal's time: written before
 * the signals, it makes one id name one signal, and gives its time (so its item is read by id).
 */
export const signalIdsPartition = (pipelineId: string, shard: Shard) =>
  sharded(`${pipelinePartition(pipelineId)}#SIGNALIDS`, shard);

export const signalIdKey = (pipelineId: string, signalId: string, legacy = false): ItemKey => ({
  pk: signalIdsPartition(pipelineId, legacy ? null : recordShard(signalId)),
  sk: signalId,
});

/** The marker that holds an execution id in its pipeline, as signalIdKey does for signals. */
export const executionIdsPartition = (pipelineId: string, shard: Shard) =>
  sharded(`${pipelinePartition(pipelineId)}#EXECUTIONIDS`, shard);

export const executionIdKey = (pipelineId: string, executionId: string, legacy = false): ItemKey => ({
  pk: executionIdsPartition(pipelineId, legacy ? null : recordShard(executionId)),
  sk: executionId,
});

/**
 * A rollout's exact counts, per arm, kept with the recording (store/records.ts): one counter item
 * per shard (the shard of the batch's first execution), so no counter is a hot key; the effect
 * sums the shards. `#<nn>` as for the records.
 *   rollout counts pk PIPELINE#<id>#ROLLOUTCOUNTS#<nn>  sk <rolloutId>
 */
export const rolloutCountsPartition = (pipelineId: string, shard: Shard) =>
  sharded(`${pipelinePartition(pipelineId)}#ROLLOUTCOUNTS`, shard);

export const rolloutCountsKey = (pipelineId: string, rolloutId: string, shard: number): ItemKey => ({
  pk: rolloutCountsPartition(pipelineId, shard),
  sk: rolloutId,
});

export const evidencePartition = (runId: string) => `RUN#${runId}#EVIDENCE`;

export const evidenceKey = (runId: string, kind: 'signal' | 'execution', recordId: string): ItemKey => ({
  pk: evidencePartition(runId),
  sk: `${kind === 'signal' ? 'SIGNAL' : 'EXECUTION'}#${recordId}`,
});

/** A run's evaluation: its set and every result, one partition per run (one Query deletes or exports it). */
export const evaluationPartition = (runId: string) => `RUN#${runId}#EVALUATION`;

export const evaluationSetKey = (runId: string): ItemKey => ({ pk: evaluationPartition(runId), sk: 'SET' });

export const EVALUATION_RESULT_PREFIX = 'RESULT#';

export const evaluationResultKey = (runId: string, executionId: string, arm: string): ItemKey => ({
  pk: evaluationPartition(runId),
  sk: `${EVALUATION_RESULT_PREFIX}${executionId}#${arm}`,
});

/** A pipeline's approval rules live in its own partition, beside the pipeline. */
export const APPROVAL_RULES_SORT_KEY = 'APPROVALRULES';

export const approvalRulesKey = (pipelineId: string): ItemKey => ({
  pk: pipelinePartition(pipelineId),
  sk: APPROVAL_RULES_SORT_KEY,
});

export const idempotencyKey = (scope: string, key: string): ItemKey => ({
  pk: `IDEMPOTENCY#${scope}#${key}`,
  sk: 'IDEMPOTENCY',
});

/** The gsi1 partition holding a pipeline's idempotency keys (written with the key, read by its deletion). */
export const pipelineIdempotencyPartition = (pipelineId: string) =>
  `${pipelinePartition(pipelineId)}#IDEMPOTENCY`;

export const idempotencyIndexKey = (pipelineId: string, key: ItemKey): IndexKey => ({
  gsi1pk: pipelineIdempotencyPartition(pipelineId),
  gsi1sk: key.pk,
});

export const teamSettingsKey = (teamId: string): ItemKey => ({
  pk: `TEAM#${teamId}#SETTINGS`,
  sk: 'SETTINGS',
});

/** The gsi1 partition listing the teams whose shortened retention window the job has still to apply. */
export const RETENTION_DUE_PARTITION = 'RETENTION#DUE';

export const retentionDueKey = (teamId: string): ItemKey => ({
  pk: `TEAM#${teamId}#RETENTION`,
  sk: 'RETENTION',
});

export const retentionDueIndexKey = (teamId: string, requestedAt: string): IndexKey => ({
  gsi1pk: RETENTION_DUE_PARTITION,
  gsi1sk: `${requestedAt}#${teamId}`,
});

export const deletionKey = (deletionId: string): ItemKey => ({
  pk: `DELETION#${deletionId}`,
  sk: 'DELETION',
});

/** The gsi1 partition of deletions still pending (the retention job queues them again when stalled). */
export const PENDING_DELETIONS_PARTITION = 'DELETIONS#PENDING';

export const pendingDeletionIndexKey = (receipt: { id: string; requestedAt: string }): IndexKey => ({
  gsi1pk: PENDING_DELETIONS_PARTITION,
  gsi1sk: `${receipt.requestedAt}#${receipt.id}`,
});

export const quotaKey = (key: string, windowStart: string): ItemKey => ({
  pk: `QUOTA#${key}#${windowStart}`,
  sk: 'QUOTA',
});

/** A team's model spend in one calendar month ("2026-11"), in USD (store/model-spend.ts). */
export const modelSpendKey = (teamId: string, month: string): ItemKey => ({
  pk: `TEAM#${teamId}#MODELSPEND`,
  sk: month,
});

/*
 * Webhooks, in the data table (store/webhooks.ts):
 *   webhook        pk TEAM#<teamId>#WEBHOOKS            sk WEBHOOK#<webhookId>
 *   webhook count  pk TEAM#<teamId>#WEBHOOKS            sk COUNT            (the per-team limit)
 *   delivery       pk WEBHOOK#<webhookId>#DELIVERIES    sk <attemptedAt>#<deliveryId>   (TTL 30 days)
 */

export const teamWebhooksPartition = (teamId: string) => `TEAM#${teamId}#WEBHOOKS`;

export const WEBHOOK_PREFIX = 'WEBHOOK#';

export const webhookKey = (teamId: string, webhookId: string): ItemKey => ({
  pk: teamWebhooksPartition(teamId),
  sk: `${WEBHOOK_PREFIX}${webhookId}`,
});

export const webhookCountKey = (teamId: string): ItemKey => ({
  pk: teamWebhooksPartition(teamId),
  sk: 'COUNT',
});

export const webhookDeliveriesPartition = (webhookId: string) => `WEBHOOK#${webhookId}#DELIVERIES`;

export const deliveryKey = (delivery: { webhookId: string; attemptedAt: string; id: string }): ItemKey => ({
  pk: webhookDeliveriesPartition(delivery.webhookId),
  sk: `${delivery.attemptedAt}#${delivery.id}`,
});
