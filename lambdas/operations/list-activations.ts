/* GET /pipelines/{pipelineId}/activations?limit&cursor: which configuration was active when, newest first. */

import { nameActivations } from '../core/people.ts';
import { idSchema } from '../core/schemas/common.ts';
import { namedActivationSchema } from '../core/schemas/people.ts';
import { makeListActivations } from '../core/use-cases/activations.ts';
import { withSealedCursors } from '../http/cursors.ts';
import { operationHandler } from '../http/operation.ts';
import { cursorSealFromEnv } from '../wiring/cursors.ts';
import { peopleDirectoryFromEnv, pipelineReadsFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';
import { pageQuery } from './page-query.ts';
import { pageOf } from './parameters.ts';

export const listActivations = defineOperation({
  name: 'list-activations',
  method: 'GET',
  path: '/pipelines/{pipelineId}/activations',
  summary: "The pipeline's configuration history, newest first.",
  access: { data: 'read', readsNames: true, sessionSecret: true },
  params: { pipelineId: idSchema },
  query: pageQuery,
  response: { status: 200, schema: pageOf(namedActivationSchema) },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(listActivations, () => {
  const list = makeListActivations({ pipelines: pipelineReadsFromEnv() });
  const people = peopleDirectoryFromEnv();
  return withSealedCursors(listActivations, cursorSealFromEnv(), async ({ principal, params, query }) => {
    const page = await list(principal, params.pipelineId, query);
    return { body: { ...page, items: await nameActivations(people, principal.teamId, page.items) } };
  });
});
