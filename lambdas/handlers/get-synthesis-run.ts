/*
 * Lambda handler of GET /synthesis-runs/{id}: one run, which clients poll until it is
 * generated or failed.
 */
import { runIdSchema } from '../core/schemas.ts';
import { makeGetSynthesisRun } from '../core/use-cases/synthesis.ts';
import { httpHandler, json, pathParam, principalOf } from '../platform/http.ts';
import { runRepositoryFromEnv } from '../platform/repositories.ts';

const getSynthesisRun = makeGetSynthesisRun({ runs: runRepositoryFromEnv() });

/** GET /synthesis-runs/{id}: the run, for polling. */
export const handler = httpHandler(async (event) => {
  const run = await getSynthesisRun(principalOf(event), pathParam(event, 'id', runIdSchema));
  return json(200, run);
});
