/* GET /deletions/{id}: a pipeline deletion's receipt (pending, then completed with its counts). */
import { deletionReceiptSchema } from '../core/lifecycle.ts';
import { idSchema } from '../core/schemas/common.ts';
import { makeGetDeletion } from '../core/use-cases/lifecycle.ts';
import { operationHandler } from '../http/operation.ts';
import { deletionRequestsFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const getDeletion = defineOperation({
  name: 'get-deletion',
  method: 'GET',
  path: '/deletions/{id}',
  summary: "A pipeline deletion's receipt: pending, then completed with the counts of what was removed.",
  access: { runs: 'read', data: 'read' },
  params: { id: idSchema },
  response: { status: 200, schema: deletionReceiptSchema },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(getDeletion, () => {
  const get = makeGetDeletion({ deletions: deletionRequestsFromEnv() });
  return async ({ principal, params }) => ({ body: await get(principal, params.id) });
});
