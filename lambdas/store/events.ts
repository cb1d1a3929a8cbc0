/*
 * The events table (keys: store/event-keys.ts): the transaction item that writes an event with its change
 * (`eventPut`, the outbox), the event a one-item change carries in its own item (`carriedEvent`,
 * relayed here from the item's stream), and the team's audit log read back newest first.
 */
import { type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { type DomainEvent, domainEventSchema, type EventType } from '../core/events.ts';
import type { PageRequest } from '../core/ports/common.ts';
import type { Page } from '../core/schemas/common.ts';
import type { AuditLog } from '../core/use-cases/audit.ts';
import { isConditionFailure, putNew } from './conditions.ts';
import { eventIndexKey, eventKey, pipelineEventsPartition, teamEventsPartition } from './event-keys.ts';
import { itemReader } from './items.ts';
import { KEY_ATTRIBUTES } from './keys.ts';
import { queryPage } from './query-page.ts';
import { CARRIED_EVENT_ATTRIBUTE } from './table-definitions.ts';

/** The audit log keeps an event this long (a year and a month), then TTL removes it. */
export const EVENT_RETENTION_DAYS = 400;

/** Standard Webhooks payloads stay small; ours hold ids and states only, far below this. */
export const MAX_EVENT_BYTES = 20 * 1024;

/** The stored event: the envelope and its id, the keys, and the TTL. */
export function eventItem(event: DomainEvent): Record<string, unknown> {
  assertEventSize(JSON.stringify(event), event);
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

function assertEventSize(json: string, event: DomainEvent): void {
  const size = Buffer.byteLength(json);
  if (size >= MAX_EVENT_BYTES) {
    // A programming error (an event carrying a record instead of ids), never a client's.
    throw new Error(`Event ${event.type} is ${size} bytes; an event holds ids and states, under 20 KB.`);
  }
}

export { CARRIED_EVENT_ATTRIBUTE };

/**
 * An UpdateItem of a one-item change, carrying `event` (when there is one) in the same write: its
 * expression also sets CARRIED_EVENT_ATTRIBUTE.
 */
export function carryingEvent<
  T extends {
    UpdateExpression: string;
    ExpressionAttributeNames?: Record<string, string>;
    ExpressionAttributeValues?: Record<string, unknown>;
  },
>(update: T, event: DomainEvent | undefined): T {
  if (!event) return update;
  return {
    ...update,
    UpdateExpression: `${update.UpdateExpression}, #carriedEvent = :carriedEvent`,
    ExpressionAttributeNames: {
      ...update.ExpressionAttributeNames,
      '#carriedEvent': CARRIED_EVENT_ATTRIBUTE,
    },
    ExpressionAttributeValues: {
      ...update.ExpressionAttributeValues,
      ':carriedEvent': carriedEventValue(event),
    },
  };
}

/** The value of CARRIED_EVENT_ATTRIBUTE for `event`: the event as JSON, size-checked as eventItem does. */
export function carriedEventValue(event: DomainEvent): string {
  const json = JSON.stringify(event);
  assertEventSize(json, event);
  return json;
}

type StreamImage = Record<string, { S?: string } | undefined>;

/**
 * The event a stream record's change carried, if this change wrote one: the new image's event when
 * the old image did not hold the same one (a later update of the item keeps the attribute, and
 * must not send it again). Null for deletions and for changes that carried none; an attribute that
 * is not an event is a programming error, thrown.
 */
export function carriedEvent(record: { NewImage?: unknown; OldImage?: unknown }): DomainEvent | null {
  const carried = (record.NewImage as StreamImage | undefined)?.[CARRIED_EVENT_ATTRIBUTE]?.S;
  if (carried === undefined) return null;
  if ((record.OldImage as StreamImage | undefined)?.[CARRIED_EVENT_ATTRIBUTE]?.S === carried) return null;
  return domainEventSchema.parse(JSON.parse(carried));
}

/**
 * Writes a carried event into the outbox, once: a stream delivers at least once, and the event
 * item's condition makes a second delivery a no-op. Its stream record is what the deliverer sends.
 */
export async function relayCarriedEvent(
  db: DynamoDBDocumentClient,
  eventsTable: string,
  event: DomainEvent,
): Promise<'relayed' | 'already relayed'> {
  try {
    await db.send(new PutCommand(eventPut(eventsTable, event).Put));
    return 'relayed';
  } catch (error) {
    if (isConditionFailure(error)) return 'already relayed';
    throw error;
  }
}

export interface AuditFilter {
  pipelineId?: string | undefined;
  type?: EventType | undefined;
}

/**
 * The team's events, newest first; by pipeline through the index (its partition is the team's
 * own), by type as a filter. Every partition read holds this team's events only.
 */
export function listTeamEvents(
  db: DynamoDBDocumentClient,
  eventsTable: string,
  teamId: string,
  filter: AuditFilter,
  page: PageRequest,
): Promise<Page<DomainEvent>> {
  const byPipeline = filter.pipelineId !== undefined;
  return queryPage(
    db,
    {
      tableName: eventsTable,
      ...(byPipeline ? { indexName: 'gsi1' } : {}),
      partition: filter.pipelineId
        ? { name: 'gsi1pk', value: pipelineEventsPartition(teamId, filter.pipelineId) }
        : { name: 'pk', value: teamEventsPartition(teamId) },
      cursorAttributes: byPipeline ? KEY_ATTRIBUTES : ['pk', 'sk'],
      ...(filter.type
        ? {
            filter: {
              expression: '#type = :type',
              names: { '#type': 'type' },
              values: { ':type': filter.type },
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

/**
 * The pipeline's events of these types in [from, to), oldest first, at most `limit`: the moments a
 * chart marks (core/use-cases/metrics.ts). One index partition, the team's own; a few pages at most.
 */
export async function pipelineMoments(
  db: DynamoDBDocumentClient,
  eventsTable: string,
  query: {
    teamId: string;
    pipelineId: string;
    from: string;
    to: string;
    types: readonly string[];
    limit: number;
  },
): Promise<DomainEvent[]> {
  const read = itemReader(domainEventSchema, 'event');
  const events: DomainEvent[] = [];
  const types = Object.fromEntries(query.types.map((type, i) => [`:t${i}`, type]));
  let start: Record<string, unknown> | undefined;
  for (let page = 0; page < MOMENT_PAGES && events.length < query.limit; page++) {
    const answer = await db.send(
      new QueryCommand({
        TableName: eventsTable,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk BETWEEN :from AND :to',
        FilterExpression: `#type IN (${Object.keys(types).join(', ')})`,
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: {
          ':pk': pipelineEventsPartition(query.teamId, query.pipelineId),
          ':from': query.from,
          ':to': query.to,
          ...types,
        },
        ExclusiveStartKey: start,
      }),
    );
    for (const item of answer.Items ?? []) {
      const event = read(item);
      if (event && events.length < query.limit) events.push(event);
    }
    start = answer.LastEvaluatedKey;
    if (!start) break;
  }
  return events;
}

/** The pages a moments read follows at most (a pipeline's other events are filtered out on the way). */
const MOMENT_PAGES = 5;
