/*
 * Lambda handler of GET /pipelines/{pipelineId}/configurations/{configurationId}: one
 * configuration version of a pipeline.
 */
import { idSchema } from '../core/schemas.ts';
import { makeGetConfiguration } from '../core/use-cases/pipelines.ts';
import { httpHandler, json, pathParam, principalOf } from '../platform/http.ts';
import { pipelineRepositoryFromEnv } from '../platform/repositories.ts';

const getConfiguration = makeGetConfiguration({ pipelines: pipelineRepositoryFromEnv() });

/** GET /pipelines/{pipelineId}/configurations/{configurationId}. */
export const handler = httpHandler(async (event) => {
  const configuration = await getConfiguration(
    principalOf(event),
    pathParam(event, 'pipelineId', idSchema),
    pathParam(event, 'configurationId', idSchema),
  );
  return json(200, configuration);
});
