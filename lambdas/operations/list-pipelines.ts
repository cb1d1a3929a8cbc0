/* GET /pipelines?limit&cursor: the team's pipelines, newest first. */
import { pipelineSchema } from '../core/schemas/pipelines.ts';
import { makeListPipelines } from '../core/use-cases/pipelines.ts';
import { withSealedCursors } from '../http/cursors.ts';
import { operationHandler } from '../http/operation.ts';
import { cursorSealFromEnv } from '../wiring/cursors.ts';
import { pipelineReadsFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';
import { pageQuery } from './page-query.ts';
import { pageOf } from './parameters.ts';

export const listPipelines = defineOperation({
  name: 'list-pipelines',
  method: 'GET',
  path: '/pipelines',
  summary: "The team's pipelines, newest first.",
  access: { data: 'read', sessionSecret: true },
  query: pageQuery,
  response: { status: 200, schema: pageOf(pipelineSchema) },
  errors: [],
});

export const handler = /* @__PURE__ */ operationHandler(listPipelines, () => {
  const list = makeListPipelines({ pipelines: pipelineReadsFromEnv() });
  return withSealedCursors(listPipelines, cursorSealFromEnv(), async ({ principal, query }) => ({
    body: await list(principal, query),
  }));
});
