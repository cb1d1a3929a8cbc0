/*
 * Putting a batch of new records (store/records.ts claims their ids first): in one transaction, or
 * in parts written at once, each with its own records' series updates, the counts with the last.
 */
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { failedTransactionItems, putNew, refusingTooLarge } from './conditions.ts';
import { sendContendedAgain } from './pipeline-writes.ts';
import { batchConflict, type NewRecord } from './record-claims.ts';
import type { RecordTable } from './records.ts';
import { type SeriesUpdates, seriesShard } from './series-writes.ts';

/** Items written in the last of a batch's transactions: its counts, and signals waiting on a marker. */
export type Transacted = Array<Record<string, unknown>>;

/** A waiting signal's execution was recorded between the read of its marker and the write. */
export class PendingRaced extends Error {}

/** The most items DynamoDB takes in one transaction. */
const TRANSACTION_ITEMS = 100;

/**
 * The batch's transactions: one when the records, their series updates and `reserved` items fit,
 * else parts filled from the last (which leaves room for the reserved items), each with its own
 * records' series updates. Deterministic: a batch sent again is split the same way. A part is the
 * longest run of records, ending where the next part starts, that fits its room: found by halving,
 * since a longer run never has fewer series updates (a few sizings a part, not one a record).
 */
function partsOf(records: NewRecord[], reserved: number, series: SeriesUpdates): NewRecord[][] {
  const size = (part: NewRecord[]) =>
    part.length +
    series(
      part.map((record) => record.item),
      0,
    ).length;
  if (size(records) + reserved <= TRANSACTION_ITEMS) return [records];
  const parts: NewRecord[][] = [];
  let end = records.length;
  let room = TRANSACTION_ITEMS - reserved;
  while (end > 0) {
    // The longest records[start, end) within room: one record always makes a part.
    let fits = end - 1;
    let over = -1;
    while (fits - over > 1) {
      const start = Math.floor((fits + over) / 2);
      if (size(records.slice(start, end)) <= room) fits = start;
      else over = start;
    }
    parts.unshift(records.slice(fits, end));
    end = fits;
    room = TRANSACTION_ITEMS;
  }
  return parts;
}

/**
 * Puts up to 100 new records, with the batch's counts and series, in transactions: all are written
 * or none. A full batch and its counts or series do not fit one transaction: its records go in
 * parts, written at once, the counts with the last, each part with its own records' series (in a
 * shard of its own, so the parts never contend). A part whose records are all there already was
 * written by an earlier sending of the batch, with its counters: it is skipped, and the batch is
 * counted once; a batch whose every part is there was recorded already (409).
 */
export async function putAllNew(
  { db, tableName }: RecordTable,
  records: NewRecord[],
  what: string,
  extra: Transacted | null,
  series: SeriesUpdates,
): Promise<void> {
  // Beyond half a transaction, what waits on markers goes in transactions of its own after the records.
  const withLast = (extra ?? []).slice(0, TRANSACTION_ITEMS / 2);
  const after = (extra ?? []).slice(TRANSACTION_ITEMS / 2);
  const parts = partsOf(records, withLast.length, series);
  const written = await Promise.all(
    parts.map(async (part, index) => {
      const last = index === parts.length - 1;
      const items = [
        ...part.map((record) => putNew(tableName, record.item)),
        ...(last ? withLast : []),
        ...series(
          part.map((record) => record.item),
          seriesShard(records[0]?.id ?? '', index),
        ),
      ];
      try {
        await sendContendedAgain(() =>
          refusingTooLarge(() => db.send(new TransactWriteCommand({ TransactItems: items }))),
        );
        return null;
      } catch (error) {
        const failed = failedTransactionItems(error);
        if (last && failed.some((i) => i >= part.length && i < part.length + withLast.length)) {
          throw new PendingRaced('an execution was recorded meanwhile', { cause: error });
        }
        // Written by an earlier sending of the batch (its records are there, their counters with them).
        if (failed.length === part.length && failed.every((i) => i < part.length)) return { part, error };
        throw batchConflict(
          error,
          part,
          (ids) => `These ${what} are already recorded: ${ids}. Nothing in the batch was recorded.`,
        );
      }
    }),
  );
  const present = written.filter((result) => result !== null);
  const first = present[0];
  if (first && present.length === parts.length) {
    throw batchConflict(
      first.error,
      first.part,
      (ids) => `These ${what} are already recorded: ${ids}. Nothing in the batch was recorded.`,
    );
  }
  for (let i = 0; i < after.length; i += TRANSACTION_ITEMS) {
    await db.send(new TransactWriteCommand({ TransactItems: after.slice(i, i + TRANSACTION_ITEMS) }));
  }
}
