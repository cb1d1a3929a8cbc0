/*
 * Deleting many items by key: BatchWriteItem in requests of 25, several in flight, unprocessed
 * items sent again with backoff. Shared by the retention job and a pipeline's deletion.
 */
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

const BATCH = 25;
const MAX_ROUNDS = 10;
/** Requests in flight at once: enough to keep DynamoDB busy, few enough for a 256 MB function. */
const PARALLEL = 8;

/** Deletes every key (idempotent: a key already gone is no error). */
export async function deleteKeys(
  db: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly Record<string, unknown>[],
): Promise<void> {
  const batches: Record<string, unknown>[][] = [];
  for (let start = 0; start < keys.length; start += BATCH) batches.push(keys.slice(start, start + BATCH));
  for (let start = 0; start < batches.length; start += PARALLEL) {
    await Promise.all(
      batches.slice(start, start + PARALLEL).map((batch) => deleteBatch(db, tableName, batch)),
    );
  }
}

async function deleteBatch(db: DynamoDBDocumentClient, tableName: string, keys: Record<string, unknown>[]) {
  let requests = keys.map((Key) => ({ DeleteRequest: { Key } }));
  for (let round = 0; requests.length > 0; round++) {
    if (round >= MAX_ROUNDS) throw new Error('DynamoDB left deletes unprocessed; the job will try again.');
    const { UnprocessedItems } = await db.send(
      new BatchWriteCommand({ RequestItems: { [tableName]: requests } }),
    );
    requests = (UnprocessedItems?.[tableName] ?? []) as typeof requests;
    if (requests.length > 0) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** round));
  }
}
