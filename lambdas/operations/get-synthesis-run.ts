/* GET /synthesis-runs/{id}: the run, for polling. */

import { nameRun } from '../core/people.ts';
import { runIdSchema } from '../core/schemas/common.ts';
import { namedRunSchema } from '../core/schemas/people.ts';
import { makeGetSynthesisRun } from '../core/use-cases/synthesis.ts';
import { operationHandler } from '../http/operation.ts';
import { peopleDirectoryFromEnv, runRepositoryFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const getSynthesisRun = defineOperation({
  name: 'get-synthesis-run',
  method: 'GET',
  path: '/synthesis-runs/{id}',
  summary: 'A synthesis run; poll it until generated or failed.',
  access: { runs: 'read', readsNames: true },
  params: { id: runIdSchema },
  response: { status: 200, schema: namedRunSchema },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(getSynthesisRun, () => {
  // One GetItem: a run of a deleted pipeline is hidden on the run itself (see delete-pipeline).
  const getRun = makeGetSynthesisRun({ runs: runRepositoryFromEnv() });
  const people = peopleDirectoryFromEnv();
  return async ({ principal, params }) => ({
    body: await nameRun(people, await getRun(principal, params.id)),
  });
});
