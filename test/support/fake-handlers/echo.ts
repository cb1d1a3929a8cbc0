import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';

/** Answers with the event and a little of the context it received, plus two cookies. */
export const handler = async (
  event: APIGatewayProxyEvent,
  context: Context,
): Promise<APIGatewayProxyResult> => ({
  statusCode: 200,
  headers: { 'content-type': 'application/json', 'x-handler': 'echo' },
  multiValueHeaders: { 'Set-Cookie': ['a=1; HttpOnly', 'b=2; HttpOnly'] },
  body: JSON.stringify({
    event,
    context: {
      functionName: context.functionName,
      awsRequestId: context.awsRequestId,
      remainingTimeMs: context.getRemainingTimeInMillis(),
    },
  }),
});
