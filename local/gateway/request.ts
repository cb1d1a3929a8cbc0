/**
 * The events API Gateway makes of one request: what the authorizer's REQUEST event and the proxy
 * event of the route's function share (the request context, headers, query, path parameters), each
 * event, and the context the authorizer's answer adds.
 */

import type { IncomingMessage } from 'node:http';
import type {
  APIGatewayEventRequestContextWithAuthorizer,
  APIGatewayProxyEvent,
  APIGatewayRequestAuthorizerEvent,
} from 'aws-lambda';
import { isBinaryMediaType } from '../../lambdas/http/binary-media.ts';
import { formatRequestTime, identity, queryParameters, requestHeaders, resourceId } from './events.ts';
import type { GatewayRoute } from './routing.ts';

/** Where the gateway is, as the events name it: its host, stage, region, account and API id. */
export interface GatewayIdentity {
  readonly host: string;
  readonly stage: string;
  readonly region: string;
  readonly accountId: string;
  readonly apiId: string;
}

/** What the authorizer's event and the function's event share, read from one request. */
export interface IncomingRequest {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  readonly route: GatewayRoute;
  readonly headers: Record<string, string>;
  readonly multiValueHeaders: Record<string, string[]>;
  readonly query: ReturnType<typeof queryParameters>;
  readonly pathParameters: Record<string, string> | null;
  readonly requestContext: APIGatewayEventRequestContextWithAuthorizer<undefined>;
}

/** The parts of the events that come from the request and its route. */
export function readRequest(
  gateway: GatewayIdentity,
  request: IncomingMessage,
  matched: {
    requestId: string;
    requestTimeEpoch: number;
    method: string;
    url: URL;
    route: GatewayRoute;
    pathParameters: Record<string, string>;
  },
): IncomingRequest {
  const { requestId, requestTimeEpoch, method, url, route } = matched;
  const path = url.pathname;
  const { headers, multiValueHeaders } = requestHeaders(request);
  const query = queryParameters(url.searchParams);
  const pathParameters = Object.keys(matched.pathParameters).length > 0 ? matched.pathParameters : null;
  const hostHeader = request.headers.host ?? `${gateway.host}`;
  const requestContext: APIGatewayEventRequestContextWithAuthorizer<undefined> = {
    accountId: gateway.accountId,
    apiId: gateway.apiId,
    authorizer: undefined,
    domainName: hostHeader,
    domainPrefix: hostHeader.split('.')[0] ?? hostHeader,
    extendedRequestId: requestId,
    httpMethod: method,
    identity: identity(request),
    path,
    protocol: `HTTP/${request.httpVersion}`,
    requestId,
    requestTime: formatRequestTime(new Date(requestTimeEpoch)),
    requestTimeEpoch,
    resourceId: resourceId(route.path),
    resourcePath: route.path,
    stage: gateway.stage,
  };
  return {
    requestId,
    method,
    path,
    route,
    headers,
    multiValueHeaders,
    query,
    pathParameters,
    requestContext,
  };
}

/** The authorizer's REQUEST event. */
export function authorizerEvent(
  gateway: GatewayIdentity,
  incoming: IncomingRequest,
): APIGatewayRequestAuthorizerEvent {
  const { method, path } = incoming;
  const { region, accountId, apiId, stage } = gateway;
  return {
    type: 'REQUEST',
    methodArn: `arn:aws:execute-api:${region}:${accountId}:${apiId}/${stage}/${method}/${path.replace(/^\//, '')}`,
    resource: incoming.route.path,
    path,
    httpMethod: method,
    headers: incoming.headers,
    multiValueHeaders: incoming.multiValueHeaders,
    pathParameters: incoming.pathParameters,
    queryStringParameters: incoming.query.single,
    multiValueQueryStringParameters: incoming.query.multi,
    stageVariables: null,
    requestContext: incoming.requestContext,
  };
}

function contentTypeOf(headers: Record<string, string | undefined>): string | undefined {
  return Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
}

/** The route function's proxy event, with the authorizer's context when there is one. */
export function proxyEvent(
  incoming: IncomingRequest,
  body: Buffer,
  authorizer: Record<string, string | number> | undefined,
): APIGatewayProxyEvent {
  return {
    resource: incoming.route.path,
    path: incoming.path,
    httpMethod: incoming.method,
    headers: incoming.headers,
    multiValueHeaders: incoming.multiValueHeaders,
    queryStringParameters: incoming.query.single,
    multiValueQueryStringParameters: incoming.query.multi,
    pathParameters: incoming.pathParameters,
    stageVariables: null,
    // Without an authorizer the key is absent (undefined vanishes in the JSON).
    requestContext: { ...incoming.requestContext, authorizer },
    // As API Gateway does for its binary media types: the bytes, base64-encoded.
    ...(body.length > 0 && isBinaryMediaType(contentTypeOf(incoming.headers))
      ? { body: body.toString('base64'), isBase64Encoded: true }
      : { body: body.length === 0 ? null : body.toString('utf8'), isBase64Encoded: false }),
  };
}
