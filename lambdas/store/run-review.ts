/*
 * The reviewer's side of the run store: approving a generated run (which activates its proposal)
 * and rejecting one, each allowed only from the statuses the run state table names.
 */
import { type DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../core/errors.ts';
import type { RunRepository } from '../core/ports.ts';
import { statusesAllowedBefore } from '../core/run-state.ts';
import type { SynthesisRun } from '../core/schemas.ts';
import { failedTransactionItems, putNew } from './conditions.ts';
import { eventPut } from './events.ts';
import { runKey } from './keys.ts';
import { activatePipelineUpdate, activationItem } from './pipelines.ts';
import { currentRun, dataTableOf, eventsTableOf, moveCondition, type RunTables } from './run-table.ts';

export type RunReviewStore = Pick<RunRepository, 'approve' | 'reject'>;

/** DynamoDB adapter of the reviewer's part of RunRepository. */
export function makeRunReviewStore(db: DynamoDBDocumentClient, tables: RunTables): RunReviewStore {
  /** The 409 for a decision the state table forbids: it names the status the run is in. */
  async function notDecidable(runId: string, wanted: 'approved' | 'rejected'): Promise<ConflictError> {
    const status = (await currentRun(db, tables, runId))?.status ?? 'missing';
    const allowed = statusesAllowedBefore(wanted).join(' or ');
    return new ConflictError(`The run is ${status}; only a ${allowed} run can be ${wanted}.`);
  }

  return {
    async approve(run, decision, activation, events) {
      const dataTable = dataTableOf(tables);
      const eventsTable = eventsTableOf(tables);
      const approved: SynthesisRun = {
        ...run,
        status: 'approved',
        approvedAt: decision.at,
        approvedBy: decision.by,
      };
      const move = moveCondition('approved');
      try {
        await db.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: tables.runs,
                  Key: runKey(run.id),
                  UpdateExpression: 'SET #status = :to, approvedAt = :at, approvedBy = :by',
                  ConditionExpression: move.expression,
                  ExpressionAttributeNames: move.names,
                  ExpressionAttributeValues: {
                    ...move.values,
                    ':to': 'approved',
                    ':at': decision.at,
                    ':by': decision.by,
                  },
                },
              },
              activatePipelineUpdate(dataTable, activation),
              putNew(dataTable, activationItem(activation)),
              ...events.map((event) => eventPut(eventsTable, event)),
            ],
          }),
        );
        return approved;
      } catch (error) {
        const failed = failedTransactionItems(error);
        if (failed.includes(0)) throw await notDecidable(run.id, 'approved');
        if (failed.includes(1)) {
          throw new ConflictError(
            `The pipeline's active configuration is no longer ${run.baseConfigurationId}, the base of this run; ` +
              'nothing was changed. Start a new synthesis run on the current configuration.',
          );
        }
        throw error;
      }
    },

    async reject(run, decision, event) {
      const move = moveCondition('rejected');
      try {
        await db.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: tables.runs,
                  Key: runKey(run.id),
                  UpdateExpression:
                    'SET #status = :to, rejectedAt = :at, rejectedBy = :by, rejectionReason = :reason',
                  ConditionExpression: move.expression,
                  ExpressionAttributeNames: move.names,
                  ExpressionAttributeValues: {
                    ...move.values,
                    ':to': 'rejected',
                    ':at': decision.at,
                    ':by': decision.by,
                    ':reason': decision.reason,
                  },
                },
              },
              eventPut(eventsTableOf(tables), event),
            ],
          }),
        );
      } catch (error) {
        if (failedTransactionItems(error).includes(0)) throw await notDecidable(run.id, 'rejected');
        throw error;
      }
      // The run as the transaction left it: a transaction returns no item, and the condition held.
      return {
        ...run,
        status: 'rejected',
        rejectedAt: decision.at,
        rejectedBy: decision.by,
        rejectionReason: decision.reason,
      };
    },
  };
}
