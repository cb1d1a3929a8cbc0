/*
 * A rollout's move to its next step (the pipeline item's copy, the rollout item, serving and the
 * rollout.stepped event in one transaction), and its judgements over time (one item beside its
 * counters, store/keys.ts rolloutCountsKey with sk `<rolloutId>#history`, removed with them).
 */

import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../core/errors.ts';
import type { JudgementPoint, RolloutStep } from '../core/ports/rollouts.ts';
import type { Rollout } from '../core/schemas/rollouts.ts';
import { storable } from '../core/schemas/storable.ts';
import { contendedTransactionItems, failedTransactionItems } from './conditions.ts';
import { eventPut } from './events.ts';
import { pipelineKey, rolloutCountsPartition, rolloutKey } from './keys.ts';
import { sendContendedAgain, servingPut, servingVersionBump } from './pipeline-writes.ts';

/** At most this many judgements are kept a rollout: beyond, every other older one is dropped. */
export const JUDGEMENT_HISTORY_LIMIT = 240;

export async function stepRollout(
  db: DynamoDBDocumentClient,
  tables: { tableName: string; eventsTable: string | undefined },
  rollout: Rollout,
  next: RolloutStep,
): Promise<Rollout> {
  const { tableName, eventsTable } = tables;
  if (!eventsTable) throw new Error('The rollout repository was built without the events table.');
  const from = rollout.step ?? 0;
  const values = {
    ':percent': next.percent,
    ':step': next.step,
    ':at': next.at,
    ':from': from,
    ':id': rollout.id,
  };
  try {
    await sendContendedAgain(() =>
      db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: tableName,
                Key: pipelineKey(rollout.pipelineId),
                UpdateExpression: 'SET #r.#p = :percent, #r.#s = :step, #r.stepStartedAt = :at',
                ConditionExpression: '#r.#id = :id AND #r.#s = :from AND attribute_not_exists(deletedAt)',
                ExpressionAttributeNames: { '#r': 'rollout', '#id': 'id', '#p': 'percent', '#s': 'step' },
                ExpressionAttributeValues: values,
              },
            },
            {
              Update: {
                TableName: tableName,
                Key: rolloutKey(rollout),
                UpdateExpression: 'SET #p = :percent, #s = :step, stepStartedAt = :at',
                ConditionExpression: '#status = :active AND #s = :from AND #id = :id',
                ExpressionAttributeNames: { '#status': 'status', '#p': 'percent', '#s': 'step', '#id': 'id' },
                ExpressionAttributeValues: { ...values, ':active': 'active' },
              },
            },
            servingPut(tableName, next.serving),
            ...next.events.map((event) => eventPut(eventsTable, event)),
            servingVersionBump(tableName, next.serving.teamId),
          ],
        }),
      ),
    );
  } catch (error) {
    if (failedTransactionItems(error).length > 0 || contendedTransactionItems(error).length > 0) {
      throw new ConflictError(
        `Rollout ${rollout.id} is no longer at step ${from + 1}: it moved or ended meanwhile. Reload it.`,
        { cause: error },
      );
    }
    throw error;
  }
  return { ...rollout, percent: next.percent, step: next.step, stepStartedAt: next.at };
}

const historyKey = (pipelineId: string, rolloutId: string) => ({
  pk: rolloutCountsPartition(pipelineId, 0),
  sk: `${rolloutId}#history`,
});

function parsePoint(value: unknown): JudgementPoint | null {
  if (typeof value !== 'object' || value === null) return null;
  const point = value as Record<string, unknown>;
  if (typeof point.at !== 'string' || typeof point.n !== 'number' || !Array.isArray(point.metrics))
    return null;
  const metrics = point.metrics.map((metric) => {
    const m = metric as { difference?: unknown; interval?: unknown; worseBound?: unknown } | null;
    if (!m || typeof m.difference !== 'number' || !Array.isArray(m.interval)) return null;
    const [low, high] = m.interval;
    return typeof low === 'number' && typeof high === 'number'
      ? {
          difference: m.difference,
          interval: [low, high] as [number, number],
          ...(typeof m.worseBound === 'number' ? { worseBound: m.worseBound } : {}),
        }
      : null;
  });
  return { at: point.at, n: point.n, step: typeof point.step === 'number' ? point.step : 0, metrics };
}

export async function judgementHistory(
  db: DynamoDBDocumentClient,
  tableName: string,
  pipelineId: string,
  rolloutId: string,
): Promise<JudgementPoint[]> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: historyKey(pipelineId, rolloutId) }),
  );
  const points = Array.isArray(Item?.points) ? Item.points : [];
  return points.flatMap((point) => parsePoint(point) ?? []);
}

/** Every other point of the older half dropped once past the limit: the chart keeps its shape. */
export function thinned(points: JudgementPoint[]): JudgementPoint[] {
  if (points.length <= JUDGEMENT_HISTORY_LIMIT) return points;
  const half = Math.floor(points.length / 2);
  return [...points.slice(0, half).filter((_, i) => i % 2 === 0), ...points.slice(half)];
}

export async function keepJudgementHistory(
  db: DynamoDBDocumentClient,
  tableName: string,
  pipelineId: string,
  rolloutId: string,
  points: JudgementPoint[],
): Promise<void> {
  await db.send(
    new PutCommand({
      TableName: tableName,
      Item: { ...historyKey(pipelineId, rolloutId), points: storable(thinned(points)) },
    }),
  );
}
