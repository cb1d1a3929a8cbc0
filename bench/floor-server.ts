/**
 * The floor of the poll benchmark: an HTTP server that calls the get-synthesis-run bundle in its
 * own process, with the function's variables, no authorizer, no gateway checks and no execution
 * environment. No local stack can serve a poll for less than this; bench/local-stack.ts measures
 * it beside the stack so the stack's ratio can be read against what is possible on the machine.
 * Prints its URL on stdout and serves until killed.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';

export interface FloorServerInput {
  bundle: string;
  environment: Record<string, string>;
  /** The principal the authorizer would pass for the benchmark's token. */
  authorizer: Record<string, string>;
}

type ProxyHandler = (
  event: unknown,
  context: unknown,
) => Promise<{ statusCode: number; headers?: Record<string, string>; body: string }>;

const input = JSON.parse(process.argv[2] ?? '{}') as FloorServerInput;
Object.assign(process.env, input.environment, { AWS_LAMBDA_FUNCTION_NAME: 'floor' });
const { handler } = (await import(pathToFileURL(input.bundle).href)) as { handler: ProxyHandler };
const context = { awsRequestId: 'floor', functionName: 'floor', getRemainingTimeInMillis: () => 10_000 };

const server = createServer((request, response) => {
  const path = (request.url ?? '/').split('?')[0] ?? '/';
  const id = path.split('/').pop() ?? '';
  const event = {
    httpMethod: 'GET',
    resource: '/synthesis-runs/{id}',
    path,
    pathParameters: { id },
    headers: {},
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    body: null,
    isBase64Encoded: false,
    stageVariables: null,
    requestContext: {
      requestId: 'floor',
      httpMethod: 'GET',
      path,
      resourcePath: '/synthesis-runs/{id}',
      identity: { sourceIp: '127.0.0.1' },
      authorizer: input.authorizer,
    },
  };
  handler(event, context).then(
    (result) => {
      response.writeHead(result.statusCode, result.headers);
      response.end(result.body);
    },
    () => {
      response.writeHead(500);
      response.end();
    },
  );
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
