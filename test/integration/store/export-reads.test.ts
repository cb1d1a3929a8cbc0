/*
 * An export's reads of a pipeline's sharded records, on DynamoDB Local: every item read is exported
 * and none is read twice (the cursor holds every shard's position), across pages too, each record
 * exported once and every shard's records in order.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { nanoid } from 'nanoid';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Execution, Signal } from '../../../lambdas/core/schemas/records.ts';
import { makeExportStore } from '../../../lambdas/store/export.ts';
import { recordShard } from '../../../lambdas/store/keys.ts';
import { recordExecutions, recordSignals } from '../../../lambdas/store/records.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { setUpApiEnvironment } from '../api/harness.ts';

const WINDOW = { signalsSince: '2000-01-01T00:00:00.000Z', executionsSince: '2000-01-01T00:00:00.000Z' };
const BASE = Date.parse('2026-04-01T00:00:00.000Z');

let db: DynamoDBDocumentClient;
let names: TableNames;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
});

async function history(pipelineId: string, executions: number, signals: number) {
  const table = { db, tableName: names.Data };
  const at = (index: number) => new Date(BASE + index * 700).toISOString();
  const all: Execution[] = Array.from({ length: executions }, (_, index) => ({
    id: nanoid(),
    pipelineId,
    configurationId: 'c1',
    status: 'succeeded',
    durationMs: 10,
    startedAt: at(index),
  }));
  const cited: Signal[] = Array.from({ length: signals }, (_, index) => ({
    id: nanoid(),
    pipelineId,
    kind: 'timeout',
    severity: 'warning',
    message: `timed out ${index}`,
    occurredAt: at(index),
  }));
  for (let from = 0; from < all.length; from += 100)
    await recordExecutions(table, all.slice(from, from + 100), 90, null);
  for (let from = 0; from < cited.length; from += 100)
    await recordSignals(table, cited.slice(from, from + 100), 90);
  return { executions: all, signals: cited };
}

/** Every page of the export with `maxBytes`, and the items its Queries read of the records' partitions. */
async function exportAll(pipelineId: string, maxBytes: number) {
  let itemsRead = 0;
  const name = `count-export-reads-${nanoid(6)}`;
  db.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args);
      const values = (args.input as { ExpressionAttributeValues?: Record<string, unknown> })
        .ExpressionAttributeValues;
      const pk = String(values?.[':pk'] ?? '');
      const scanned = (result.output as { ScannedCount?: number }).ScannedCount;
      if (/#(EXECUTIONS|SIGNALS)(#\d\d)?$/.test(pk)) itemsRead += scanned ?? 0;
      return result;
    },
    { step: 'initialize', name },
  );
  const store = makeExportStore(db, { data: names.Data, runs: names.Runs });
  const lines: Array<{ type: string; record: { id: string; startedAt?: string; occurredAt?: string } }> = [];
  let pages = 0;
  try {
    let cursor: string | undefined;
    do {
      const page = await store.page(pipelineId, cursor, WINDOW, maxBytes);
      lines.push(
        ...page.body
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line)),
      );
      cursor = page.nextCursor ?? undefined;
      pages++;
      if (cursor) expect(cursor.length).toBeLessThan(4_096);
    } while (cursor);
  } finally {
    db.middlewareStack.remove(name);
  }
  return { lines, itemsRead, pages };
}

describe("an export's reads of sharded records", () => {
  it('reads exactly the records it exports, each once, every shard in order', async () => {
    const pipelineId = `p-${nanoid()}`;
    const { executions, signals } = await history(pipelineId, 1_200, 600);

    const { lines, itemsRead } = await exportAll(pipelineId, 5_000_000);

    expect(itemsRead).toBe(1_800);
    const ids = lines.filter((line) => line.type === 'execution').map((line) => line.record.id);
    expect(new Set(ids).size).toBe(1_200);
    expect(new Set(ids)).toEqual(new Set(executions.map((execution) => execution.id)));
    expect(lines.filter((line) => line.type === 'signal')).toHaveLength(signals.length);
    // Each shard's executions in their order (all of them: in time order, a shard's are too).
    const byShard = new Map<number, string[]>();
    for (const line of lines.filter((entry) => entry.type === 'execution')) {
      const shard = recordShard(line.record.id);
      byShard.set(shard, [...(byShard.get(shard) ?? []), String(line.record.startedAt)]);
    }
    for (const times of byShard.values()) expect(times).toEqual([...times].sort());
  });

  it('exports each record once across small pages, reading about what it exports', async () => {
    const pipelineId = `p-${nanoid()}`;
    const { executions } = await history(pipelineId, 1_000, 0);

    const { lines, itemsRead, pages } = await exportAll(pipelineId, 24_000);

    expect(pages).toBeGreaterThan(5);
    const ids = lines.filter((line) => line.type === 'execution').map((line) => line.record.id);
    expect(ids).toHaveLength(1_000);
    expect(new Set(ids)).toEqual(new Set(executions.map((execution) => execution.id)));
    // A page that fills mid-read leaves the rest of that read to the next page (read again then).
    expect(itemsRead).toBeLessThan(1_000 + pages * 200);
  });
});
