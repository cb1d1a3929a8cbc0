/*
 * The retention job's side of the data table: which teams shortened a window, their pipelines (the
 * gsi1 team index), and removing the signals and executions (with their id markers) older than a
 * window with key-range Queries and batched deletes. No Scan: every read is one partition's range.
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { RetentionStore, RetentionWindow } from '../core/lifecycle.ts';
import { deleteKeys } from './batch-delete.ts';
import { isConditionFailure } from './conditions.ts';
import {
  executionIdKey,
  executionsPartition,
  type ItemKey,
  RECORD_SOURCES,
  RETENTION_DUE_PARTITION,
  retentionDueKey,
  signalIdKey,
  signalsPartition,
  teamPipelinesPartition,
} from './keys.ts';
import { SERIES_PARTITIONS } from './series-keys.ts';

/** Items read and deleted per round of one partition. */
const ROUND = 500;

/** The time-ordered partitions of a pipeline (every shard, the legacy one too), each with its id markers. */
const PARTITIONS: Array<{
  partition: (pipelineId: string) => string;
  since: (window: RetentionWindow) => string;
  marker?: (pipelineId: string, id: string) => ItemKey;
}> = RECORD_SOURCES.flatMap((shard) => [
  {
    partition: (pipelineId: string) => signalsPartition(pipelineId, shard),
    since: (window: RetentionWindow) => window.signalsSince,
    marker: (pipelineId: string, id: string) => signalIdKey(pipelineId, id, shard === null),
  },
  {
    partition: (pipelineId: string) => executionsPartition(pipelineId, shard),
    since: (window: RetentionWindow) => window.executionsSince,
    marker: (pipelineId: string, id: string) => executionIdKey(pipelineId, id, shard === null),
  },
]);
// The series (sort keys start with the bucket's or the period's time), kept as long as the longer window.
for (const partition of SERIES_PARTITIONS) {
  PARTITIONS.push({
    partition,
    since: (window) =>
      window.signalsSince < window.executionsSince ? window.signalsSince : window.executionsSince,
  });
}

/** DynamoDB adapter of RetentionStore. */
export function makeRetentionStore(db: DynamoDBDocumentClient, tableName: string): RetentionStore {
  return {
    async dueTeams(limit) {
      const { Items = [] } = await db.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :pk',
          ExpressionAttributeValues: { ':pk': RETENTION_DUE_PARTITION },
          Limit: limit,
        }),
      );
      return Items.map((item) => ({
        teamId: String(item.teamId),
        requestedAt: String(item.requestedAt),
        pipelineCursor: typeof item.pipelineCursor === 'string' ? item.pipelineCursor : null,
      }));
    },

    async teamPipelines(teamId, cursor, limit) {
      const { Items = [], LastEvaluatedKey } = await db.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: 'gsi1',
          KeyConditionExpression: cursor === null ? 'gsi1pk = :pk' : 'gsi1pk = :pk AND gsi1sk > :after',
          ExpressionAttributeValues: {
            ':pk': teamPipelinesPartition(teamId),
            ...(cursor === null ? {} : { ':after': cursor }),
          },
          ProjectionExpression: 'id, gsi1sk',
          Limit: limit,
        }),
      );
      return {
        pipelines: Items.map((item) => ({ id: String(item.id), cursor: String(item.gsi1sk) })),
        more: LastEvaluatedKey !== undefined,
      };
    },

    async removeOlder(pipelineId, window, shouldStop) {
      let removed = 0;
      for (const { partition, since, marker } of PARTITIONS) {
        for (;;) {
          if (shouldStop()) return { removed, finished: false };
          // Always from the partition's start: what was deleted is gone, so no cursor is needed.
          const { Items = [] } = await db.send(
            new QueryCommand({
              TableName: tableName,
              KeyConditionExpression: 'pk = :pk AND sk < :before',
              ExpressionAttributeValues: { ':pk': partition(pipelineId), ':before': since(window) },
              ProjectionExpression: 'pk, sk, id',
              Limit: ROUND,
            }),
          );
          if (Items.length === 0) break;
          await deleteKeys(db, tableName, [
            ...Items.map((item) => ({ pk: item.pk, sk: item.sk })),
            ...(marker ? Items.map((item) => marker(pipelineId, String(item.id))) : []),
          ]);
          removed += Items.length;
        }
      }
      return { removed, finished: true };
    },

    async checkpoint(team, pipelineCursor) {
      try {
        await db.send(
          new UpdateCommand({
            TableName: tableName,
            Key: retentionDueKey(team.teamId),
            UpdateExpression: 'SET pipelineCursor = :cursor',
            ConditionExpression: 'requestedAt = :requestedAt',
            ExpressionAttributeValues: { ':cursor': pipelineCursor, ':requestedAt': team.requestedAt },
          }),
        );
      } catch (error) {
        // Shortened again meanwhile: the new mark starts over from the first pipeline.
        if (!isConditionFailure(error)) throw error;
      }
    },

    async finish(team) {
      try {
        await db.send(
          new DeleteCommand({
            TableName: tableName,
            Key: retentionDueKey(team.teamId),
            ConditionExpression: 'requestedAt = :requestedAt',
            ExpressionAttributeValues: { ':requestedAt': team.requestedAt },
          }),
        );
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    },
  };
}
