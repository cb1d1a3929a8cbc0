/* GET /pipelines/{pipelineId}/synthesis-runs?status&limit&cursor: a pipeline's runs, newest first. */
import * as z from 'zod/mini';
import { nameRuns } from '../core/people.ts';
import { idSchema } from '../core/schemas/common.ts';
import { namedRunSchema } from '../core/schemas/people.ts';
import { runStatusSchema } from '../core/schemas/runs.ts';
import { makeListRuns } from '../core/use-cases/review.ts';
import { withSealedCursors } from '../http/cursors.ts';
import { operationHandler } from '../http/operation.ts';
import { cursorSealFromEnv } from '../wiring/cursors.ts';
import {
  peopleDirectoryFromEnv,
  pipelineReadsFromEnv,
  runRepositoryFromEnv,
} from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';
import { pageQuery } from './page-query.ts';
import { pageOf } from './parameters.ts';

export const listSynthesisRuns = defineOperation({
  name: 'list-synthesis-runs',
  method: 'GET',
  path: '/pipelines/{pipelineId}/synthesis-runs',
  summary: "A pipeline's runs, newest first; ?status filters.",
  access: { runs: 'read', data: 'read', readsNames: true, sessionSecret: true },
  params: { pipelineId: idSchema },
  query: {
    status: {
      schema: z.optional(runStatusSchema),
      description: 'Only runs in this status.',
      invalid: `status must be one of ${runStatusSchema.options.join(', ')}.`,
      documented: { type: 'string', enum: [...runStatusSchema.options] },
    },
    ...pageQuery,
  },
  response: { status: 200, schema: pageOf(namedRunSchema) },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(listSynthesisRuns, () => {
  const list = makeListRuns({ runs: runRepositoryFromEnv(), pipelines: pipelineReadsFromEnv() });
  const people = peopleDirectoryFromEnv();
  return withSealedCursors(listSynthesisRuns, cursorSealFromEnv(), async ({ principal, params, query }) => {
    const page = await list(
      principal,
      params.pipelineId,
      { limit: query.limit, cursor: query.cursor },
      query.status,
    );
    return { body: { ...page, items: await nameRuns(people, page.items) } };
  });
});
