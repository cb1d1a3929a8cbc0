/*
 * The worker's side of the run store: claiming a run under a lease, completing it with its proposal,
 * releasing it for a retry, failing it. Every status change is conditioned by the run state table.
 */
import { type DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError, PayloadTooLargeError } from '../core/errors.ts';
import type { DomainEvent } from '../core/events.ts';
import type { ClaimResult, RunRepository } from '../core/ports/runs.ts';
import type { SynthesisUsage } from '../core/ports/synthesis.ts';
import type { Configuration } from '../core/schemas/pipelines.ts';
import type { RunStatus, SynthesisRun } from '../core/schemas/runs.ts';
import { failedTransactionItems, isConditionFailure, isItemTooLarge, putNew } from './conditions.ts';
import { eventPut } from './events.ts';
import { runKey } from './keys.ts';
import { configurationItem, nextConfigurationVersion } from './pipeline-writes.ts';
import { currentRun, dataTableOf, eventsTableOf, moveCondition, type RunTables, toRun } from './run-table.ts';

export type RunGenerationStore = Pick<
  RunRepository,
  'claim' | 'completeGenerated' | 'releaseForRetry' | 'fail'
>;

/** A claim moves a run here (from pending, or from generating once the lease ran out). */
const CLAIMED: RunStatus = 'generating';

/** What the worker's store functions share: the client and the tables. */
interface RunGenerationTables {
  db: DynamoDBDocumentClient;
  tables: RunTables;
}

/** DynamoDB adapter of the worker's part of RunRepository. */
export function makeRunGenerationStore(db: DynamoDBDocumentClient, tables: RunTables): RunGenerationStore {
  const store: RunGenerationTables = { db, tables };
  return {
    claim: (id, startedAt, staleBefore) => claim(store, id, startedAt, staleBefore),
    completeGenerated: (run, proposed, leaseStartedAt, event) =>
      completeGenerated(store, run, proposed, leaseStartedAt, event),
    releaseForRetry: (id, reason, leaseStartedAt) => releaseForRetry(store, id, reason, leaseStartedAt),
    fail: (id, errorMessage, at, from, usage, event) => fail(store, id, errorMessage, at, from, usage, event),
  };
}

async function claim(
  { db, tables }: RunGenerationTables,
  id: string,
  startedAt: string,
  staleBefore: string,
): Promise<ClaimResult> {
  const move = moveCondition(CLAIMED);
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tables.runs,
        Key: runKey(id),
        UpdateExpression: 'SET #status = :to, generationStartedAt = :now',
        // Re-claiming a run that is already generating (its worker died) waits for its lease to run out.
        ConditionExpression: `${move.expression} AND (#status <> :to OR generationStartedAt < :staleBefore)`,
        ExpressionAttributeNames: move.names,
        ExpressionAttributeValues: {
          ...move.values,
          ':to': CLAIMED,
          ':now': startedAt,
          ':staleBefore': staleBefore,
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return { outcome: 'claimed', run: toRun(Attributes) };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
  // Not claimable: say why, from a strongly consistent read of what is there now.
  const run = await currentRun(db, tables, id);
  if (!run) return { outcome: 'missing' };
  return move.from.includes(run.status) ? { outcome: 'leased', run } : { outcome: 'finished', run };
}

async function completeGenerated(
  store: RunGenerationTables,
  run: SynthesisRun,
  proposed: Omit<Configuration, 'version'> | null,
  leaseStartedAt: string,
  event: DomainEvent,
): Promise<SynthesisRun> {
  const dataTable = dataTableOf(store.tables);
  // A run that changes nothing takes no version: the next proposal's number follows the active one's.
  const configuration = proposed && {
    ...proposed,
    version: await nextConfigurationVersion(store.db, dataTable, run.pipelineId),
  };
  await storeGenerated(store, dataTable, run, configuration, leaseStartedAt, event);
  return run;
}

/** The proposed configuration (if any) and the generated run, in one transaction held by the lease. */
async function storeGenerated(
  { db, tables }: RunGenerationTables,
  dataTable: string,
  run: SynthesisRun,
  configuration: Configuration | null,
  leaseStartedAt: string,
  event: DomainEvent,
): Promise<void> {
  const generated = moveCondition('generated');
  // The run's Put comes first, so a failed condition names the same item with or without a proposal.
  const proposal = configuration ? [putNew(dataTable, configurationItem(configuration))] : [];
  try {
    await db.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: tables.runs,
              Item: run,
              ConditionExpression: `${generated.expression} AND generationStartedAt = :lease`,
              ExpressionAttributeNames: generated.names,
              ExpressionAttributeValues: { ...generated.values, ':lease': leaseStartedAt },
            },
          },
          eventPut(eventsTableOf(tables), event),
          ...proposal,
        ],
      }),
    );
  } catch (error) {
    const failed = failedTransactionItems(error);
    if (failed.includes(0)) {
      throw new ConflictError(`Synthesis run ${run.id} is no longer held by this worker.`);
    }
    if (configuration && failed.includes(2)) {
      throw new ConflictError(`Configuration ${configuration.id} already exists.`);
    }
    if (isItemTooLarge(error)) {
      throw new PayloadTooLargeError(
        'The proposal is too large to store: the run or its proposed configuration exceeds the 400 KB ' +
          'that one DynamoDB item holds. Start a new run; if it happens again, shorten the slot settings.',
      );
    }
    throw error;
  }
}

async function releaseForRetry(
  { db, tables }: RunGenerationTables,
  id: string,
  reason: string,
  leaseStartedAt: string,
): Promise<void> {
  const move = moveCondition('pending');
  try {
    await db.send(
      new UpdateCommand({
        TableName: tables.runs,
        Key: runKey(id),
        UpdateExpression: 'SET #status = :to, retryReason = :reason',
        // Only the attempt that still holds the lease releases it.
        ConditionExpression: `${move.expression} AND generationStartedAt = :lease`,
        ExpressionAttributeNames: move.names,
        ExpressionAttributeValues: {
          ...move.values,
          ':to': 'pending',
          ':reason': reason,
          ':lease': leaseStartedAt,
        },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

async function fail(
  { db, tables }: RunGenerationTables,
  id: string,
  errorMessage: string,
  at: string,
  from: SynthesisRun['status'][],
  usage: SynthesisUsage | undefined,
  event: DomainEvent,
): Promise<SynthesisRun | null> {
  const move = moveCondition('failed', from);
  // None of `from` may become failed (a finished run, say): nothing to write.
  if (move.from.length === 0) return null;
  try {
    await db.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tables.runs,
              Key: runKey(id),
              UpdateExpression: `SET #status = :to, errorMessage = :message, generationCompletedAt = :at${usage ? ', #usage = :usage' : ''}`,
              ConditionExpression: move.expression,
              // USAGE is a DynamoDB reserved word.
              ExpressionAttributeNames: { ...move.names, ...(usage ? { '#usage': 'usage' } : {}) },
              ExpressionAttributeValues: {
                ...move.values,
                ':to': 'failed',
                ':message': errorMessage,
                ':at': at,
                ...(usage ? { ':usage': usage } : {}),
              },
            },
          },
          eventPut(eventsTableOf(tables), event),
        ],
      }),
    );
  } catch (error) {
    if (failedTransactionItems(error).includes(0)) return null;
    throw error;
  }
  // A transaction returns no item: the failed run from a strongly consistent read (failing is rare).
  return currentRun(db, tables, id);
}
