/*
 * A pipeline's approval rules: one item in the pipeline's partition of the data table
 * (keys: store/keys.ts); a pipeline without the item has the defaults.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ApprovalRulesStore } from '../core/ports.ts';
import { storedApprovalRulesSchema } from '../core/schemas.ts';
import { itemReader } from './items.ts';
import { approvalRulesKey } from './keys.ts';

/** DynamoDB adapter of ApprovalRulesStore. */
export function makeApprovalRulesStore(db: DynamoDBDocumentClient, tableName: string): ApprovalRulesStore {
  const read = itemReader(storedApprovalRulesSchema, 'approval rules');
  return {
    async get(pipelineId) {
      const { Item } = await db.send(
        new GetCommand({ TableName: tableName, Key: approvalRulesKey(pipelineId), ConsistentRead: true }),
      );
      return Item ? read(Item) : null;
    },
    async put(rules) {
      await db.send(
        new PutCommand({ TableName: tableName, Item: { ...approvalRulesKey(rules.pipelineId), ...rules } }),
      );
    },
  };
}
