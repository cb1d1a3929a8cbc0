/*
 * Lambda handler of POST /pipelines: creates a pipeline with its first configuration.
 * Composes the use case with the DynamoDB store.
 */
import { createPipelineBodySchema } from '../core/schemas.ts';
import { makeCreatePipeline } from '../core/use-cases/pipelines.ts';
import { nanoidGenerator, systemClock } from '../platform/clock.ts';
import { httpHandler, json, parseBody, principalOf } from '../platform/http.ts';
import { pipelineRepositoryFromEnv } from '../platform/repositories.ts';

const createPipeline = makeCreatePipeline({
  pipelines: pipelineRepositoryFromEnv(),
  clock: systemClock,
  ids: nanoidGenerator,
});

/** POST /pipelines: 201 with the pipeline; its first configuration is version 1. */
export const handler = httpHandler(async (event) => {
  const pipeline = await createPipeline(principalOf(event), parseBody(event, createPipelineBodySchema));
  return json(201, pipeline);
});
