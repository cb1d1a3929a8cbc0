import { randomBytes } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type {
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  Context,
  SQSBatchResponse,
  SQSEvent,
} from 'aws-lambda';
import { nanoid } from 'nanoid';
import { inject } from 'vitest';
import { makeBootstrapTeam } from '../../../lambdas/auth/bootstrap.ts';
import { noUsageKeys } from '../../../lambdas/auth/usage-keys.ts';
import type { Principal, Role } from '../../../lambdas/core/principal.ts';
import { evaluationPaths } from '../../../lambdas/operations/declaration.ts';
import { OPERATIONS } from '../../../lambdas/operations/index.ts';
import { makePipelineRepository } from '../../../lambdas/store/pipelines.ts';
import { createDocumentClient } from '../../../lambdas/wiring/aws.ts';
import { nanoidGenerator, systemClock } from '../../../lambdas/wiring/clock.ts';
import { makeAuthRepository } from '../../../lambdas/wiring/repositories.ts';
import { createTables, type TableNames, tableEnv } from '../../../local/dynamodb.ts';
import { importHandler } from '../../support/function-modules.ts';

export const TEST_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/synthesis-jobs';
/** The lifecycle queue (deletion jobs); tests mock SQS, so nothing is sent there. */
export const TEST_LIFECYCLE_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/lifecycle-jobs';
/** The guardrail queue (rollouts to judge); tests mock SQS, or point it at a local queue. */
export const TEST_GUARDRAIL_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/guardrail-checks';
/** The shared evaluation key the authorizer names for a team without a key of its own (lib/api.ts makes the real one). */
export const SHARED_EVALUATION_KEY = 'shared-evaluations-key-of-the-test-stack';

/**
 * Fresh tables on the shared DynamoDB Local and the environment the handler modules read at
 * import time. Call it before importing a handler (use `await import(...)`).
 */
export async function setUpApiEnvironment(extraEnv: Record<string, string> = {}) {
  const endpoint = inject('dynamodbEndpoint');
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const names = await createTables(client, `t${nanoid(8).replace(/[^A-Za-z0-9]/g, 'x')}-`);
  Object.assign(process.env, tableEnv(names), {
    AWS_ENDPOINT_URL_DYNAMODB: endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    SYNTHESIS_QUEUE_URL: TEST_QUEUE_URL,
    LIFECYCLE_QUEUE_URL: TEST_LIFECYCLE_QUEUE_URL,
    GUARDRAIL_QUEUE_URL: TEST_GUARDRAIL_QUEUE_URL,
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    // The key listings derive their cursor seal from (built here: no key-shaped literal is committed).
    SESSION_SECRET: process.env.SESSION_SECRET ?? randomBytes(32).toString('base64url'),
    // The authorizer names a team's usage key on these (lib/api.ts gives it the same).
    EVALUATION_ROUTES: JSON.stringify(evaluationPaths(OPERATIONS)),
    EVALUATION_FALLBACK_KEY: SHARED_EVALUATION_KEY,
    ...extraEnv,
  });
  return { db: createDocumentClient(client), names };
}

export interface Caller {
  principal: Principal;
  apiToken: string;
}

/** A team with one user of the given role and an API token. */
export async function createCaller(
  db: DynamoDBDocumentClient,
  names: TableNames,
  role: Role = 'admin',
): Promise<Caller> {
  const auth = makeAuthRepository(db, names.Auth, names.Events);
  const created = await makeBootstrapTeam({
    auth,
    clock: systemClock,
    ids: nanoidGenerator,
    usageKeys: noUsageKeys,
  })({
    teamName: `team ${nanoid(5)}`,
    email: `${nanoid(8)}@example.test`,
    userName: 'tester',
    role,
  });
  return {
    apiToken: created.apiToken,
    principal: {
      principalId: created.userId,
      userId: created.userId,
      teamId: created.teamId,
      role,
      method: 'api-token',
      tokenId: created.tokenId,
    },
  };
}

export interface EventInput {
  method: string;
  resource: string;
  pathParameters?: Record<string, string>;
  body?: string | object | null;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  principal?: Principal;
}

/** An API Gateway REST proxy event as the gateway builds it after the authorizer allowed the call. */
export function apiEvent(input: EventInput): APIGatewayProxyEvent {
  const path = input.resource.replace(/\{(\w+)\}/g, (_, name: string) => input.pathParameters?.[name] ?? '');
  const body =
    input.body === undefined || input.body === null
      ? null
      : typeof input.body === 'string'
        ? input.body
        : JSON.stringify(input.body);
  return {
    resource: input.resource,
    path,
    httpMethod: input.method,
    // A client sends Content-Type with a body only, as browsers and curl do.
    headers: { ...(body === null ? {} : { 'content-type': 'application/json' }), ...input.headers },
    multiValueHeaders: {},
    queryStringParameters: input.query ?? null,
    multiValueQueryStringParameters: null,
    pathParameters: input.pathParameters ?? null,
    stageVariables: null,
    body,
    isBase64Encoded: false,
    requestContext: {
      accountId: '123456789012',
      apiId: 'test',
      authorizer: input.principal ? { ...input.principal } : null,
      protocol: 'HTTP/1.1',
      httpMethod: input.method,
      identity: { sourceIp: '127.0.0.1' } as APIGatewayProxyEvent['requestContext']['identity'],
      path: `/prod${path}`,
      stage: 'prod',
      requestId: nanoid(),
      requestTimeEpoch: Date.now(),
      resourceId: 'r',
      resourcePath: input.resource,
    },
  };
}

export function lambdaContext(name = 'test'): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${name}`,
    memoryLimitInMB: '256',
    awsRequestId: nanoid(),
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'test',
    getRemainingTimeInMillis: () => 30_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

export interface ApiResponse {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
  body: any;
  headers: Record<string, string>;
}

export type HttpLambda = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
/** An SQS-fed function (the worker, the judge) as the tests invoke it. */
export type SqsLambda = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/** Invokes an HTTP handler module's `handler` and parses its JSON body. */
export async function invoke(handler: HttpLambda, event: APIGatewayProxyEvent): Promise<ApiResponse> {
  const result = await handler(event, lambdaContext());
  return {
    status: result.statusCode,
    body: result.body ? JSON.parse(result.body) : null,
    headers: (result.headers ?? {}) as Record<string, string>,
  };
}

/** Imports handler modules (after setUpApiEnvironment) and returns their `handler`s by entry name. */
export async function loadHandlers(entries: readonly string[]): Promise<Record<string, HttpLambda>> {
  const loaded = await Promise.all(
    entries.map(async (entry) => [entry, await importHandler<HttpLambda>(entry)] as const),
  );
  return Object.fromEntries(loaded);
}

/** An SQS event as Lambda's event source delivers it, one record per body. */
export function sqsEvent(bodies: string[], receiveCount = 1): SQSEvent {
  return {
    Records: bodies.map((body) => ({
      messageId: nanoid(),
      receiptHandle: nanoid(),
      body,
      attributes: {
        ApproximateReceiveCount: String(receiveCount),
        SentTimestamp: String(Date.now()),
        SenderId: 'test',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:synthesis-jobs',
      awsRegion: 'us-east-1',
    })),
  };
}

/** A pipeline of `teamId` with one manual configuration, written straight to the store. */
export async function storePipeline(
  db: DynamoDBDocumentClient,
  names: TableNames,
  teamId: string,
): Promise<string> {
  const id = nanoid();
  const createdAt = new Date().toISOString();
  await makePipelineRepository(db, names.Data, names.Events).createPipeline(
    { id, teamId, name: 'p', activeConfigurationId: `${id}-c1`, createdAt },
    {
      id: `${id}-c1`,
      pipelineId: id,
      version: 1,
      slots: [{ id: 's', name: 's', kind: 'model', settings: {} }],
      source: 'manual',
      createdAt,
      createdBy: 'u',
    },
  );
  return id;
}
