/*
 * POST /pipelines/{pipelineId}/proposals {changes, note?}: a person's own changes as a run
 * (synthesisHandler "manual"), generated at once; each change checked as a model's are.
 */
import { nameRun } from '../core/people.ts';
import { idSchema } from '../core/schemas/common.ts';
import { namedRunSchema } from '../core/schemas/people.ts';
import { makeProposeChanges, proposalBodySchema } from '../core/use-cases/proposals.ts';
import { operationHandler } from '../http/operation.ts';
import { locationOf } from '../http/response.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import {
  peopleDirectoryFromEnv,
  pipelineReadsFromEnv,
  runRepositoryFromEnv,
} from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const proposeChanges = defineOperation({
  name: 'propose-changes',
  method: 'POST',
  path: '/pipelines/{pipelineId}/proposals',
  summary:
    'Propose changes by hand: RFC 7396 merge patches of slots of the active configuration become a generated run (synthesisHandler "manual", no model, cost 0) to evaluate, approve and roll out like any. A change whose slot does not exist, whose patch does not apply, or that would make the settings invalid or change nothing is a 400 naming it.',
  access: { runs: 'readWrite', data: 'readWrite', events: 'readWrite', readsNames: true },
  params: { pipelineId: idSchema },
  body: {
    schema: proposalBodySchema,
    required: true,
    example: {
      note: 'Shorter answers',
      changes: [
        {
          slotId: 'answer',
          description: 'Lower the temperature',
          rationale: 'Answers wander',
          patch: { temperature: 0.2 },
        },
      ],
    },
  },
  response: {
    status: 201,
    schema: namedRunSchema,
    headers: { Location: { type: 'string', description: 'The URL of the run.' } },
  },
  errors: [404, 409],
});

export const handler = /* @__PURE__ */ operationHandler(proposeChanges, () => {
  const propose = makeProposeChanges({
    runs: runRepositoryFromEnv(),
    pipelines: pipelineReadsFromEnv(),
    clock: systemClock,
    ids: nanoidGenerator,
  });
  const people = peopleDirectoryFromEnv();
  return async ({ principal, params, body, event }) => {
    const run = await propose(principal, params.pipelineId, body);
    return {
      body: await nameRun(people, run),
      headers: { location: locationOf(event, `/synthesis-runs/${run.id}`) },
    };
  };
});
