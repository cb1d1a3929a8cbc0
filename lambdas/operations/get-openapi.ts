/* GET /openapi.json: the API's OpenAPI 3.1 document, generated from the operation declarations. */
import { operationHandler } from '../http/operation.ts';
import { defineOperation } from './declaration.ts';
import { buildOpenApiDocument } from './openapi.ts';

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
});

export const handler = /* @__PURE__ */ operationHandler(getOpenApi, async () => {
  // The list includes this module: read it once the modules have loaded, not while they load.
  const { OPERATIONS } = await import('./index.ts');
  // Built once per execution environment: the document depends only on the code.
  const document = buildOpenApiDocument(OPERATIONS);
  return async () => ({ body: document, headers: { 'cache-control': 'public, max-age=300' } });
});
