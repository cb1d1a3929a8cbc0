/*
 * A pipeline's approval rules: one item in the pipeline's partition of the data table
 * (keys: store/keys.ts); a pipeline without the item has the defaults.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import type { ApprovalRulesStore } from '../core/ports.ts';
import { storedApprovalRulesSchema } from '../core/schemas.ts';
import { eventPut } from './events.ts';
import { itemReader } from './items.ts';
import { approvalRulesKey } from './keys.ts';

/** DynamoDB adapter of ApprovalRulesStore. */
export function makeApprovalRulesStore(
  db: DynamoDBDocumentClient,
  tableName: string,
  /** The outbox: approval_rules.updated is written there with the rules. */
  eventsTable?: string,
): ApprovalRulesStore {
  const read = itemReader(storedApprovalRulesSchema, 'approval rules');
  return {
    async get(pipelineId) {
      const { Item } = await db.send(
        new GetCommand({ TableName: tableName, Key: approvalRulesKey(pipelineId), ConsistentRead: true }),
      );
      return Item ? read(Item) : null;
    },
    async put(rules, event) {
      const put = { TableName: tableName, Item: { ...approvalRulesKey(rules.pipelineId), ...rules } };
      if (!event) {
        await db.send(new PutCommand(put));
        return;
      }
      if (!eventsTable) throw new Error('The approval rules store was built without the events table.');
      await db.send(
        new TransactWriteCommand({ TransactItems: [{ Put: put }, eventPut(eventsTable, event)] }),
      );
    },
  };
}
