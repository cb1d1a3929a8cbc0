import { z } from 'zod';
import { idSchema, synthesizeBodySchema } from '../core/schemas.ts';
import { DEFAULT_SYNTHESIS_HANDLER } from '../core/synthesis-handlers.ts';
import { makeStartSynthesis } from '../core/use-cases/synthesis.ts';
import { nanoidGenerator, systemClock } from '../platform/clock.ts';
import { readConfig } from '../platform/config.ts';
import { httpHandler, json, parseBody, pathParam, principalOf, runLocation } from '../platform/http.ts';
import { pipelineRepositoryFromEnv, queueUrl, runRepositoryFromEnv } from '../platform/repositories.ts';
import { getSqsClient, makeSqsJobQueue } from '../platform/sqs-queue.ts';

const config = readConfig({
  SYNTHESIS_QUEUE_URL: queueUrl,
  DEFAULT_SYNTHESIS_HANDLER: z.string().min(1).default(DEFAULT_SYNTHESIS_HANDLER),
});

const startSynthesis = makeStartSynthesis({
  runs: runRepositoryFromEnv(),
  pipelines: pipelineRepositoryFromEnv(),
  queue: makeSqsJobQueue(getSqsClient(), config.SYNTHESIS_QUEUE_URL),
  clock: systemClock,
  ids: nanoidGenerator,
  defaultHandler: config.DEFAULT_SYNTHESIS_HANDLER,
});

/** POST /pipelines/{pipelineId}/synthesize: 202 with the pending run and its Location. */
export const handler = httpHandler(async (event) => {
  const principal = principalOf(event);
  const pipelineId = pathParam(event, 'pipelineId', idSchema);
  const body = parseBody(event, synthesizeBodySchema, { optional: true });
  const run = await startSynthesis(principal, pipelineId, body);
  return json(202, run, { location: runLocation(event, run.id) });
});
