import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { nanoid } from 'nanoid';
import { makeBootstrapTeam } from '../../../lambdas/auth/bootstrap.ts';
import { makeUsageKeyOfRequest, noUsageKeys } from '../../../lambdas/auth/usage-keys.ts';
import type { Clock } from '../../../lambdas/core/ports/common.ts';
import type { Role } from '../../../lambdas/core/principal.ts';
import { evaluationPaths, type HttpMethod } from '../../../lambdas/operations/declaration.ts';
import { OPERATIONS } from '../../../lambdas/operations/index.ts';
import { makeTeamUsageKeyStore } from '../../../lambdas/store/auth/usage-keys.ts';
import { nanoidGenerator, systemClock } from '../../../lambdas/wiring/clock.ts';
import { makeAuthRepository } from '../../../lambdas/wiring/repositories.ts';
import {
  GATEWAY_ERRORS,
  gatewayResponseHeaders,
  renderGatewayErrorBody,
} from '../../../lib/gateway-errors.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { localRoutes } from '../../../local/functions.ts';
import { importHandler } from '../../support/function-modules.ts';
import { apiEvent, lambdaContext, SHARED_EVALUATION_KEY, setUpApiEnvironment } from '../api/harness.ts';

/**
 * What the auth tests share: the environment the auth handlers need, users with passwords, and a
 * caller that goes through the authorizer module first and then the route's handler with the
 * authorizer's context, as API Gateway does (401 and 403 come back with the gateway response
 * bodies the stack configures).
 */

export const SESSION_SECRET = 'test-session-signing-key-0123456789abcdefghijklmnop';
export const APP_URL = 'https://app.example.test';

export async function setUpAuthEnvironment(extraEnv: Record<string, string> = {}) {
  const outbox = await mkdtemp(path.join(tmpdir(), 'outbox-'));
  const environment = await setUpApiEnvironment({
    SESSION_SECRET,
    EMAIL_OUTBOX_DIR: outbox,
    APP_URL,
    ...extraEnv,
  });
  return { ...environment, outbox };
}

export interface TestUser {
  userId: string;
  teamId: string;
  email: string;
  password: string;
  apiToken: string;
  tokenId: string;
}

/** A new team with one user of `role` who has a password (hashed for real: about a second). */
export async function createUserWithPassword(
  db: DynamoDBDocumentClient,
  names: TableNames,
  role: Role = 'admin',
): Promise<TestUser> {
  const email = `${nanoid(10)
    .replace(/[^A-Za-z0-9]/g, 'x')
    .toLowerCase()}@example.test`;
  const password = `correct horse ${nanoid(8)}`;
  const created = await makeBootstrapTeam({
    auth: makeAuthRepository(db, names.Auth, names.Events),
    clock: systemClock,
    ids: nanoidGenerator,
    usageKeys: noUsageKeys,
  })({ teamName: `team ${nanoid(5)}`, email, userName: 'tester', password, role });
  return {
    userId: created.userId,
    teamId: created.teamId,
    email,
    password,
    apiToken: created.apiToken,
    tokenId: created.tokenId,
  };
}

type HttpLambda = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
type AuthorizerLambda = (event: APIGatewayRequestAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;

export interface GatewayResponse {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
  body: any;
  headers: Record<string, string>;
  /** The Set-Cookie header values. */
  cookies: string[];
  /** Whether the request reached the route's handler (false: the authorizer refused it). */
  reachedHandler: boolean;
}

export interface Request {
  method: HttpMethod;
  /** The route's resource path, e.g. `/pipelines/{pipelineId}`. */
  resource: string;
  pathParameters?: Record<string, string>;
  headers?: Record<string, string>;
  body?: string | object;
  query?: Record<string, string>;
}

/** API Gateway's own answer of `type`; a Deny's context fills in ACCESS_DENIED's message. */
function gatewayError(
  type: string,
  authorizerContext: Record<string, string> = {},
): Pick<GatewayResponse, 'status' | 'body' | 'headers' | 'cookies' | 'reachedHandler'> {
  const configured = GATEWAY_ERRORS.find((candidate) => candidate.type === type);
  if (!configured) throw new Error(`No gateway response ${type}`);
  return {
    status: Number(configured.statusCode),
    body: JSON.parse(renderGatewayErrorBody(configured, authorizerContext)),
    headers: Object.fromEntries(
      Object.entries(gatewayResponseHeaders(configured)).map(([name, value]) => [name.toLowerCase(), value]),
    ),
    cookies: [],
    reachedHandler: false,
  };
}

/** Calls routes the way API Gateway does, with the real handler modules. */
export class TestGateway {
  private readonly handlers = new Map<string, HttpLambda>();

  constructor(private authorizer?: AuthorizerLambda) {}

  /** Uses another authorizer instance (for example one with an injected clock). */
  withAuthorizer(authorizer: AuthorizerLambda): TestGateway {
    const gateway = new TestGateway(authorizer);
    for (const [entry, handler] of this.handlers) gateway.handlers.set(entry, handler);
    return gateway;
  }

  /** Replaces the module handler of one entry (for example a handler built with an injected clock). */
  override(entry: string, handler: HttpLambda): void {
    this.handlers.set(entry, handler);
  }

  private async handlerFor(entry: string): Promise<HttpLambda> {
    let handler = this.handlers.get(entry);
    if (!handler) {
      handler = await importHandler<HttpLambda>(entry);
      this.handlers.set(entry, handler);
    }
    return handler;
  }

  async call(request: Request): Promise<GatewayResponse> {
    const route = localRoutes().find(
      (candidate) => candidate.method === request.method && candidate.path === request.resource,
    );
    if (!route) throw new Error(`No route ${request.method} ${request.resource}`);
    const event = apiEvent({
      method: request.method,
      resource: request.resource,
      ...(request.pathParameters ? { pathParameters: request.pathParameters } : {}),
      ...(request.headers ? { headers: request.headers } : {}),
      ...(request.body !== undefined ? { body: request.body } : {}),
      ...(request.query ? { query: request.query } : {}),
    });
    if (route.authorized) {
      this.authorizer ??= (await import('../../../lambdas/handlers/authorize.ts')).handler;
      const authorizerEvent: APIGatewayRequestAuthorizerEvent = {
        type: 'REQUEST',
        methodArn: `arn:aws:execute-api:us-east-1:123456789012:test/prod/${request.method}${event.path}`,
        resource: route.path,
        path: event.path,
        httpMethod: request.method,
        headers: event.headers,
        // As API Gateway fills it: every value of every header (here, one each).
        multiValueHeaders: Object.fromEntries(
          Object.entries(event.headers ?? {}).map(([name, value]) => [name, [value ?? '']]),
        ),
        pathParameters: event.pathParameters,
        queryStringParameters: event.queryStringParameters,
        multiValueQueryStringParameters: null,
        stageVariables: null,
        requestContext: event.requestContext as unknown as APIGatewayRequestAuthorizerEvent['requestContext'],
      };
      let result: APIGatewayAuthorizerResult;
      try {
        result = await this.authorizer(authorizerEvent);
      } catch (error) {
        if ((error as Error).message !== 'Unauthorized') throw error;
        return gatewayError('UNAUTHORIZED');
      }
      const statement = result.policyDocument.Statement[0] as { Effect: string; Resource: string };
      if (statement.Effect !== 'Allow' || statement.Resource !== authorizerEvent.methodArn) {
        const context = Object.fromEntries(
          Object.entries(result.context ?? {}).map(([key, value]) => [key, String(value)]),
        );
        return gatewayError('ACCESS_DENIED', context);
      }
      event.requestContext.authorizer = { ...result.context, principalId: result.principalId };
    }
    const handler = await this.handlerFor(route.entry);
    const result = await handler(event, lambdaContext(route.entry));
    const headers = Object.fromEntries(
      Object.entries(result.headers ?? {}).map(([name, value]) => [name.toLowerCase(), String(value)]),
    );
    const setCookies = Object.entries(result.multiValueHeaders ?? {})
      .filter(([name]) => name.toLowerCase() === 'set-cookie')
      .flatMap(([, values]) => values.map(String));
    const isJson = headers['content-type']?.startsWith('application/json') ?? false;
    return {
      status: result.statusCode,
      body: result.body && isJson ? JSON.parse(result.body) : result.body || null,
      headers,
      cookies: setCookies,
      reachedHandler: true,
    };
  }
}

/** The attributes of one Set-Cookie value, names lower-cased. */
export function parseSetCookie(setCookie: string): {
  name: string;
  value: string;
  attributes: Map<string, string>;
} {
  const [pair = '', ...rest] = setCookie.split(';').map((part) => part.trim());
  const separator = pair.indexOf('=');
  const attributes = new Map<string, string>();
  for (const attribute of rest) {
    const equals = attribute.indexOf('=');
    if (equals < 0) attributes.set(attribute.toLowerCase(), '');
    else attributes.set(attribute.slice(0, equals).toLowerCase(), attribute.slice(equals + 1));
  }
  return { name: pair.slice(0, separator), value: pair.slice(separator + 1), attributes };
}

/** A browser's cookie jar, reduced to what these tests need: paths and deletion. */
export class CookieJar {
  private readonly cookies = new Map<string, { value: string; path: string }>();

  store(setCookies: readonly string[]): void {
    for (const setCookie of setCookies) {
      const { name, value, attributes } = parseSetCookie(setCookie);
      if (attributes.get('max-age') === '0') this.cookies.delete(name);
      else this.cookies.set(name, { value, path: attributes.get('path') ?? '/' });
    }
  }

  get(name: string): string | undefined {
    return this.cookies.get(name)?.value;
  }

  /** The Cookie header the browser would send to `path`. */
  headerFor(path: string): string {
    return [...this.cookies]
      .filter(
        ([, cookie]) =>
          path === cookie.path ||
          path.startsWith(cookie.path.endsWith('/') ? cookie.path : `${cookie.path}/`),
      )
      .map(([name, cookie]) => `${name}=${cookie.value}`)
      .join('; ');
  }
}

/** Headers a same-origin fetch from the browser app sends with a state-changing request. */
export const BROWSER_HEADERS = { 'x-requested-with': 'fetch', 'sec-fetch-site': 'same-origin' } as const;

/**
 * A new authorizer instance with an empty credential cache, as a new container would have; with
 * `clock`, one whose cache the test can age by hand. Imported lazily, like every module that
 * creates the logger, so the environment set up before is what it reads.
 */
export async function freshAuthorizer(
  db: DynamoDBDocumentClient,
  names: TableNames,
  clock?: Clock,
): Promise<AuthorizerLambda> {
  const [{ makeAuthorizer }, { makeAuthenticate }, { auditLog }, { sessionSigningKeyFromEnv }] =
    await Promise.all([
      import('../../../lambdas/handlers/authorize.ts'),
      import('../../../lambdas/auth/authenticate.ts'),
      import('../../../lambdas/wiring/auth-services.ts'),
      import('../../../lambdas/wiring/session-secret.ts'),
    ]);
  return makeAuthorizer(
    makeAuthenticate({
      auth: makeAuthRepository(db, names.Auth, names.Events),
      clock: clock ?? systemClock,
      signingKey: sessionSigningKeyFromEnv(),
      audit: auditLog,
    }),
    makeUsageKeyOfRequest({
      store: makeTeamUsageKeyStore({ db, tableName: names.Auth }),
      evaluationRoutes: evaluationPaths(OPERATIONS),
      fallbackKey: SHARED_EVALUATION_KEY,
      clock: clock ?? systemClock,
    }),
  );
}
