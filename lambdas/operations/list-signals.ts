/* GET /pipelines/{pipelineId}/signals?kind&slotId&limit&cursor: signals, newest first. */
import * as z from 'zod/mini';
import { idSchema, slotKindSchema } from '../core/schemas/common.ts';
import { signalSchema } from '../core/schemas/records.ts';
import { makeListSignals } from '../core/use-cases/record-reads.ts';
import { withSealedCursors } from '../http/cursors.ts';
import { operationHandler } from '../http/operation.ts';
import { systemClock } from '../wiring/clock.ts';
import { cursorSealFromEnv } from '../wiring/cursors.ts';
import {
  pipelineRepositoryFromEnv,
  recordReadsFromEnv,
  teamSettingsStoreFromEnv,
} from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';
import { pageQuery } from './page-query.ts';
import { pageOf } from './parameters.ts';

export const listSignals = defineOperation({
  name: 'list-signals',
  method: 'GET',
  path: '/pipelines/{pipelineId}/signals',
  summary: "The pipeline's signals, newest first by occurrence, optionally by kind and slot.",
  access: { data: 'read', sessionSecret: true },
  params: { pipelineId: idSchema },
  query: {
    ...pageQuery,
    kind: {
      schema: z.optional(slotKindSchema),
      description: 'Only signals of this kind.',
      invalid: 'kind must be a signal kind (lower case, e.g. timeout).',
      documented: { type: 'string' },
    },
    slotId: {
      schema: z.optional(idSchema),
      description: 'Only signals of this slot.',
      invalid: 'slotId must be a slot id.',
      documented: { type: 'string' },
    },
  },
  response: { status: 200, schema: pageOf(signalSchema) },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(listSignals, () => {
  const list = makeListSignals({
    pipelines: pipelineRepositoryFromEnv(),
    settings: teamSettingsStoreFromEnv(),
    reads: recordReadsFromEnv(),
    clock: systemClock,
  });
  return withSealedCursors(listSignals, cursorSealFromEnv(), async ({ principal, params, query }) => ({
    body: await list(
      principal,
      params.pipelineId,
      { kind: query.kind, slotId: query.slotId },
      { limit: query.limit, cursor: query.cursor },
    ),
  }));
});
