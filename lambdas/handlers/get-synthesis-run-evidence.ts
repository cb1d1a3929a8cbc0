/*
 * Lambda handler of GET /synthesis-runs/{id}/evidence: the signals and executions a run's
 * findings cite.
 */
import { runIdSchema } from '../core/schemas.ts';
import { makeGetRunEvidence } from '../core/use-cases/synthesis.ts';
import { httpHandler, json, pathParam, principalOf } from '../platform/http.ts';
import { evidenceStoreFromEnv, runRepositoryFromEnv } from '../platform/repositories.ts';

const getEvidence = makeGetRunEvidence({ runs: runRepositoryFromEnv(), evidence: evidenceStoreFromEnv() });

/** GET /synthesis-runs/{id}/evidence: the signals and executions the run's findings cite. */
export const handler = httpHandler(async (event) => {
  const evidence = await getEvidence(principalOf(event), pathParam(event, 'id', runIdSchema));
  return json(200, evidence);
});
