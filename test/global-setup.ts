import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../local/dynamodb.ts';

/** Starts one DynamoDB Local for the whole test run; each test file creates its own tables in it. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dynamoDb = await startDynamoDbLocal();
  project.provide('dynamodbEndpoint', dynamoDb.endpoint);
  return async () => {
    await dynamoDb.stop();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
  }
}
