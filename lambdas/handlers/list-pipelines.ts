/*
 * Lambda handler of GET /pipelines: the team's pipelines, newest first, a page at a time.
 * Composes the use case with the DynamoDB store.
 */
import { makeListPipelines } from '../core/use-cases/pipelines.ts';
import { httpHandler, json, pageLimit, principalOf, queryParam } from '../platform/http.ts';
import { pipelineRepositoryFromEnv } from '../platform/repositories.ts';

const listPipelines = makeListPipelines({ pipelines: pipelineRepositoryFromEnv() });

/** GET /pipelines?limit&cursor: the team's pipelines, newest first. */
export const handler = httpHandler(async (event) => {
  const page = await listPipelines(principalOf(event), {
    limit: pageLimit(event),
    cursor: queryParam(event, 'cursor'),
  });
  return json(200, page);
});
