/* GET /pipelines/{pipelineId}/monitors?limit&cursor: the pipeline's monitors and their state, newest first. */
import { idSchema } from '../core/schemas/common.ts';
import { monitorSchema } from '../core/schemas/monitors.ts';
import { makeListMonitors } from '../core/use-cases/monitors.ts';
import { withSealedCursors } from '../http/cursors.ts';
import { operationHandler } from '../http/operation.ts';
import { cursorSealFromEnv } from '../wiring/cursors.ts';
import { monitorRepositoryFromEnv, pipelineReadsFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';
import { pageQuery } from './page-query.ts';
import { pageOf } from './parameters.ts';

export const listMonitors = defineOperation({
  name: 'list-monitors',
  method: 'GET',
  path: '/pipelines/{pipelineId}/monitors',
  summary:
    "The pipeline's monitors with their state (ok, alert, no_data), since when and the last value, newest first.",
  access: { data: 'read', sessionSecret: true },
  params: { pipelineId: idSchema },
  query: pageQuery,
  response: { status: 200, schema: pageOf(monitorSchema) },
  errors: [400, 404],
});

export const handler = /* @__PURE__ */ operationHandler(listMonitors, () => {
  const list = makeListMonitors({
    pipelines: pipelineReadsFromEnv(),
    monitors: monitorRepositoryFromEnv(),
  });
  return withSealedCursors(listMonitors, cursorSealFromEnv(), async ({ principal, params, query }) => ({
    body: await list(principal, params.pipelineId, query),
  }));
});
