import type { TestProject } from 'vitest/node';
import { writeOpenApiDocumentModule } from '../lambdas/operations/openapi-build.ts';
import { startDynamoDbLocal } from '../local/dynamodb.ts';
import { writeAppAssetsModule } from '../web/build.ts';

/**
 * Starts one DynamoDB Local for the whole test run (each test file creates its own tables in it),
 * and builds the review application and the OpenAPI document into the modules the serve-app and
 * get-openapi functions embed (git-ignored),
 * once, before any test bundles that function.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [dynamoDb] = await Promise.all([
    startDynamoDbLocal(),
    writeAppAssetsModule(),
    writeOpenApiDocumentModule(),
  ]);
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
