/**
 * The local stack's DynamoDB Stream event sources, as one part: started once their functions
 * exist, woken by table when a function that may write the table ends an invocation, and stopped
 * with the stack.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { StreamSourceDefinition } from '../../lambdas/functions.ts';
import type { TableId, TableNames } from '../dynamodb.ts';
import { type StreamSource, startStreamSource } from './stream-source.ts';

/** A function with stream sources (lambdas/functions.ts) and how to invoke it. */
export interface StreamReader {
  streamSources: readonly StreamSourceDefinition[];
  invoke: (event: unknown) => Promise<unknown>;
}

export interface StreamReadersOptions {
  client: DynamoDBClient;
  tableNames: TableNames;
  region: string;
  /** The longest wait of an idle shard (stream-source.ts), the wakes standing in for shorter ones. */
  idlePollMaxMs: number;
  log: (line: string) => void;
}

export class StreamReaders {
  private readonly byTable = new Map<TableId, StreamSource[]>();
  private readonly started: StreamSource[] = [];

  /** Wakes the readers of `tables`: a function that may write them has ended an invocation. */
  wake(tables: readonly TableId[]): void {
    for (const table of tables) for (const source of this.byTable.get(table) ?? []) source.wake();
  }

  /**
   * Starts every stream source of `readers` at once, each reading its table's stream from its start
   * as Lambda's event source mapping would. Each one that started is kept, and ended by stop(), even
   * when another failed; then the first failure is thrown.
   */
  async start(readers: readonly StreamReader[], options: StreamReadersOptions): Promise<void> {
    const settled = await Promise.allSettled(
      readers.flatMap((reader) =>
        reader.streamSources.map(async ({ table, batchSize, ...filter }) => {
          const source = await startStreamSource({
            client: options.client,
            tableName: options.tableNames[table],
            batchSize,
            filter,
            region: options.region,
            invoke: (event) => reader.invoke(event),
            idlePollMaxMs: options.idlePollMaxMs,
            log: options.log,
          });
          this.started.push(source);
          this.byTable.set(table, [...(this.byTable.get(table) ?? []), source]);
        }),
      ),
    );
    for (const outcome of settled) if (outcome.status === 'rejected') throw outcome.reason;
  }

  /** Ends every source that started, the last started first. */
  async stop(): Promise<void> {
    for (const source of [...this.started].reverse()) await source.stop().catch(() => undefined);
  }
}
