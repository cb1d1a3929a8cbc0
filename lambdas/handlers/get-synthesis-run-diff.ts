/*
 * Lambda handler of GET /synthesis-runs/{id}/diff: a run's base and proposed configurations
 * compared slot by slot.
 */
import { runIdSchema } from '../core/schemas.ts';
import { makeDiffRun } from '../core/use-cases/review.ts';
import { httpHandler, json, pathParam, principalOf } from '../platform/http.ts';
import { pipelineRepositoryFromEnv, runRepositoryFromEnv } from '../platform/repositories.ts';

const diffRun = makeDiffRun({ runs: runRepositoryFromEnv(), pipelines: pipelineRepositoryFromEnv() });

/** GET /synthesis-runs/{id}/diff: base and proposed configurations compared slot by slot. */
export const handler = httpHandler(async (event) => {
  return json(200, await diffRun(principalOf(event), pathParam(event, 'id', runIdSchema)));
});
