/* POST /pipelines: creates a pipeline with its first configuration (version 1). */
import { createPipelineBodySchema, pipelineSchema } from '../core/schemas/pipelines.ts';
import { makeCreatePipeline } from '../core/use-cases/pipelines.ts';
import { operationHandler } from '../http/operation.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import { pipelineRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const createPipeline = defineOperation({
  name: 'create-pipeline',
  method: 'POST',
  path: '/pipelines',
  summary: 'Create a pipeline with its first configuration (version 1).',
  access: { data: 'readWrite' },
  body: {
    schema: createPipelineBodySchema,
    required: true,
    example: {
      name: 'Support answers',
      slots: [
        { id: 'retrieve', name: 'Retrieve documents', kind: 'retrieval', settings: { topK: 8 } },
        {
          id: 'answer-model',
          name: 'Answer model',
          kind: 'model',
          settings: { model: 'claude-sonnet-4-5', temperature: 0.2, maxTokens: 1024 },
        },
      ],
    },
  },
  response: { status: 201, schema: pipelineSchema },
  errors: [],
});

export const handler = /* @__PURE__ */ operationHandler(createPipeline, () => {
  const create = makeCreatePipeline({
    pipelines: pipelineRepositoryFromEnv(),
    clock: systemClock,
    ids: nanoidGenerator,
  });
  return async ({ principal, body }) => ({ body: await create(principal, body) });
});
