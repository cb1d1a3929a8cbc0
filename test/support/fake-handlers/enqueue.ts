import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';

// Configured only by the environment, like the real handlers: AWS_ENDPOINT_URL_SQS and QUEUE_URL.
const client = new SQSClient({});

/** Queues the request body as a job and answers 202 with the message id. */
export const handler = async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
  const sent = await client.send(
    new SendMessageCommand({ QueueUrl: process.env.QUEUE_URL, MessageBody: event.body ?? '{}' }),
  );
  return { statusCode: 202, body: JSON.stringify({ messageId: sent.MessageId }) };
};
