/*
 * Claiming a batch's record ids (their id markers, all or none) and what a refused batch
 * transaction means to the client: an id taken with another time, or another request writing it.
 */
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../core/errors.ts';
import { contendedTransactionItems, failedTransactionItems } from './conditions.ts';
import type { ItemKey } from './keys.ts';
import type { RecordTable } from './records.ts';
import { type ClaimMode, claimItem } from './rollout-moments.ts';

/** A record to store, with the marker that holds its id in the pipeline and its time. */
export interface NewRecord {
  id: string;
  item: Record<string, unknown>;
  idMarker: ItemKey;
  recordTime: string;
}

/**
 * Claims the records' ids; with `keepPending` (a rollout guards a signal) first by Puts that no
 * waiting signal lets through, and only when one is refused by Updates that keep what waits.
 * True when the markers were claimed by Updates (so they may hold signals that waited).
 */
export async function claimIds(
  { db, tableName }: RecordTable,
  records: NewRecord[],
  what: 'signal' | 'execution',
  keepPending: boolean,
): Promise<boolean> {
  const claim = (mode: ClaimMode) => (record: NewRecord) =>
    claimItem(tableName, record.idMarker, record.recordTime, mode);
  if (keepPending) {
    try {
      await db.send(new TransactWriteCommand({ TransactItems: records.map(claim('putUnlessWaiting')) }));
      return false;
    } catch (error) {
      // A signal waits on a marker (or an id is taken: the updates below say which).
      if (failedTransactionItems(error).length === 0) throw batchConflict(error, records, takenWords(what));
    }
  }
  try {
    await db.send(
      new TransactWriteCommand({ TransactItems: records.map(claim(keepPending ? 'update' : 'put')) }),
    );
    return keepPending;
  } catch (error) {
    throw batchConflict(error, records, takenWords(what));
  }
}

const takenWords = (what: 'signal' | 'execution') => (ids: string) =>
  `These ${what} ids are already recorded in this pipeline with another time: ${ids}. ` +
  'An id names one record of a pipeline; nothing in the batch was recorded.';

/**
 * What a refused batch transaction means to the client: a ConflictError naming the records whose
 * condition failed (`taken` says how) or that another request was writing at the same moment, or
 * the error itself when it is neither.
 */
export function batchConflict(error: unknown, records: NewRecord[], taken: (ids: string) => string): unknown {
  const idsAt = (indexes: number[]) => indexes.map((index) => records[index]?.id).join(', ');
  const failed = failedTransactionItems(error);
  if (failed.length > 0) return new ConflictError(taken(idsAt(failed)), { cause: error });
  const contended = contendedTransactionItems(error);
  if (contended.length > 0) {
    return new ConflictError(
      `Another request is recording these ids at this moment: ${idsAt(contended)}. ` +
        'Nothing in the batch was recorded; send it again.',
      { cause: error },
    );
  }
  return error;
}
