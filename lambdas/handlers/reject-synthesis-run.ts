/*
 * Lambda handler of POST /synthesis-runs/{id}/reject: a reviewer turns a generated run
 * down, with an optional reason.
 */
import { rejectBodySchema, runIdSchema } from '../core/schemas.ts';
import { makeRejectRun } from '../core/use-cases/review.ts';
import { systemClock } from '../platform/clock.ts';
import { httpHandler, json, parseBody, pathParam, principalOf } from '../platform/http.ts';
import { runRepositoryFromEnv } from '../platform/repositories.ts';

const rejectRun = makeRejectRun({ runs: runRepositoryFromEnv(), clock: systemClock });

/** POST /synthesis-runs/{id}/reject {reason?}: 200 with the rejected run; 409 unless generated. */
export const handler = httpHandler(async (event) => {
  const runId = pathParam(event, 'id', runIdSchema);
  const { reason } = parseBody(event, rejectBodySchema, { optional: true });
  return json(200, await rejectRun(principalOf(event), runId, reason));
});
