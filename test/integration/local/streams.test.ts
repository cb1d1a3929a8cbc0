import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { newEvent } from '../../../lambdas/core/events.ts';
import { eventItem } from '../../../lambdas/store/events.ts';
import { createDocumentClient } from '../../../lambdas/wiring/aws.ts';
import { type StreamSource, startStreamSource } from '../../../local/streams/stream-source.ts';
import { createTestTables } from '../../support/dynamodb.ts';
import { waitFor } from '../../support/wait.ts';

/** The local stack's stream event source on DynamoDB Local's real stream: at least once, in order. */
const client = new DynamoDBClient({
  endpoint: inject('dynamodbEndpoint'),
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});
const db = createDocumentClient(client);
let source: StreamSource | undefined;

afterEach(async () => {
  await source?.stop();
});

const idsOf = (event: DynamoDBStreamEvent) =>
  event.Records.map((record) => String((record.dynamodb?.NewImage as { id?: { S?: string } })?.id?.S));

async function writeEvents(table: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const event = newEvent(
      'pipeline.deleted',
      { teamId: 't1', pipelineId: `p${index}`, actor: { userId: 'system', credential: 'system' } },
      { at: new Date(Date.now() + index).toISOString(), key: `k${index}` },
    );
    await db.send(new PutCommand({ TableName: table, Item: eventItem(event) }));
    ids.push(event.id);
  }
  return ids;
}

describe('the local stream source', () => {
  it('hands every committed event to the function again after a crash and after a batch item failure, in order', async () => {
    const { names } = await createTestTables(client);
    const seen: string[] = [];
    let calls = 0;
    let failedOnce = false;
    source = await startStreamSource({
      client,
      tableName: names.Events,
      batchSize: 2,
      region: 'us-east-1',
      pollIntervalMs: 10,
      log: () => undefined,
      invoke: async (event) => {
        calls++;
        // The deliverer crashes mid-batch once: the whole batch comes again.
        if (calls === 1) throw new Error('crashed');
        const ids = idsOf(event);
        seen.push(...ids);
        // Then it reports its second record once as failed: the stream resumes at that record.
        if (!failedOnce && ids.length === 2) {
          failedOnce = true;
          return {
            batchItemFailures: [{ itemIdentifier: event.Records[1]?.dynamodb?.SequenceNumber ?? '' }],
          };
        }
        return { batchItemFailures: [] };
      },
    });
    const written = await writeEvents(names.Events, 5);
    await waitFor(() => written.every((id) => seen.includes(id)), 'every event handed over', 20_000);

    // Every event at least once; the first occurrences in commit order.
    expect([...new Set(seen)]).toEqual(written);
    expect(seen.length).toBeGreaterThan(written.length);
  });
});

describe('the local stream source when the stack wakes it', () => {
  it('reads an idle shard seldom, and at once after a wake', async () => {
    const { names } = await createTestTables(client);
    const handed = new Map<string, number>();
    source = await startStreamSource({
      client,
      tableName: names.Events,
      batchSize: 10,
      region: 'us-east-1',
      pollIntervalMs: 50,
      idlePollMaxMs: 60_000,
      log: () => undefined,
      invoke: async (event) => {
        for (const id of idsOf(event)) handed.set(id, performance.now());
        return { batchItemFailures: [] };
      },
    });
    // Idle for 3.5 s: its waits have doubled from 50 ms to 3.2 s (the read before this write came
    // at about 3.1 s, the next comes at about 6.3 s).
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    const [id] = await writeEvents(names.Events, 1);
    const woken = performance.now();
    source.wake();
    await waitFor(() => handed.has(id ?? ''), 'the event handed over', 10_000);
    expect((handed.get(id ?? '') ?? Number.POSITIVE_INFINITY) - woken).toBeLessThan(1_500);
  });
});
