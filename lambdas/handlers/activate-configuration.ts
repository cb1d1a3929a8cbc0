/*
 * Lambda handler of POST /pipelines/{pipelineId}/configurations/{configurationId}/activate:
 * rolls a pipeline's active configuration back or forward.
 */
import { activateBodySchema, idSchema } from '../core/schemas.ts';
import { makeActivateConfiguration } from '../core/use-cases/review.ts';
import { nanoidGenerator, systemClock } from '../platform/clock.ts';
import { httpHandler, json, parseBody, pathParam, principalOf } from '../platform/http.ts';
import { pipelineRepositoryFromEnv, runRepositoryFromEnv } from '../platform/repositories.ts';

const activateConfiguration = makeActivateConfiguration({
  runs: runRepositoryFromEnv(),
  pipelines: pipelineRepositoryFromEnv(),
  clock: systemClock,
  ids: nanoidGenerator,
});

/** POST /pipelines/{pipelineId}/configurations/{configurationId}/activate {reason?}: roll back or forward. */
export const handler = httpHandler(async (event) => {
  const pipelineId = pathParam(event, 'pipelineId', idSchema);
  const configurationId = pathParam(event, 'configurationId', idSchema);
  const { reason } = parseBody(event, activateBodySchema, { optional: true });
  return json(200, await activateConfiguration(principalOf(event), pipelineId, configurationId, reason));
});
