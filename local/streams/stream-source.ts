/**
 * The DynamoDB Stream event source of the local stack: reads a table's stream from DynamoDB Local's
 * own Streams API (no emulation: the records DynamoDB Local writes) and invokes a function with
 * batches in the shape Lambda gives, one shard at a time, in order. A batch item failure resumes
 * the shard at the failed record (AT_SEQUENCE_NUMBER), a failed invocation retries the whole batch,
 * after a backoff, as Lambda's event source mapping does; no record is skipped.
 */
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import type { StreamSourceDefinition } from '../../lambdas/functions.ts';

export interface StreamSourceOptions {
  /** The client of DynamoDB Local (its endpoint and credentials serve the Streams API too). */
  client: DynamoDBClient;
  tableName: string;
  batchSize: number;
  region: string;
  invoke: (event: DynamoDBStreamEvent) => Promise<unknown>;
  /**
   * The event source mapping's filter criteria, as lambdas/functions.ts states them: only records
   * of these event names (and whose new image holds `newImageHas`, a string) invoke the function.
   */
  filter?: Pick<StreamSourceDefinition, 'eventNames' | 'newImageHas'>;
  /**
   * The wait after an empty read; short, since the event-to-webhook latency is measured. It doubles
   * while the shard stays empty, up to IDLE_POLL_MAX_MS (Lambda's own rate for an idle shard: four
   * reads a second), and is short again after the next record.
   */
  pollIntervalMs?: number;
  /**
   * The longest wait of an idle shard: Lambda's four reads a second (250 ms) by default. The local
   * stack wakes its stream sources when a function that may write the table ends an invocation
   * (wake()), so it waits longer between idle reads and reads at once after a write.
   */
  idlePollMaxMs?: number;
  log: (line: string) => void;
}

export interface StreamSource {
  /**
   * The table may have been written: every shard waiting after an empty read reads again, at most
   * once per `pollIntervalMs`. A wake during a read makes that shard read once more after it.
   */
  wake(): void;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An idle shard is read four times a second at most, as Lambda reads one (three streams, 2 CPUs). */
const IDLE_POLL_MAX_MS = 250;

/** A signal that wakes every waiter at once, and counts, so a reader sees a wake that came while it read. */
function wakeSignal() {
  let count = 0;
  const waiters = new Set<() => void>();
  return {
    get count() {
      return count;
    },
    wake() {
      count++;
      for (const waiter of waiters) waiter();
      waiters.clear();
    },
    /** Resolves after `ms`, or at the first wake after `since` (at once when one already came). */
    wait(ms: number, since: number): Promise<void> {
      if (count !== since) return Promise.resolve();
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        waiters.add(done);
      });
    },
  };
}

/** Starts reading every shard of the table's stream from its start. */
export async function startStreamSource(options: StreamSourceOptions): Promise<StreamSource> {
  const config = await options.client.config.endpoint?.();
  if (!config) throw new Error('The stream source needs the DynamoDB Local endpoint.');
  const streams = new DynamoDBStreamsClient({
    endpoint: `${config.protocol}//${config.hostname}${config.port ? `:${config.port}` : ''}${config.path}`,
    region: options.region,
    credentials: await options.client.config.credentials(),
  });
  const { Table } = await options.client.send(new DescribeTableCommand({ TableName: options.tableName }));
  const streamArn = Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`Table ${options.tableName} has no stream.`);
  const stream = new TableStream(streams, streamArn, options);
  await stream.follow();
  // New shards (DynamoDB Local rolls them over) are picked up every few seconds.
  const discovery = setInterval(() => {
    if (stream.running)
      stream
        .follow()
        .catch((error: unknown) => options.log(`[stream ${options.tableName}] ${String(error)}`));
  }, 5_000);
  discovery.unref();
  return {
    wake: () => stream.wakes.wake(),
    async stop() {
      clearInterval(discovery);
      await stream.stop();
      streams.destroy();
    },
  };
}

/** Where a shard is read from: after the last record handled, at a record to retry, or its start. */
type ShardPosition = { after: string } | { at: string } | 'TRIM_HORIZON';

/** The readers of one table's stream: one loop per shard, in order, until stop(). */
class TableStream {
  running = true;
  readonly wakes = wakeSignal();
  private readonly started = new Set<string>();
  private readonly readers: Promise<void>[] = [];
  private readonly pollMs: number;
  private readonly idleMaxMs: number;

  constructor(
    private readonly streams: DynamoDBStreamsClient,
    private readonly streamArn: string,
    private readonly options: StreamSourceOptions,
  ) {
    this.pollMs = options.pollIntervalMs ?? 50;
    this.idleMaxMs = Math.max(this.pollMs, options.idlePollMaxMs ?? IDLE_POLL_MAX_MS);
  }

  /** Starts a reader for every shard not read yet. */
  async follow(): Promise<void> {
    const { StreamDescription } = await this.streams.send(
      new DescribeStreamCommand({ StreamArn: this.streamArn }),
    );
    for (const shard of StreamDescription?.Shards ?? []) {
      const shardId = shard.ShardId;
      if (!shardId || this.started.has(shardId)) continue;
      this.started.add(shardId);
      this.readers.push(
        this.readShard(shardId).catch((error: unknown) =>
          this.options.log(`[stream ${this.options.tableName}] shard ${shardId}: ${String(error)}`),
        ),
      );
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wakes.wake();
    // A reader may be in a backoff wait; it ends at its next turn, the stop does not wait for it.
    await Promise.race([Promise.all(this.readers), sleep(1_000)]);
  }

  private async iteratorAt(shardId: string, position: ShardPosition): Promise<string | undefined> {
    const { ShardIterator } = await this.streams.send(
      new GetShardIteratorCommand({
        StreamArn: this.streamArn,
        ShardId: shardId,
        ...(position === 'TRIM_HORIZON'
          ? { ShardIteratorType: 'TRIM_HORIZON' }
          : 'after' in position
            ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: position.after }
            : { ShardIteratorType: 'AT_SEQUENCE_NUMBER', SequenceNumber: position.at }),
      }),
    );
    return ShardIterator;
  }

  /**
   * Reads a shard from its start (the local tables are in memory, so the stream holds only this
   * run's events) until it is closed and read to its end, or the source stops.
   */
  private async readShard(shardId: string): Promise<void> {
    let last: string | undefined;
    let iterator: string | undefined;
    let failures = 0;
    let idleWaitMs = this.pollMs;
    while (this.running) {
      try {
        iterator ??= await this.iteratorAt(shardId, last ? { after: last } : 'TRIM_HORIZON');
        if (!iterator) return;
        const wokenBefore = this.wakes.count;
        const { Records = [], NextShardIterator } = await this.streams.send(
          new GetRecordsCommand({ ShardIterator: iterator, Limit: this.options.batchSize }),
        );
        if (Records.length === 0) {
          iterator = NextShardIterator;
          if (!iterator) return;
          await this.waitWhileIdle(idleWaitMs, wokenBefore);
          idleWaitMs = Math.min(this.idleMaxMs, idleWaitMs * 2);
          continue;
        }
        idleWaitMs = this.pollMs;
        const retryFrom = await this.invokeBatch(Records);
        if (retryFrom === undefined) {
          failures = 0;
          last = Records.at(-1)?.dynamodb?.SequenceNumber ?? last;
          iterator = NextShardIterator;
          if (!iterator) return;
          continue;
        }
        failures++;
        // Everything before the failed record is done; the shard waits behind the failed one (ordered).
        const index = Records.findIndex((record) => record.dynamodb?.SequenceNumber === retryFrom);
        if (index > 0) last = Records[index - 1]?.dynamodb?.SequenceNumber ?? last;
        await sleep(Math.min(30_000, 200 * 2 ** Math.min(failures, 8)));
        iterator = await this.iteratorAt(shardId, { at: retryFrom });
      } catch (error) {
        iterator = undefined;
        await this.afterReadError(shardId, error);
      }
    }
  }

  /**
   * pollMs at least between two reads, however often the table is written; then until a wake (or
   * one that came during the read), or the idle wait.
   */
  private async waitWhileIdle(idleWaitMs: number, wokenBefore: number): Promise<void> {
    await sleep(Math.min(this.pollMs, idleWaitMs));
    if (idleWaitMs > this.pollMs && this.running)
      await this.wakes.wait(idleWaitMs - this.pollMs, wokenBefore);
  }

  /**
   * DynamoDB Local answers an empty new shard's iterator with TrimmedDataAccessException, and an
   * iterator expires: the reader starts again after the last record handled. Anything else is logged.
   */
  private async afterReadError(shardId: string, error: unknown): Promise<void> {
    const name = (error as Error).name;
    if (name !== 'TrimmedDataAccessException' && name !== 'ExpiredIteratorException') {
      this.options.log(`[stream ${this.options.tableName}] shard ${shardId}: ${String(error)}`);
    }
    await sleep(this.pollMs * 4);
  }

  private passes(record: StreamRecord): boolean {
    const { filter } = this.options;
    return (
      filter === undefined ||
      (filter.eventNames.some((name) => name === record.eventName) &&
        (filter.newImageHas === undefined ||
          record.dynamodb?.NewImage?.[filter.newImageHas]?.S !== undefined))
    );
  }

  /** Invokes the function; the sequence number to resume at when something failed. */
  private async invokeBatch(all: StreamRecord[]): Promise<string | undefined> {
    // As Lambda does, records the filter drops are passed over without an invocation.
    const records = all.filter((record) => this.passes(record));
    if (records.length === 0) return undefined;
    const event = {
      Records: records.map((record) => toLambdaRecord(record, this.streamArn, this.options.region)),
    };
    try {
      const result = (await this.options.invoke(event as DynamoDBStreamEvent)) as
        | { batchItemFailures?: Array<{ itemIdentifier: string }> }
        | undefined;
      const failed = result?.batchItemFailures?.[0]?.itemIdentifier;
      return failed ? failed : undefined;
    } catch (error) {
      this.options.log(
        `[stream ${this.options.tableName}] ${error instanceof Error ? error.message : String(error)}; retrying the batch`,
      );
      return records[0]?.dynamodb?.SequenceNumber;
    }
  }
}

/** A Streams API record as Lambda's DynamoDB event source hands it to a function. */
function toLambdaRecord(record: StreamRecord, streamArn: string, region: string) {
  const dynamodb = record.dynamodb ?? {};
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion ?? '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: region,
    eventSourceARN: streamArn,
    dynamodb: {
      ...dynamodb,
      ApproximateCreationDateTime:
        dynamodb.ApproximateCreationDateTime instanceof Date
          ? Math.floor(dynamodb.ApproximateCreationDateTime.getTime() / 1000)
          : dynamodb.ApproximateCreationDateTime,
    },
  };
}
