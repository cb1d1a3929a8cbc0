/* GET /pipelines/{pipelineId}/signals?kind&slotId&severity&since&until&limit&cursor: signals, newest first. */
import * as z from 'zod/mini';
import { idSchema, slotKindSchema, timestampSchema } from '../core/schemas/common.ts';
import { severitySchema, signalSchema } from '../core/schemas/records.ts';
import { makeListSignals } from '../core/use-cases/record-reads.ts';
import { withSealedCursors } from '../http/cursors.ts';
import { operationHandler } from '../http/operation.ts';
import { systemClock } from '../wiring/clock.ts';
import { cursorSealFromEnv } from '../wiring/cursors.ts';
import {
  pipelineReadsFromEnv,
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
  summary:
    "The pipeline's signals, newest first by occurrence, optionally by kind, slot, severity and a time window (occurredAt).",
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
    severity: {
      schema: z.optional(severitySchema),
      description: 'Only signals of this severity.',
      invalid: 'severity must be info, warning or critical.',
      documented: { type: 'string', enum: ['info', 'warning', 'critical'] },
    },
    since: {
      schema: z.optional(timestampSchema),
      description:
        "Only signals that occurred at or after this time (UTC, e.g. 2026-12-01T00:00:00Z); the team's retention window bounds it.",
      invalid: 'since must be a UTC timestamp such as 2026-12-01T00:00:00Z.',
      documented: { type: 'string', format: 'date-time' },
    },
    until: {
      schema: z.optional(timestampSchema),
      description: 'Only signals that occurred at or before this time (UTC); not before `since`.',
      invalid: 'until must be a UTC timestamp such as 2026-12-01T00:00:00Z.',
      documented: { type: 'string', format: 'date-time' },
    },
  },
  response: { status: 200, schema: pageOf(signalSchema) },
  errors: [400, 404],
});

export const handler = /* @__PURE__ */ operationHandler(listSignals, () => {
  const list = makeListSignals({
    pipelines: pipelineReadsFromEnv(),
    settings: teamSettingsStoreFromEnv(),
    reads: recordReadsFromEnv(),
    clock: systemClock,
  });
  return withSealedCursors(listSignals, cursorSealFromEnv(), async ({ principal, params, query }) => ({
    body: await list(
      principal,
      params.pipelineId,
      {
        kind: query.kind,
        slotId: query.slotId,
        severity: query.severity,
        occurredFrom: query.since,
        occurredUntil: query.until,
      },
      { limit: query.limit, cursor: query.cursor },
    ),
  }));
});
