/*
 * The guarded metrics' counters kept with the recording (core/rollouts/counters.ts names them):
 * the ADD clauses a batch's executions or signals add to the rollout's counter shard, in the same
 * transaction as the records; where an execution's id marker says it was counted (arm, step); and
 * the signals that cite an execution not recorded yet, waiting on its marker until it is.
 */
import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type CounterArm, executionDeltas, signalDeltas } from '../core/rollouts/counters.ts';
import type { Execution, Signal } from '../core/schemas/records.ts';
import type { Guardrail } from '../core/schemas/rollouts.ts';
import { executionIdKey, type ItemKey, recordShard, rolloutCountsKey } from './keys.ts';

/** The rollout a batch is counted in: its arms, guardrails (absent: started before moments) and step. */
export interface MomentRollout {
  id: string;
  baseConfigurationId: string;
  candidateConfigurationId: string;
  guardrails?: Guardrail[] | undefined;
  step?: number | undefined;
}

/** The arm an execution counts for, or null (neither configuration). */
export function armOf(
  execution: Pick<Execution, 'configurationId'>,
  rollout: MomentRollout,
): CounterArm | null {
  if (execution.configurationId === rollout.candidateConfigurationId) return 'c';
  if (execution.configurationId === rollout.baseConfigurationId) return 'b';
  return null;
}

/** True when the rollout keeps moments (started with guardrails). */
export const keepsMoments = (rollout: MomentRollout | null): rollout is MomentRollout =>
  rollout?.guardrails !== undefined;

/** The signal kinds the rollout guards. */
export function guardedKinds(rollout: MomentRollout | null): Set<string> {
  return new Set(
    (rollout?.guardrails ?? []).flatMap((guard) =>
      guard.metric === 'signal' && guard.kind ? [guard.kind] : [],
    ),
  );
}

/** What a batch of executions adds at the rollout's current step (none for a rollout without moments). */
export function batchDeltas(executions: Execution[], rollout: MomentRollout | null): Map<string, number> {
  const deltas = new Map<string, number>();
  if (!keepsMoments(rollout)) return deltas;
  for (const execution of executions) {
    const arm = armOf(execution, rollout);
    if (arm) executionDeltas(execution, arm, rollout.step ?? 0, 1, deltas);
  }
  return deltas;
}

/** The attributes an execution's id marker carries when it is counted in a rollout with moments. */
export function markerCounted(execution: Execution, rollout: MomentRollout | null): Record<string, unknown> {
  if (!keepsMoments(rollout)) return {};
  const arm = armOf(execution, rollout);
  return arm ? { countedIn: rollout.id, arm, step: rollout.step ?? 0 } : {};
}

/** ADD clauses for the deltas, with placeholder names `#m<i>` and values `:m<i>` (DynamoDB's names may not hold dots). */
export function addClauses(deltas: Map<string, number>): {
  clauses: string[];
  names: Record<string, string>;
  values: Record<string, number>;
} {
  const clauses: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, number> = {};
  let i = 0;
  for (const [name, by] of deltas) {
    if (by === 0) continue;
    clauses.push(`#m${i} :m${i}`);
    names[`#m${i}`] = name;
    values[`:m${i}`] = by;
    i += 1;
  }
  return { clauses, names, values };
}

/** Where a marker says its execution was counted. */
export interface CountedMarker {
  recorded: boolean;
  countedIn?: string;
  arm?: CounterArm;
  step?: number;
  /** Signal values waiting for the execution (`p.<kind>.n|s|q`, for `pendingFor`). */
  pending: Record<string, number>;
  pendingFor?: string;
}

/** Reads the id markers of these executions (consistent), by execution id; absent ones are missing. */
export async function readMarkers(
  db: DynamoDBDocumentClient,
  tableName: string,
  pipelineId: string,
  executionIds: string[],
): Promise<Map<string, CountedMarker>> {
  const markers = new Map<string, CountedMarker>();
  let keys: Array<Record<string, unknown>> = [...new Set(executionIds)].map((id) => ({
    ...executionIdKey(pipelineId, id),
  }));
  for (let round = 0; keys.length > 0; round++) {
    if (round >= 5) throw new Error('DynamoDB left execution markers unread; try again later.');
    const { Responses, UnprocessedKeys } = await db.send(
      new BatchGetCommand({ RequestItems: { [tableName]: { Keys: keys, ConsistentRead: true } } }),
    );
    for (const item of Responses?.[tableName] ?? []) {
      const pending: Record<string, number> = {};
      for (const [name, value] of Object.entries(item))
        if (name.startsWith('p.')) pending[name] = Number(value);
      markers.set(String(item.sk), {
        recorded: typeof item.recordTime === 'string',
        ...(typeof item.countedIn === 'string' ? { countedIn: item.countedIn } : {}),
        ...(item.arm === 'b' || item.arm === 'c' ? { arm: item.arm } : {}),
        ...(typeof item.step === 'number' ? { step: item.step } : {}),
        pending,
        ...(typeof item.pendingFor === 'string' ? { pendingFor: item.pendingFor } : {}),
      });
    }
    keys = (UnprocessedKeys?.[tableName]?.Keys ?? []) as typeof keys;
    if (keys.length > 0) await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** round));
  }
  return markers;
}

/** The pending signal values a marker holds for this rollout, added to the execution's arm and step. */
export function pendingDeltas(
  marker: CountedMarker | undefined,
  rollout: MomentRollout,
  arm: CounterArm,
  into: Map<string, number>,
) {
  if (!marker || marker.pendingFor !== rollout.id) return;
  const kinds = guardedKinds(rollout);
  for (const kind of kinds) {
    const n = marker.pending[`p.${kind}.n`] ?? 0;
    if (n === 0) continue;
    const step = rollout.step ?? 0;
    const add = (part: string, by: number) => {
      const name = `${step}.${arm}.s.${kind}.${part}`;
      into.set(name, (into.get(name) ?? 0) + by);
    };
    add('n', n);
    add('s', marker.pending[`p.${kind}.s`] ?? 0);
    add('q', marker.pending[`p.${kind}.q`] ?? 0);
  }
}

/** The signals of a batch a rollout counts: citing an execution, of a guarded kind, with a value. */
export function guardedSignals(signals: Signal[], rollout: MomentRollout | null) {
  const kinds = guardedKinds(rollout);
  if (kinds.size === 0) return [];
  return signals.flatMap((signal) =>
    signal.executionId !== undefined && signal.value !== undefined && kinds.has(signal.kind)
      ? [{ executionId: signal.executionId, kind: signal.kind, value: signal.value }]
      : [],
  );
}

/**
 * A batch of signals' counts: those citing an execution counted in the rollout go to its arm and
 * step; those citing one not recorded yet wait on its marker (an ADD conditioned on the execution
 * still unrecorded: recorded meanwhile, the transaction fails and the batch is counted again).
 */
export function signalCounts(
  tableName: string,
  pipelineId: string,
  cited: ReturnType<typeof guardedSignals>,
  markers: Map<string, CountedMarker>,
  rollout: MomentRollout,
  expiresAtEpoch: number,
) {
  const counted = new Map<string, number>();
  const waiting = new Map<string, Map<string, number>>();
  for (const signal of cited) {
    const marker = markers.get(signal.executionId);
    if (marker?.recorded) {
      if (marker.countedIn === rollout.id && marker.arm)
        signalDeltas(signal.kind, signal.value, marker.arm, marker.step ?? 0, counted);
      continue;
    }
    const deltas = waiting.get(signal.executionId) ?? new Map<string, number>();
    deltas.set(`p.${signal.kind}.n`, (deltas.get(`p.${signal.kind}.n`) ?? 0) + 1);
    deltas.set(`p.${signal.kind}.s`, (deltas.get(`p.${signal.kind}.s`) ?? 0) + signal.value);
    deltas.set(`p.${signal.kind}.q`, (deltas.get(`p.${signal.kind}.q`) ?? 0) + signal.value * signal.value);
    waiting.set(signal.executionId, deltas);
  }
  const pending = [...waiting].map(([executionId, deltas]) => {
    const { clauses, names, values } = addClauses(deltas);
    return {
      Update: {
        TableName: tableName,
        Key: executionIdKey(pipelineId, executionId),
        UpdateExpression: `SET pendingFor = :rollout, expiresAtEpoch = if_not_exists(expiresAtEpoch, :ttl) ADD ${clauses.join(', ')}`,
        ConditionExpression:
          'attribute_not_exists(recordTime) AND (attribute_not_exists(pendingFor) OR pendingFor = :rollout)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ...values, ':rollout': rollout.id, ':ttl': expiresAtEpoch },
      },
    };
  });
  return { counted, pending };
}

/**
 * One update adding a batch's executions (and failures) of each arm to a shard of the rollout's
 * counts, with the guarded metrics' moments at the current step and any signals that waited.
 */
export function countsUpdate(
  tableName: string,
  executions: Execution[],
  rollout: MomentRollout,
  pending: Map<string, number>,
) {
  const counts = { base: 0, baseFailed: 0, candidate: 0, candidateFailed: 0 };
  for (const execution of executions) {
    const arm = armOf(execution, rollout);
    if (arm === null) continue;
    counts[arm === 'c' ? 'candidate' : 'base'] += 1;
    if (execution.status === 'failed') counts[arm === 'b' ? 'baseFailed' : 'candidateFailed'] += 1;
  }
  const first = executions[0];
  if (!first || counts.base + counts.candidate === 0) return null;
  const deltas = batchDeltas(executions, rollout);
  for (const [name, by] of pending) deltas.set(name, (deltas.get(name) ?? 0) + by);
  return momentsUpdate(tableName, first.pipelineId, rollout.id, recordShard(first.id), deltas, counts);
}

/** The ADD of counts and moments to one shard of a rollout's counters; null when nothing is added. */
export function momentsUpdate(
  tableName: string,
  pipelineId: string,
  rolloutId: string,
  shard: number,
  deltas: Map<string, number>,
  counts: { base: number; baseFailed: number; candidate: number; candidateFailed: number } | null,
) {
  const moments = addClauses(deltas);
  const countClauses = counts
    ? ['#base :base', 'baseFailed :baseFailed', 'candidate :candidate', 'candidateFailed :candidateFailed']
    : [];
  if (countClauses.length + moments.clauses.length === 0) return null;
  return {
    Update: {
      TableName: tableName,
      Key: rolloutCountsKey(pipelineId, rolloutId, shard),
      UpdateExpression: `ADD ${[...countClauses, ...moments.clauses].join(', ')}`,
      // `base` is a reserved word of DynamoDB's expressions.
      ExpressionAttributeNames: { ...(counts ? { '#base': 'base' } : {}), ...moments.names },
      ExpressionAttributeValues: {
        ...(counts
          ? {
              ':base': counts.base,
              ':baseFailed': counts.baseFailed,
              ':candidate': counts.candidate,
              ':candidateFailed': counts.candidateFailed,
            }
          : {}),
        ...moments.values,
      },
    },
  };
}

/**
 * How a record's id marker is claimed: `put` (no rollout guards a signal); `putUnlessWaiting`, a
 * Put refused where a signal waits on the marker (the common case during a rollout guarding a
 * signal: nothing waits, so nothing need be read back); `update`, which keeps what waits on it.
 */
export type ClaimMode = 'put' | 'putUnlessWaiting' | 'update';

/**
 * The claim of a record's id marker: a Put, or an Update that keeps the signals waiting on the
 * marker for their execution (counted as it is recorded).
 */
export function claimItem(tableName: string, idMarker: ItemKey, recordTime: string, mode: ClaimMode) {
  if (mode !== 'update') {
    return {
      Put: {
        TableName: tableName,
        Item: { ...idMarker, recordTime },
        ConditionExpression:
          mode === 'put'
            ? 'attribute_not_exists(pk) OR recordTime = :time'
            : '(attribute_not_exists(pk) OR recordTime = :time) AND attribute_not_exists(pendingFor)',
        ExpressionAttributeValues: { ':time': recordTime },
      },
    };
  }
  const { pk, sk, ...fields } = idMarker as ItemKey & Record<string, unknown>;
  const all = Object.entries({ ...fields, recordTime });
  return {
    Update: {
      TableName: tableName,
      Key: { pk, sk },
      UpdateExpression: `SET ${all.map((_, i) => `#f${i} = :f${i}`).join(', ')}`,
      ConditionExpression: 'attribute_not_exists(recordTime) OR recordTime = :time',
      ExpressionAttributeNames: Object.fromEntries(all.map(([name], i) => [`#f${i}`, name])),
      ExpressionAttributeValues: {
        ...Object.fromEntries(all.map(([, value], i) => [`:f${i}`, value])),
        ':time': recordTime,
      },
    },
  };
}
