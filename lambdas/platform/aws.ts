import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * Module-level clients: created once per Lambda container and reused by warm invocations.
 * Endpoints come from the SDK's own AWS_ENDPOINT_URL_* variables, which is how the local stack
 * points the very same code at DynamoDB Local and the local queue.
 */
let documentClient: DynamoDBDocumentClient | undefined;

export function getDocumentClient(): DynamoDBDocumentClient {
  documentClient ??= createDocumentClient(new DynamoDBClient({}));
  return documentClient;
}

export function createDocumentClient(client: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
}
