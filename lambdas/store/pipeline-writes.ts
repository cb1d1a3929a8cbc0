/*
 * The data-table items a pipeline's transactions share: a configuration, an activation, the serving
 * item and the team's serving version, the guarded move of the active configuration, and the
 * pipeline's version counter. The pipeline, run and rollout stores write them in their own transactions.
 */
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { NotFoundError } from '../core/errors.ts';
import type { Activation, Configuration, ServingState } from '../core/schemas/pipelines.ts';
import { contendedTransactionItems, failedTransactionItems, isConditionFailure } from './conditions.ts';
import { activationKey, configurationKey, pipelineKey, servingKey } from './keys.ts';
import { teamServingVersionKey } from './team-serving.ts';

export function configurationItem(configuration: Configuration) {
  return { ...configurationKey(configuration.pipelineId, configuration.id), ...configuration };
}

export function activationItem(activation: Activation) {
  return { ...activationKey(activation), ...activation };
}

/**
 * The transaction item that rewrites the serving item: the state as one JSON string (`state`), the
 * read model of the customer's hot path, read whole and never queried by attribute, so DynamoDB
 * and the SDK handle one string instead of two nested configurations. A state too large for one
 * item (two configurations near their size limit) is stored without it: serving then reads them.
 */
export function servingPut(tableName: string, serving: ServingState) {
  const state = JSON.stringify(serving);
  const whole = state.length <= SERVING_ITEM_BYTES;
  return {
    Put: {
      TableName: tableName,
      Item: {
        ...servingKey(serving.pipelineId),
        pipelineId: serving.pipelineId,
        ...(whole ? { state } : { oversized: true }),
      },
    },
  };
}

/**
 * The transaction item that bumps the team's serving version (and stamps when): every transaction
 * that changes what a pipeline of the team serves, or which pipelines it has, writes it, so the
 * bulk evaluation's 304 reads this one item (use-cases/ofrep.ts). Created by the first bump.
 */
export function servingVersionBump(tableName: string, teamId: string) {
  return {
    Update: {
      TableName: tableName,
      Key: teamServingVersionKey(teamId),
      UpdateExpression: 'ADD version :one SET changedAt = :now',
      ExpressionAttributeValues: { ':one': 1, ':now': Date.now() },
    },
  };
}

/**
 * Sends a transaction that bumps a team's serving version, again when DynamoDB cancelled it only
 * because another transaction of the team was writing the version item at that moment (changes to
 * two pipelines of one team at once must both succeed, as they did before the version existed).
 */
export async function sendContendedAgain<T>(send: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      const contended =
        contendedTransactionItems(error).length > 0 && failedTransactionItems(error).length === 0;
      if (!contended || attempt >= CONTENDED_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
    }
  }
}

const CONTENDED_ATTEMPTS = 4;

/** Above this, a serving state is not kept whole (an item holds 400 KB). */
const SERVING_ITEM_BYTES = 300_000;

/** The condition (with `#rollout` and `:none`) that the pipeline item has no active rollout. */
export const NO_ACTIVE_ROLLOUT = '(attribute_not_exists(#rollout) OR #rollout = :none)';

/** The transaction item that moves a pipeline's active configuration, guarded by what it was. */
export function activatePipelineUpdate(tableName: string, activation: Activation) {
  return {
    Update: {
      TableName: tableName,
      Key: pipelineKey(activation.pipelineId),
      UpdateExpression: 'SET activeConfigurationId = :next',
      // No rollout may be running: its base would no longer be what the other arm serves.
      ConditionExpression: `activeConfigurationId = :previous AND ${NO_ACTIVE_ROLLOUT} AND attribute_not_exists(deletedAt)`,
      ExpressionAttributeNames: { '#rollout': 'rollout' },
      ExpressionAttributeValues: {
        ':next': activation.configurationId,
        ':previous': activation.previousConfigurationId,
        ':none': null,
      },
    },
  };
}

/**
 * The pipeline's next configuration version: one atomic increment (a completed run's proposal, an
 * approval's partial or rebased configuration), no read-compare-retry, so a hundred runs of one
 * pipeline finishing at once each get their own version at the first try. A number taken by a completion
 * that then loses its lease is skipped: versions are unique, not gapless.
 */
export async function nextConfigurationVersion(
  db: DynamoDBDocumentClient,
  dataTable: string,
  pipelineId: string,
): Promise<number> {
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: dataTable,
        Key: pipelineKey(pipelineId),
        UpdateExpression:
          'SET latestConfigurationVersion = if_not_exists(latestConfigurationVersion, :one) + :one',
        // A pipeline whose deletion was requested takes no new configuration.
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deletedAt)',
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(Attributes?.latestConfigurationVersion);
  } catch (error) {
    if (isConditionFailure(error)) throw new NotFoundError(`Pipeline ${pipelineId} no longer exists.`);
    throw error;
  }
}
