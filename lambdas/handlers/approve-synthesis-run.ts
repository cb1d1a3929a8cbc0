/*
 * Lambda handler of POST /synthesis-runs/{id}/approve: approving a generated run activates
 * its proposed configuration.
 */
import { runIdSchema } from '../core/schemas.ts';
import { makeApproveRun } from '../core/use-cases/review.ts';
import { nanoidGenerator, systemClock } from '../platform/clock.ts';
import { httpHandler, json, pathParam, principalOf } from '../platform/http.ts';
import { pipelineRepositoryFromEnv, runRepositoryFromEnv } from '../platform/repositories.ts';

const approveRun = makeApproveRun({
  runs: runRepositoryFromEnv(),
  pipelines: pipelineRepositoryFromEnv(),
  clock: systemClock,
  ids: nanoidGenerator,
});

/** POST /synthesis-runs/{id}/approve: 200 with the approved run; 409 unless generated on the active base. */
export const handler = httpHandler(async (event) => {
  return json(200, await approveRun(principalOf(event), pathParam(event, 'id', runIdSchema)));
});
