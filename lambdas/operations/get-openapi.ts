/*
 * GET /openapi.json: the API's OpenAPI 3.1 document, generated from the operation declarations,
 * listing first the origin it was fetched from.
 */
import { operationHandler } from '../http/operation.ts';
import { type HttpEvent, locationOf } from '../http/response.ts';
import { defineOperation } from './declaration.ts';
import { documentServedFrom } from './openapi.ts';

export const getOpenApi = defineOperation({
  name: 'get-openapi',
  method: 'GET',
  path: '/openapi.json',
  summary: 'This document.',
  access: {},
  public:
    "The API's OpenAPI description, generated from the operation declarations and their schemas, so that clients and tools can be built before anyone holds a credential. It holds no data and reads nothing but the code.",
  response: { status: 200, schema: { type: 'object' } },
  errors: [],
  // The document, written from the declarations before the function is bundled: it carries the
  // document, not every operation module (lambdas/operations/openapi-build.ts).
  buildsFirst: ['lambdas/operations/openapi-build.ts'],
});

/** A host as a URL may carry it: a name or IPv4 address, or a bracketed IPv6 one, and a port. */
const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** The value of the last header called `name` (any case): a gateway adds its own after the client's. */
function lastHeader(event: HttpEvent, name: string): string | undefined {
  let found: string | undefined;
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === name && value !== undefined) found = value;
  }
  return found;
}

/**
 * The origin and stage path the request reached the API at (`https://abc.execute-api…/prod`,
 * `http://127.0.0.1:3000`), from Host, X-Forwarded-Proto and the stage prefix; undefined when the
 * Host is not one a URL can hold, so a forged header never becomes a server of the document.
 */
export function requestOrigin(event: HttpEvent): string | undefined {
  const host = lastHeader(event, 'host') ?? event.requestContext?.domainName;
  if (host === undefined || !HOST.test(host)) return undefined;
  const forwarded = lastHeader(event, 'x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  const scheme = forwarded === 'http' ? 'http' : 'https';
  return `${scheme}://${host}${locationOf(event, '')}`;
}

export const handler = /* @__PURE__ */ operationHandler(getOpenApi, () => {
  // Imported when the function is composed, not when the list of operations is read: the script
  // that writes the module reads that list (lambdas/operations/openapi-build.ts).
  const document = import('./generated/openapi-document.js').then((module) => module.OPENAPI_DOCUMENT);
  return async ({ event }) => ({
    body: documentServedFrom(await document, requestOrigin(event)),
    // A cache must not hand one origin's document to a request for another.
    headers: { 'cache-control': 'public, max-age=300', vary: 'Host, X-Forwarded-Proto' },
  });
});
