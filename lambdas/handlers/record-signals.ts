/*
 * Lambda handler of POST /pipelines/{pipelineId}/signals: records a batch of feedback
 * signals, the evidence synthesis reads.
 */
import { idSchema, recordSignalsBodySchema } from '../core/schemas.ts';
import { makeRecordSignals } from '../core/use-cases/pipelines.ts';
import { nanoidGenerator, systemClock } from '../platform/clock.ts';
import { httpHandler, json, parseBody, pathParam, principalOf } from '../platform/http.ts';
import { pipelineRepositoryFromEnv } from '../platform/repositories.ts';

const recordSignals = makeRecordSignals({
  pipelines: pipelineRepositoryFromEnv(),
  clock: systemClock,
  ids: nanoidGenerator,
});

/** POST /pipelines/{pipelineId}/signals {signals}: 201 with every recorded signal. */
export const handler = httpHandler(async (event) => {
  const pipelineId = pathParam(event, 'pipelineId', idSchema);
  const { signals } = parseBody(event, recordSignalsBodySchema);
  return json(201, { signals: await recordSignals(principalOf(event), pipelineId, signals) });
});
