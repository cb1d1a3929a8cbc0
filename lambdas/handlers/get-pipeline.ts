/*
 * Lambda handler of GET /pipelines/{pipelineId}: one pipeline of the caller's team.
 * Composes the use case with the DynamoDB store.
 */
import { idSchema } from '../core/schemas.ts';
import { makeGetPipeline } from '../core/use-cases/pipelines.ts';
import { httpHandler, json, pathParam, principalOf } from '../platform/http.ts';
import { pipelineRepositoryFromEnv } from '../platform/repositories.ts';

const getPipeline = makeGetPipeline({ pipelines: pipelineRepositoryFromEnv() });

/** GET /pipelines/{pipelineId}. */
export const handler = httpHandler(async (event) => {
  return json(200, await getPipeline(principalOf(event), pathParam(event, 'pipelineId', idSchema)));
});
