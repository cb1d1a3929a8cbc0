/* POST /synthesis-runs/{id}/reject {reason?}: a reviewer turns a generated run down. */

import { nameRun } from '../core/people.ts';
import { runIdSchema } from '../core/schemas/common.ts';
import { namedRunSchema } from '../core/schemas/people.ts';
import { rejectBodySchema } from '../core/schemas/review.ts';
import { makeRejectRun } from '../core/use-cases/review.ts';
import { operationHandler } from '../http/operation.ts';
import { systemClock } from '../wiring/clock.ts';
import { peopleDirectoryFromEnv, runRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const rejectSynthesisRun = defineOperation({
  name: 'reject-synthesis-run',
  method: 'POST',
  path: '/synthesis-runs/{id}/reject',
  summary: 'Reject a generated run, with an optional reason.',
  access: { runs: 'readWrite', data: 'read', events: 'readWrite', readsNames: true },
  params: { id: runIdSchema },
  body: {
    schema: rejectBodySchema,
    required: false,
    example: { reason: 'The retrieval timeout is already at what our latency budget allows.' },
  },
  response: { status: 200, schema: namedRunSchema },
  errors: [404, 409],
});

export const handler = /* @__PURE__ */ operationHandler(rejectSynthesisRun, () => {
  const reject = makeRejectRun({ runs: runRepositoryFromEnv(), clock: systemClock });
  const people = peopleDirectoryFromEnv();
  return async ({ principal, params, body }) => ({
    body: await nameRun(people, await reject(principal, params.id, body.reason)),
  });
});
