import type { APIGatewayProxyResult } from 'aws-lambda';

/** Never answers within any test's timeout: for a function that runs past its own. */
export const handler = async (): Promise<APIGatewayProxyResult> => {
  await new Promise((resolve) => setTimeout(resolve, 60_000));
  return { statusCode: 200, body: '{}' };
};
