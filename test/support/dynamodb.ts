import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { nanoid } from 'nanoid';
import { inject } from 'vitest';
import { createTables, type TableEnvVar, type TableNames, tableEnv } from '../../local/dynamodb.ts';

export interface TestTables {
  /** Unique per call, so test files never see each other's items. */
  prefix: string;
  names: TableNames;
  /** RUNS_TABLE, DATA_TABLE, AUTH_TABLE → table name, for process.env. */
  env: Record<TableEnvVar, string>;
}

/** A client of the test run's DynamoDB Local (started by test/global-setup.ts). */
export function testDynamoClient(): DynamoDBClient {
  return new DynamoDBClient({
    endpoint: inject('dynamodbEndpoint'),
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}

/** Creates the three tables under a fresh prefix and returns their names and env mapping. */
export async function createTestTables(client: DynamoDBClient = testDynamoClient()): Promise<TestTables> {
  // Table names allow [A-Za-z0-9_.-]; nanoid's alphabet is A-Za-z0-9_- .
  const prefix = `test-${nanoid(10)}-`;
  const names = await createTables(client, prefix);
  return { prefix, names, env: tableEnv(names) };
}
