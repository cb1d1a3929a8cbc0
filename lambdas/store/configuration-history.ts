/*
 * What a pipeline's history says of one of its configurations (keys: store/keys.ts): whether an
 * activation ever made it active or replaced it, and the latest rollback of it as a candidate.
 * Queries of the pipeline's own partition, by sort-key prefix, filtered; no Scan.
 */
import { type DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { ConfigurationHistory } from '../core/ports/pipelines.ts';
import { rolloutSchema } from '../core/schemas/rollouts.ts';
import { itemReader } from './items.ts';
import { ACTIVATION_PREFIX, pipelinePartition, ROLLOUT_PREFIX } from './keys.ts';

/** The first item of a filtered Query, following its pages (a filter may leave a page empty). */
async function firstMatch(
  db: DynamoDBDocumentClient,
  input: Omit<QueryCommandInput, 'ExclusiveStartKey'>,
): Promise<Record<string, unknown> | undefined> {
  let start: Record<string, unknown> | undefined;
  do {
    const { Items = [], LastEvaluatedKey } = await db.send(
      new QueryCommand({ ...input, ...(start ? { ExclusiveStartKey: start } : {}) }),
    );
    if (Items.length > 0) return Items[0];
    start = LastEvaluatedKey;
  } while (start);
  return undefined;
}

const readRollout = /* @__PURE__ */ itemReader(rolloutSchema, 'rollout');

/** The configuration's history in the pipeline: two Queries of its partition, at once. */
export async function configurationHistory(
  db: DynamoDBDocumentClient,
  tableName: string,
  pipelineId: string,
  configurationId: string,
): Promise<ConfigurationHistory> {
  const keyCondition = 'pk = :pk AND begins_with(sk, :prefix)';
  const [activation, rollback] = await Promise.all([
    // The first configuration was active from the pipeline's creation: the activation that
    // replaced it names it as previousConfigurationId.
    firstMatch(db, {
      TableName: tableName,
      KeyConditionExpression: keyCondition,
      FilterExpression: 'configurationId = :id OR previousConfigurationId = :id',
      ExpressionAttributeValues: {
        ':pk': pipelinePartition(pipelineId),
        ':prefix': ACTIVATION_PREFIX,
        ':id': configurationId,
      },
      ProjectionExpression: 'sk',
    }),
    firstMatch(db, {
      TableName: tableName,
      KeyConditionExpression: keyCondition,
      FilterExpression: 'candidateConfigurationId = :id AND #status = :rolledBack',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':pk': pipelinePartition(pipelineId),
        ':prefix': ROLLOUT_PREFIX,
        ':id': configurationId,
        ':rolledBack': 'rolled_back',
      },
      ScanIndexForward: false,
    }),
  ]);
  return { wasActive: activation !== undefined, rolledBack: rollback ? readRollout(rollback) : null };
}
