/*
 * Every key of the events table, built in one place (as store/keys.ts builds the other tables'):
 * the outbox, the audit log and the tests read and write its items only through these.
 */
import type { IndexKey, ItemKey } from './keys.ts';

/*
 * Events table: the outbox and the audit log (store/events.ts).
 *   event    pk TEAM#<teamId>#EVENTS   sk <timestamp>#<eventId>
 *            gsi1 TEAM#<teamId>#PIPELINE#<pipelineId>#EVENTS / <timestamp>#<eventId>
 * A team's partition newest first is its audit log; the index narrows it to one pipeline of that
 * team: the team is part of the key, so a Query of it never reads another team's events (a filter
 * would drop them only after Limit, leaving a cursor that walks them). Events written before the
 * team was part of this key sit under PIPELINE#<pipelineId>#EVENTS: the team-wide log shows them.
 */

export const teamEventsPartition = (teamId: string) => `TEAM#${teamId}#EVENTS`;

export const pipelineEventsPartition = (teamId: string, pipelineId: string) =>
  `TEAM#${teamId}#PIPELINE#${pipelineId}#EVENTS`;

export const eventKey = (event: { id: string; timestamp: string; data: { teamId: string } }): ItemKey => ({
  pk: teamEventsPartition(event.data.teamId),
  sk: `${event.timestamp}#${event.id}`,
});

export const eventIndexKey = (event: {
  id: string;
  timestamp: string;
  data: { teamId: string; pipelineId?: string | undefined };
}): IndexKey | Record<string, never> =>
  event.data.pipelineId
    ? {
        gsi1pk: pipelineEventsPartition(event.data.teamId, event.data.pipelineId),
        gsi1sk: `${event.timestamp}#${event.id}`,
      }
    : {};
