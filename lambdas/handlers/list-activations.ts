/*
 * Lambda handler of GET /pipelines/{pipelineId}/activations: which configuration was active
 * when, newest first, a page at a time.
 */
import { idSchema } from '../core/schemas.ts';
import { makeListActivations } from '../core/use-cases/review.ts';
import { httpHandler, json, pageLimit, pathParam, principalOf, queryParam } from '../platform/http.ts';
import { pipelineRepositoryFromEnv } from '../platform/repositories.ts';

const listActivations = makeListActivations({ pipelines: pipelineRepositoryFromEnv() });

/** GET /pipelines/{pipelineId}/activations?limit&cursor: which configuration was active when, newest first. */
export const handler = httpHandler(async (event) => {
  const page = { limit: pageLimit(event), cursor: queryParam(event, 'cursor') };
  return json(200, await listActivations(principalOf(event), pathParam(event, 'pipelineId', idSchema), page));
});
