/*
 * Every key of the events table, built in one place (as store/keys.ts builds the other tables'):
 * the outbox, the audit log and the tests read and write its items only through these.
 */
import type { IndexKey, ItemKey } from './keys.ts';

/*
 * Events table: the outbox and the audit log (store/events.ts).
 *   event    pk TEAM#<teamId>#EVENTS   sk <timestamp>#<eventId>   gsi1 PIPELINE#<pipelineId>#EVENTS / <timestamp>#<eventId>
 * A team's partition newest first is its audit log; the index narrows it to one pipeline.
 */

export const teamEventsPartition = (teamId: string) => `TEAM#${teamId}#EVENTS`;

export const pipelineEventsPartition = (pipelineId: string) => `PIPELINE#${pipelineId}#EVENTS`;

export const eventKey = (event: { id: string; timestamp: string; data: { teamId: string } }): ItemKey => ({
  pk: teamEventsPartition(event.data.teamId),
  sk: `${event.timestamp}#${event.id}`,
});

export const eventIndexKey = (event: {
  id: string;
  timestamp: string;
  data: { pipelineId?: string | undefined };
}): IndexKey | Record<string, never> =>
  event.data.pipelineId
    ? { gsi1pk: pipelineEventsPartition(event.data.pipelineId), gsi1sk: `${event.timestamp}#${event.id}` }
    : {};
