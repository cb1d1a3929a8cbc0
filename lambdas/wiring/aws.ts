/*
 * The DynamoDB document client, one per Lambda container, shared by every store;
 * endpoints come from the SDK's own environment variables (DynamoDB Local in the local stack).
 */
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
    marshallOptions: {
      removeUndefinedValues: true,
      // Client settings may hold a key named "constructor": the marshaller would take such a
      // plain object for a class instance and throw. Every stored value is plain JSON anyway.
      convertClassInstanceToMap: true,
      // Integers past 2^53 (1e20, say) are stored as the number JSON gave; DynamoDB keeps 38
      // digits, more than a JavaScript number has.
      allowImpreciseNumbers: true,
    },
    // …and read back as that same JavaScript number (the SDK would refuse one past 2^53).
    unmarshallOptions: { wrapNumbers: (value: string) => Number(value) },
  });
}
