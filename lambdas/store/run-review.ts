/*
 * The reviewer's side of the run store: approving a generated run (which activates its proposal)
 * and rejecting one, each allowed only from the statuses the run state table names.
 */
import { type DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../core/errors.ts';
import type { ApprovalPlan } from '../core/ports/review.ts';
import type { RunRepository } from '../core/ports/runs.ts';
import { statusesAllowedBefore } from '../core/run-state.ts';
import type { SynthesisRun } from '../core/schemas/runs.ts';
import { contendedTransactionItems, failedTransactionItems, isConditionFailure } from './conditions.ts';
import { carryingEvent, eventPut } from './events.ts';
import { runKey } from './keys.ts';
import { sendContendedAgain } from './pipeline-writes.ts';
import { approvalDataItems } from './rollouts.ts';
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
    async approve(run, decision, plan, events) {
      const dataTable = dataTableOf(tables);
      const eventsTable = eventsTableOf(tables);
      try {
        await sendContendedAgain(() =>
          db.send(
            new TransactWriteCommand({
              TransactItems: [
                runApprovalUpdate(tables.runs, run, decision, plan),
                ...approvalDataItems(dataTable, plan),
                ...events.map((event) => eventPut(eventsTable, event)),
              ],
            }),
          ),
        );
      } catch (error) {
        const failed = failedTransactionItems(error);
        if (failed.includes(0)) throw await notDecidable(run.id, 'approved');
        if (failed.includes(1)) {
          throw new ConflictError(
            `The pipeline's active configuration moved, or a rollout started, while this approval was made (the run's base is ${run.baseConfigurationId}); ` +
              'nothing was changed. Reload the pipeline and approve again (with "rebase": true if the base is no longer active).',
            { cause: error },
          );
        }
        if (contendedTransactionItems(error).length > 0) {
          throw new ConflictError(
            'Another approval or activation of this pipeline was being written at the same moment; nothing was changed. Reload and retry.',
            { cause: error },
          );
        }
        throw error;
      }
      return {
        ...run,
        status: 'approved',
        approvedAt: decision.at,
        approvedBy: decision.by,
        ...(decision.overrideReason ? { approvalOverrideReason: decision.overrideReason } : {}),
        approvedChangeIds: plan.approvedChangeIds,
        appliedConfigurationId: plan.appliedConfigurationId,
        rolloutId: plan.rollout?.id ?? null,
      };
    },

    async reject(run, decision, event) {
      const move = moveCondition('rejected');
      try {
        // One item changes, so one UpdateItem writes the change and carries its event (relayed
        // into the outbox from the runs table's stream): as atomic as a transaction, cheaper.
        await db.send(
          new UpdateCommand(
            carryingEvent(
              {
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
              event,
            ),
          ),
        );
      } catch (error) {
        if (isConditionFailure(error)) throw await notDecidable(run.id, 'rejected');
        throw error;
      }
      // The run as the update left it: the condition held.
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

/** The run item's part of an approval: approved, by whom, with what, if the state table allows it. */
function runApprovalUpdate(
  runsTable: string,
  run: SynthesisRun,
  decision: { at: string; by: string; overrideReason?: string | null },
  plan: ApprovalPlan,
) {
  const move = moveCondition('approved');
  return {
    Update: {
      TableName: runsTable,
      Key: runKey(run.id),
      UpdateExpression:
        'SET #status = :to, approvedAt = :at, approvedBy = :by, approvedChangeIds = :changes, ' +
        `appliedConfigurationId = :applied, rolloutId = :rollout${decision.overrideReason ? ', approvalOverrideReason = :override' : ''}`,
      ConditionExpression: move.expression,
      ExpressionAttributeNames: move.names,
      ExpressionAttributeValues: {
        ...move.values,
        ':to': 'approved',
        ':at': decision.at,
        ':by': decision.by,
        ...(decision.overrideReason ? { ':override': decision.overrideReason } : {}),
        ':changes': plan.approvedChangeIds,
        ':applied': plan.appliedConfigurationId,
        ':rollout': plan.rollout?.id ?? null,
      },
    },
  };
}
