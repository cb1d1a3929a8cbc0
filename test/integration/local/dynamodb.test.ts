import {
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import { RUNS_TABLE, TABLE_DEFINITIONS } from '../../../lambdas/store/table-definitions.ts';
import { createTables, startDynamoDbLocal, tableEnv } from '../../../local/dynamodb.ts';
import { createTestTables, testDynamoClient } from '../../support/dynamodb.ts';
import { AWS_ACCESS_KEY_PREFIX } from '../../support/fake-secrets.ts';

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function keySchema(partitionKey: string, sortKey?: string) {
  return sortKey === undefined
    ? [{ AttributeName: partitionKey, KeyType: 'HASH' }]
    : [
        { AttributeName: partitionKey, KeyType: 'HASH' },
        { AttributeName: sortKey, KeyType: 'RANGE' },
      ];
}

describe('startDynamoDbLocal', () => {
  it('starts a DynamoDB Local that answers, and stop() leaves no java process behind', async () => {
    const dynamoDb = await startDynamoDbLocal();
    const client = new DynamoDBClient({
      endpoint: dynamoDb.endpoint,
      region: 'eu-west-1',
      credentials: { accessKeyId: 'someone', secretAccessKey: 'else' },
      maxAttempts: 1,
    });

    const before = await client.send(new ListTablesCommand({}));
    await dynamoDb.stop();

    expect(dynamoDb.endpoint).toBe(`http://127.0.0.1:${dynamoDb.port}`);
    expect(before.TableNames).toEqual([]);
    expect(isRunning(dynamoDb.pid)).toBe(false);
    await expect(client.send(new ListTablesCommand({}))).rejects.toThrow();
    client.destroy();
  });

  it('says Java 17+ is required when java cannot be found', async () => {
    await expect(startDynamoDbLocal({ java: '/nonexistent/bin/java' })).rejects.toThrow(
      /Java 17\+ is required/,
    );
  });
});

describe('createTables', () => {
  const client = testDynamoClient();

  it('creates every table of TABLE_DEFINITIONS with its keys, indexes, billing mode and TTL', async () => {
    const { names } = await createTestTables(client);

    for (const definition of TABLE_DEFINITIONS) {
      const tableName = names[definition.id];
      const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
      const { TimeToLiveDescription } = await client.send(
        new DescribeTimeToLiveCommand({ TableName: tableName }),
      );

      expect(Table?.KeySchema).toEqual(keySchema(definition.partitionKey, definition.sortKey));
      expect(Table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
      expect(
        (Table?.GlobalSecondaryIndexes ?? []).map((index) => ({
          IndexName: index.IndexName,
          KeySchema: index.KeySchema,
          Projection: index.Projection,
        })),
      ).toEqual(
        definition.indexes.map((index) => ({
          IndexName: index.indexName,
          KeySchema: keySchema(index.partitionKey, index.sortKey),
          Projection: { ProjectionType: 'ALL' },
        })),
      );
      expect(TimeToLiveDescription).toEqual(
        definition.timeToLiveAttribute === undefined
          ? { TimeToLiveStatus: 'DISABLED' }
          : { TimeToLiveStatus: 'ENABLED', AttributeName: definition.timeToLiveAttribute },
      );
    }
  });

  it('names tables prefix + id and maps them to the handlers’ environment variables', async () => {
    const { prefix, names, env } = await createTestTables(client);

    for (const definition of TABLE_DEFINITIONS) {
      expect(names[definition.id]).toBe(`${prefix}${definition.id}`);
      expect(env[definition.envVar]).toBe(names[definition.id]);
    }
    expect(tableEnv(names)).toEqual(env);
  });

  it('is idempotent: creating the same tables again keeps them and their items', async () => {
    const { prefix, names } = await createTestTables(client);
    const key = {
      [RUNS_TABLE.partitionKey]: { S: 'run-1' },
      ...(RUNS_TABLE.sortKey === undefined ? {} : { [RUNS_TABLE.sortKey]: { S: 'run' } }),
    };
    await client.send(
      new PutItemCommand({ TableName: names.Runs, Item: { ...key, status: { S: 'pending' } } }),
    );

    const again = await createTables(client, prefix);
    const { Item } = await client.send(new GetItemCommand({ TableName: names.Runs, Key: key }));

    expect(again).toEqual(names);
    expect(Item?.status).toEqual({ S: 'pending' });
  });

  it('shares one database: a client with other dummy credentials and region sees the same tables', async () => {
    const { prefix, names } = await createTestTables(client);
    const stranger = new DynamoDBClient({
      endpoint: inject('dynamodbEndpoint'),
      region: 'ap-southeast-2',
      credentials: { accessKeyId: `${AWS_ACCESS_KEY_PREFIX}OTHERCONSOLETOOL`, secretAccessKey: 'different' },
    });

    // Table names sort, so the tables come straight after their prefix.
    const { TableNames } = await stranger.send(
      new ListTablesCommand({ ExclusiveStartTableName: prefix, Limit: Object.keys(names).length }),
    );
    stranger.destroy();

    expect(TableNames?.sort()).toEqual(Object.values(names).sort());
  });
});
