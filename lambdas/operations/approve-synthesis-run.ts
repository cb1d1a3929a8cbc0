/*
 * POST /synthesis-runs/{id}/approve {changeIds?, rebase?, rollout?}: the chosen changes become the
 * active configuration (or start a rollout), atomically, when the pipeline's approval rules allow it
 * (an admin's `override` passes its evaluation rules).
 */

import { nameRun } from '../core/people.ts';
import { runIdSchema } from '../core/schemas/common.ts';
import { namedRunSchema } from '../core/schemas/people.ts';
import { approveBodySchema } from '../core/schemas/review.ts';
import { makeApproveRun } from '../core/use-cases/approval.ts';
import { operationHandler } from '../http/operation.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import {
  approvalRulesStoreFromEnv,
  configurationVersionsFromEnv,
  peopleDirectoryFromEnv,
  pipelineReadsFromEnv,
  runRepositoryFromEnv,
} from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const approveSynthesisRun = defineOperation({
  name: 'approve-synthesis-run',
  method: 'POST',
  path: '/synthesis-runs/{id}/approve',
  summary:
    'Approve a generated run, all of its changes or some (changeIds), optionally rebased onto the active configuration; ' +
    'the applied configuration becomes active, or with `rollout` is served to part of the traffic. 409 with `details.conflicts` when a rebase cannot apply.',
  access: { runs: 'readWrite', data: 'readWrite', events: 'readWrite', settings: 'read', readsNames: true },
  params: { id: runIdSchema },
  body: {
    schema: approveBodySchema,
    required: false,
    example: { changeIds: ['1', '3'], rebase: true, rollout: { percent: 10, autoPromote: true } },
  },
  response: { status: 200, schema: namedRunSchema },
  errors: [404, 409],
});

export const handler = /* @__PURE__ */ operationHandler(approveSynthesisRun, () => {
  const approve = makeApproveRun({
    runs: runRepositoryFromEnv(),
    pipelines: pipelineReadsFromEnv(),
    rollouts: configurationVersionsFromEnv(),
    clock: systemClock,
    ids: nanoidGenerator,
    approvalRules: approvalRulesStoreFromEnv(),
  });
  const people = peopleDirectoryFromEnv();
  return async ({ principal, params, body }) => ({
    body: await nameRun(people, await approve(principal, params.id, body)),
  });
});
