/*
 * Lambda handler of GET /openapi.json: the API's OpenAPI document, built once per container
 * from the route table.
 */
import { httpHandler, json } from '../platform/http.ts';
import { buildOpenApiDocument } from '../platform/openapi.ts';
import { ROUTES } from '../routes.ts';

// Built once per container: the document depends only on the code.
const document = buildOpenApiDocument(ROUTES);

/** GET /openapi.json: the API's OpenAPI 3.1 document, generated from the route table and zod schemas. */
export const handler = httpHandler(async () =>
  json(200, document, { 'cache-control': 'public, max-age=300' }),
);
