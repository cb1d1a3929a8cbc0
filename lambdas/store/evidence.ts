/*
 * The evidence a run cites, kept beside the pipeline data: signals are keyed by time, so they cannot
 * be fetched by id later; the worker copies the cited ones here and the evidence endpoint reads them
 * back with one Query (keys: store/keys.ts).
 */

import { BatchWriteCommand, type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { expiryEpoch } from '../core/lifecycle.ts';
import type { EvidenceStore } from '../core/ports/runs.ts';
import { type Execution, executionSchema, type Signal, signalSchema } from '../core/schemas/records.ts';
import { deleteKeys } from './batch-delete.ts';
import { itemReader } from './items.ts';
import { evidenceKey, evidencePartition } from './keys.ts';

const BATCH = 25;
const MAX_ROUNDS = 8;

/** DynamoDB adapter of EvidenceStore. Saving is idempotent: a retried job writes the same items. */
export function makeEvidenceStore(db: DynamoDBDocumentClient, tableName: string): EvidenceStore {
  /** One cited record, as the worker copied it (built here: only the Lambdas that use the store bundle it). */
  const readEvidence = itemReader(
    z.union([
      z.object({ kind: z.literal('signal'), record: signalSchema }),
      z.object({ kind: z.literal('execution'), record: executionSchema }),
    ]),
    'evidence item',
  );
  return {
    async save(runId, { signals, executions }, retention) {
      const ttl = (time: string, days: number | undefined) =>
        days === undefined ? {} : { expiresAtEpoch: expiryEpoch(time, days) };
      const items = [
        ...signals.map((record) => ({
          ...evidenceKey(runId, 'signal', record.id),
          kind: 'signal',
          record,
          ...ttl(record.occurredAt, retention?.signalDays),
        })),
        ...executions.map((record) => ({
          ...evidenceKey(runId, 'execution', record.id),
          kind: 'execution',
          record,
          ...ttl(record.startedAt, retention?.executionDays),
        })),
      ];
      for (let start = 0; start < items.length; start += BATCH) {
        let requests = items.slice(start, start + BATCH).map((Item) => ({ PutRequest: { Item } }));
        for (let round = 0; requests.length > 0; round++) {
          if (round >= MAX_ROUNDS)
            throw new Error('DynamoDB left evidence items unprocessed; try again later.');
          const { UnprocessedItems } = await db.send(
            new BatchWriteCommand({ RequestItems: { [tableName]: requests } }),
          );
          requests = (UnprocessedItems?.[tableName] ?? []) as typeof requests;
          if (requests.length > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** round));
        }
      }
    },

    async remove(runId) {
      let start: Record<string, unknown> | undefined;
      do {
        const page = await db.send(
          new QueryCommand({
            TableName: tableName,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': evidencePartition(runId) },
            ProjectionExpression: 'pk, sk',
            ConsistentRead: true,
            ExclusiveStartKey: start,
          }),
        );
        await deleteKeys(
          db,
          tableName,
          (page.Items ?? []).map((item) => ({ pk: item.pk, sk: item.sk })),
        );
        start = page.LastEvaluatedKey;
      } while (start);
    },

    async load(runId) {
      const signals: Signal[] = [];
      const executions: Execution[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await db.send(
          new QueryCommand({
            TableName: tableName,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': evidencePartition(runId) },
            ExclusiveStartKey: start,
          }),
        );
        for (const item of (page.Items ?? []).map(readEvidence)) {
          if (item.kind === 'signal') signals.push(item.record);
          else executions.push(item.record);
        }
        start = page.LastEvaluatedKey;
      } while (start);
      const newestFirst = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);
      signals.sort((a, b) => newestFirst(a.occurredAt, b.occurredAt));
      executions.sort((a, b) => newestFirst(a.startedAt, b.startedAt));
      return { signals, executions };
    },
  };
}
