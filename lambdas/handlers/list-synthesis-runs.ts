/*
 * Lambda handler of GET /pipelines/{pipelineId}/synthesis-runs: a pipeline's runs, newest
 * first, optionally of one status.
 */
import { ValidationError } from '../core/errors.ts';
import { idSchema, runStatusSchema } from '../core/schemas.ts';
import { makeListRuns } from '../core/use-cases/review.ts';
import { httpHandler, json, pageLimit, pathParam, principalOf, queryParam } from '../platform/http.ts';
import { pipelineRepositoryFromEnv, runRepositoryFromEnv } from '../platform/repositories.ts';

const listRuns = makeListRuns({ runs: runRepositoryFromEnv(), pipelines: pipelineRepositoryFromEnv() });

/** GET /pipelines/{pipelineId}/synthesis-runs?status&limit&cursor: newest first. */
export const handler = httpHandler(async (event) => {
  const pipelineId = pathParam(event, 'pipelineId', idSchema);
  const rawStatus = queryParam(event, 'status');
  const status = rawStatus === undefined ? undefined : runStatusSchema.safeParse(rawStatus);
  if (status && !status.success) {
    throw new ValidationError(`status must be one of ${runStatusSchema.options.join(', ')}.`);
  }
  const page = { limit: pageLimit(event), cursor: queryParam(event, 'cursor') };
  return json(200, await listRuns(principalOf(event), pipelineId, page, status?.data));
});
