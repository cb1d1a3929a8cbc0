/*
 * Lambda handler of POST /pipelines/{pipelineId}/executions: records a batch of pipeline
 * executions, the evidence synthesis reads.
 */
import { idSchema, recordExecutionsBodySchema } from '../core/schemas.ts';
import { makeRecordExecutions } from '../core/use-cases/pipelines.ts';
import { nanoidGenerator, systemClock } from '../platform/clock.ts';
import { httpHandler, json, parseBody, pathParam, principalOf } from '../platform/http.ts';
import { pipelineRepositoryFromEnv } from '../platform/repositories.ts';

const recordExecutions = makeRecordExecutions({
  pipelines: pipelineRepositoryFromEnv(),
  clock: systemClock,
  ids: nanoidGenerator,
});

/** POST /pipelines/{pipelineId}/executions {executions}: 201 with every recorded execution. */
export const handler = httpHandler(async (event) => {
  const pipelineId = pathParam(event, 'pipelineId', idSchema);
  const { executions } = parseBody(event, recordExecutionsBodySchema);
  return json(201, { executions: await recordExecutions(principalOf(event), pipelineId, executions) });
});
