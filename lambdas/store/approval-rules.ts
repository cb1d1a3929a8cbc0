/*
 * A pipeline's approval rules: one item in the settings table (keys: store/keys.ts); a pipeline
 * without the item has the defaults. A change is one Put of the item carrying its event, which the
 * settings table's stream relays into the events table (store/events.ts). Versions before the
 * settings table kept the item in the data table under the same key: it is read beside the
 * settings item and used when there is none, so an upgrade never loosens a pipeline's rules.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ApprovalRulesStore } from '../core/ports/review.ts';
import { storedApprovalRulesSchema } from '../core/schemas/review.ts';
import { CARRIED_EVENT_ATTRIBUTE, carriedEventValue } from './events.ts';
import { itemReader } from './items.ts';
import { approvalRulesKey } from './keys.ts';

/** DynamoDB adapter of ApprovalRulesStore, on the settings table. */
export function makeApprovalRulesStore(
  db: DynamoDBDocumentClient,
  settingsTable: string,
  /** The data table, where versions before the settings table stored the rules. */
  legacyTable?: string,
): ApprovalRulesStore {
  const read = itemReader(storedApprovalRulesSchema, 'approval rules');
  const itemIn = async (tableName: string, pipelineId: string) =>
    (
      await db.send(
        new GetCommand({ TableName: tableName, Key: approvalRulesKey(pipelineId), ConsistentRead: true }),
      )
    ).Item;
  return {
    async get(pipelineId) {
      const [current, legacy] = await Promise.all([
        itemIn(settingsTable, pipelineId),
        legacyTable ? itemIn(legacyTable, pipelineId) : undefined,
      ]);
      const item = current ?? legacy;
      return item ? read(item) : null;
    },
    async put(rules, event) {
      await db.send(
        new PutCommand({
          TableName: settingsTable,
          Item: {
            ...approvalRulesKey(rules.pipelineId),
            ...rules,
            // approval_rules.updated, in the same one-item write as the rules it records.
            ...(event ? { [CARRIED_EVENT_ATTRIBUTE]: carriedEventValue(event) } : {}),
          },
        }),
      );
    },
  };
}
