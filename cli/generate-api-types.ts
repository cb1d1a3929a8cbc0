/**
 * Generates cli/api-types.ts, the typed client's types, from the OpenAPI document that
 * GET /openapi.json serves (openapi-typescript). `npm run generate:client` rewrites the file; a
 * test regenerates it and fails when the committed one has drifted from the document.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';
import { OPERATIONS } from '../lambdas/operations/index.ts';
import { buildOpenApiDocument } from '../lambdas/operations/openapi.ts';

export const API_TYPES_FILE = fileURLToPath(new URL('./api-types.ts', import.meta.url));

/** The text of cli/api-types.ts for the current document. */
export async function generateApiTypes(): Promise<string> {
  const document = buildOpenApiDocument(OPERATIONS) as unknown as OpenAPI3;
  const ast = await openapiTS(document, { silent: true, alphabetize: false });
  return `${COMMENT_HEADER}// Generated from GET /openapi.json by \`npm run generate:client\`: edit the operation modules in lambdas/operations/, not this file.\n\n${astToString(ast)}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await writeFile(API_TYPES_FILE, await generateApiTypes());
  console.log(`wrote ${API_TYPES_FILE}`);
}
