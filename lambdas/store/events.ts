/*
 * The events table (keys: store/keys.ts): the transaction item that writes an event with its change
 * (`eventPut`, the outbox), and the team's audit log read back newest first.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type DomainEvent, domainEventSchema, type EventType } from '../core/events.ts';
import type { PageRequest } from '../core/ports.ts';
import type { Page } from '../core/schemas.ts';
import type { AuditLog } from '../core/use-cases/audit.ts';
import { putNew } from './conditions.ts';
import { itemReader } from './items.ts';
import {
  eventIndexKey,
  eventKey,
  KEY_ATTRIBUTES,
  pipelineEventsPartition,
  teamEventsPartition,
} from './keys.ts';
import { queryPage } from './query-page.ts';

/** The audit log keeps an event this long (DESIGN.md §8), then TTL removes it. */
export const EVENT_RETENTION_DAYS = 400;

/** Standard Webhooks payloads stay small; ours hold ids and states only, far below this. */
export const MAX_EVENT_BYTES = 20 * 1024;

/** The stored event: the envelope and its id, the keys, and the TTL. */
export function eventItem(event: DomainEvent): Record<string, unknown> {
  const size = Buffer.byteLength(JSON.stringify(event));
  if (size >= MAX_EVENT_BYTES) {
    // A programming error (an event carrying a record instead of ids), never a client's.
    throw new Error(`Event ${event.type} is ${size} bytes; an event holds ids and states, under 20 KB.`);
  }
  return {
    ...eventKey(event),
    ...eventIndexKey(event),
    ...event,
    expiresAtEpoch: Math.ceil(Date.parse(event.timestamp) / 1000) + EVENT_RETENTION_DAYS * 86_400,
  };
}

/**
 * The transaction item that writes `event` with the change it describes: add it to the change's
 * TransactItems, so the event exists exactly when the change committed (its stream record is
 * what the deliverer sends).
 */
export function eventPut(eventsTable: string, event: DomainEvent) {
  return putNew(eventsTable, eventItem(event));
}

export interface AuditFilter {
  pipelineId?: string | undefined;
  type?: EventType | undefined;
}

/** The team's events, newest first; by pipeline through the index, by type as a filter. */
export function listTeamEvents(
  db: DynamoDBDocumentClient,
  eventsTable: string,
  teamId: string,
  filter: AuditFilter,
  page: PageRequest,
): Promise<Page<DomainEvent>> {
  const partition = filter.pipelineId
    ? { name: 'gsi1pk', value: pipelineEventsPartition(filter.pipelineId) }
    : { name: 'pk', value: teamEventsPartition(teamId) };
  // A pipeline's partition holds only its team's events, but the team is checked all the same.
  const conditions = [
    ...(filter.pipelineId ? ['#data.#team = :teamId'] : []),
    ...(filter.type ? ['#type = :type'] : []),
  ];
  return queryPage(
    db,
    {
      tableName: eventsTable,
      ...(filter.pipelineId ? { indexName: 'gsi1' } : {}),
      partition,
      cursorAttributes: filter.pipelineId ? KEY_ATTRIBUTES : ['pk', 'sk'],
      ...(conditions.length > 0
        ? {
            filter: {
              expression: conditions.join(' AND '),
              names: {
                ...(filter.pipelineId ? { '#data': 'data', '#team': 'teamId' } : {}),
                ...(filter.type ? { '#type': 'type' } : {}),
              },
              values: {
                ...(filter.pipelineId ? { ':teamId': teamId } : {}),
                ...(filter.type ? { ':type': filter.type } : {}),
              },
            },
          }
        : {}),
    },
    page,
    itemReader(domainEventSchema, 'event'),
  );
}

/** DynamoDB adapter of the core's AuditLog port. */
export function makeAuditLog(db: DynamoDBDocumentClient, eventsTable: string): AuditLog {
  return { list: (teamId, filter, page) => listTeamEvents(db, eventsTable, teamId, filter, page) };
}
