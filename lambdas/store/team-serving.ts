/*
 * A team's serving at once, for OpenFeature's bulk evaluation: the team's serving version (one
 * GetItem), the team's pipelines from its index (one Query), then their serving items (one BatchGet per 100).
 */
import { BatchGetCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import type { TeamServing } from '../core/ports/team-serving.ts';
import { idSchema } from '../core/schemas/common.ts';
import { type ServingState, servingStateSchema } from '../core/schemas/pipelines.ts';
import { isConditionFailure } from './conditions.ts';
import { itemReader } from './items.ts';
import { type ItemKey, servingKey, teamPipelinesPartition } from './keys.ts';
import { queryNewest } from './query-page.ts';

const BATCH_GET_KEYS = 100;
/** A team's serving version: bumped by every transaction that changes what the team's pipelines serve. */
export const teamServingVersionKey = (teamId: string): ItemKey => ({
  pk: `TEAM#${teamId}#SERVING`,
  sk: 'VERSION',
});
/** The attributes of a serving version item, all that the evaluation may write (lib/service-function.ts). */
export const SERVING_VERSION_ATTRIBUTES = ['pk', 'sk', 'version', 'changedAt'] as const;
/** The part of a pipeline item routing reads (the Query projects nothing else). */
const readTeamPipeline = /* @__PURE__ */ itemReader(
  /* @__PURE__ */ z.object({
    id: idSchema,
    activeConfigurationId: idSchema,
    rollout: /* @__PURE__ */ z.optional(
      /* @__PURE__ */ z.nullable(
        /* @__PURE__ */ z.object({
          id: idSchema,
          percent: /* @__PURE__ */ z.number(),
          candidateConfigurationId: idSchema,
        }),
      ),
    ),
  }),
  'pipeline',
);
const readServingVersion = /* @__PURE__ */ itemReader(
  /* @__PURE__ */ z.object({ version: /* @__PURE__ */ z.number(), changedAt: /* @__PURE__ */ z.number() }),
  'serving version',
);
const readServingState = /* @__PURE__ */ itemReader(servingStateSchema, 'serving state');

/** The serving item's state; none when it was too large to keep whole (serving then reads the parts). */
function stateOf(item: Record<string, unknown>): ServingState | undefined {
  if (typeof item.state !== 'string') return undefined;
  return readServingState(JSON.parse(item.state));
}

async function batchGetStates(
  db: DynamoDBDocumentClient,
  tableName: string,
  pipelineIds: readonly string[],
): Promise<ServingState[]> {
  const found: ServingState[] = [];
  let keys: Record<string, unknown>[] = pipelineIds.map((id) => ({ ...servingKey(id) }));
  for (let round = 0; keys.length > 0 && round < 8; round++) {
    const { Responses, UnprocessedKeys } = await db.send(
      new BatchGetCommand({ RequestItems: { [tableName]: { Keys: keys } } }),
    );
    for (const item of Responses?.[tableName] ?? []) {
      const state = stateOf(item);
      if (state) found.push(state);
    }
    keys = UnprocessedKeys?.[tableName]?.Keys ?? [];
  }
  if (keys.length > 0) throw new Error('DynamoDB left serving items unread; try again later.');
  return found;
}

export function makeTeamServing(db: DynamoDBDocumentClient, tableName: string): TeamServing {
  return {
    async servingVersion(teamId) {
      const { Item } = await db.send(
        new GetCommand({
          TableName: tableName,
          Key: teamServingVersionKey(teamId),
          // A change committed before this read must be seen: an older version would answer 304 for it.
          ConsistentRead: true,
          ProjectionExpression: 'version, changedAt',
        }),
      );
      return Item ? readServingVersion(Item) : null;
    },

    async startServingVersion(teamId, at) {
      try {
        await db.send(
          new PutCommand({
            TableName: tableName,
            Item: { ...teamServingVersionKey(teamId), version: 0, changedAt: at },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    },

    async teamPipelines(teamId, limit) {
      const pipelines = await queryNewest(
        db,
        {
          TableName: tableName,
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :pk',
          ExpressionAttributeValues: { ':pk': teamPipelinesPartition(teamId) },
          ProjectionExpression:
            '#id, activeConfigurationId, #r.#id, #r.#percent, #r.candidateConfigurationId',
          ExpressionAttributeNames: { '#id': 'id', '#r': 'rollout', '#percent': 'percent' },
        },
        limit,
        readTeamPipeline,
      );
      return pipelines.map((pipeline) => ({ ...pipeline, rollout: pipeline.rollout ?? null }));
    },

    async servingStates(pipelineIds) {
      const chunks: string[][] = [];
      for (let start = 0; start < pipelineIds.length; start += BATCH_GET_KEYS)
        chunks.push(pipelineIds.slice(start, start + BATCH_GET_KEYS));
      const states = (await Promise.all(chunks.map((ids) => batchGetStates(db, tableName, ids)))).flat();
      return new Map(states.map((state) => [state.pipelineId, state]));
    },
  };
}
