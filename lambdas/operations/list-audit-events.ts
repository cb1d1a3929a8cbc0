/* GET /audit-events?pipelineId&type&limit&cursor: the team's events with their actors, newest first. */
import * as z from 'zod/mini';
import { nameEventResources } from '../core/event-names.ts';
import { domainEventSchema, EVENT_TYPES, eventTypeSchema } from '../core/events.ts';
import { nameEvents } from '../core/people.ts';
import { idSchema } from '../core/schemas/common.ts';
import { makeListAuditEvents } from '../core/use-cases/audit.ts';
import { withSealedCursors } from '../http/cursors.ts';
import { operationHandler } from '../http/operation.ts';
import { cursorSealFromEnv } from '../wiring/cursors.ts';
import { peopleDirectoryFromEnv, pipelineReadsFromEnv } from '../wiring/repositories.ts';
import { auditLogFromEnv } from '../wiring/webhooks.ts';
import { defineOperation } from './declaration.ts';
import { pageQuery } from './page-query.ts';
import { pageOf } from './parameters.ts';

export const listAuditEvents = defineOperation({
  name: 'list-audit-events',
  method: 'GET',
  path: '/audit-events',
  summary:
    "The team's audit log: every event with who made the change, newest first, kept 400 days. Not for viewers.",
  // data: the pipeline a filter names, whose team is checked before any event is read.
  access: { events: 'read', data: 'read', readsNames: true, sessionSecret: true },
  query: {
    pipelineId: {
      schema: z.optional(idSchema),
      description: 'Only the events of this pipeline.',
      invalid: 'pipelineId must be a pipeline id.',
    },
    type: {
      schema: z.optional(eventTypeSchema),
      description: 'Only events of this type.',
      invalid: `type must be one of ${EVENT_TYPES.join(', ')}.`,
      documented: { type: 'string', enum: [...EVENT_TYPES] },
    },
    ...pageQuery,
  },
  response: { status: 200, schema: pageOf(domainEventSchema) },
  errors: [],
});

export const handler = /* @__PURE__ */ operationHandler(listAuditEvents, () => {
  const pipelines = pipelineReadsFromEnv();
  const list = makeListAuditEvents({ audit: auditLogFromEnv(), pipelines });
  const people = peopleDirectoryFromEnv();
  return withSealedCursors(listAuditEvents, cursorSealFromEnv(), async ({ principal, query }) => {
    const page = await list(
      principal,
      { pipelineId: query.pipelineId, type: query.type },
      { limit: query.limit, cursor: query.cursor },
    );
    const named = await nameEvents(people, principal.teamId, page.items);
    return { body: { ...page, items: await nameEventResources(pipelines, named) } };
  });
});
