/*
 * A team's retention windows in the data table (keys: store/keys.ts), beside the pipelines whose
 * writes read them: the DynamoDB adapter of TeamSettingsStore. Shortening a window marks the team
 * due for the retention job in the same transaction.
 */
import { type DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { defaultTeamSettings, type TeamSettings, type TeamSettingsStore } from '../core/lifecycle.ts';
import { eventPut } from './events.ts';
import { parseItem } from './items.ts';
import { retentionDueIndexKey, retentionDueKey, teamSettingsKey } from './keys.ts';

/** The transaction items of a settings change: one write, plus the job's due mark when a window shrank. */
export function teamSettingsWrites(tableName: string, settings: TeamSettings, previous: TeamSettings) {
  const shortened =
    settings.signalRetentionDays < previous.signalRetentionDays ||
    settings.executionRetentionDays < previous.executionRetentionDays;
  const requestedAt = settings.updatedAt ?? new Date(0).toISOString();
  return [
    { Put: { TableName: tableName, Item: { ...teamSettingsKey(settings.teamId), ...settings } } },
    ...(shortened
      ? [
          {
            Put: {
              TableName: tableName,
              Item: {
                ...retentionDueKey(settings.teamId),
                ...retentionDueIndexKey(settings.teamId, requestedAt),
                teamId: settings.teamId,
                requestedAt,
              },
            },
          },
        ]
      : []),
  ];
}

/** DynamoDB adapter of TeamSettingsStore. */
export function makeTeamSettingsStore(
  db: DynamoDBDocumentClient,
  tableName: string,
  /** The outbox: team_settings.updated is written there with the settings. */
  eventsTable?: string,
): TeamSettingsStore {
  const schema = z.object({
    teamId: z.string(),
    signalRetentionDays: z.number(),
    executionRetentionDays: z.number(),
    modelBudgetUsdPerMonth: z._default(z.nullable(z.number()), null),
    updatedAt: z.nullable(z.string()),
    updatedBy: z.nullable(z.string()),
  });
  return {
    async get(teamId) {
      const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: teamSettingsKey(teamId) }));
      return Item ? parseItem(schema, Item, 'team settings') : defaultTeamSettings(teamId);
    },
    async put(settings, previous, event) {
      if (event && !eventsTable)
        throw new Error('The team settings store was built without the events table.');
      await db.send(
        new TransactWriteCommand({
          TransactItems: [
            ...teamSettingsWrites(tableName, settings, previous),
            ...(event && eventsTable ? [eventPut(eventsTable, event)] : []),
          ],
        }),
      );
    },
  };
}
