/*
 * What the run stores share: the runs table, reading a run item back (parsed), and the write
 * conditions of status moves, built from the run state table (core/run-state.ts).
 */
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { statusesAllowedBefore } from '../core/run-state.ts';
import { type RunStatus, type SynthesisRun, synthesisRunSchema } from '../core/schemas/runs.ts';
import { parseItem } from './items.ts';
import { runKey } from './keys.ts';

export interface RunTables {
  runs: string;
  /** Needed only by completeGenerated and approve, which also write pipeline data. */
  data?: string;
  /** The events table: every status move writes its event there in the same transaction. */
  events?: string;
}

/** A run item is the run itself: attribute names are the wire names, so the console reads like the API. */
export function toRun(item: Record<string, unknown> | undefined): SynthesisRun {
  const id = typeof item?.id === 'string' ? ` ${item.id}` : '';
  return parseItem(synthesisRunSchema, item, `synthesis run${id}`);
}

/** The run as it is now, from a strongly consistent read; null when there is none. */
export async function currentRun(
  db: DynamoDBDocumentClient,
  tables: RunTables,
  id: string,
): Promise<SynthesisRun | null> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tables.runs, Key: runKey(id), ConsistentRead: true }),
  );
  return Item ? toRun(Item) : null;
}

/** The data table, which only some of the run store's writes need. */
export function dataTableOf(tables: RunTables): string {
  if (!tables.data) throw new Error('The run repository was built without the data table.');
  return tables.data;
}

/** The events table, which every status move writes its event to. */
export function eventsTableOf(tables: RunTables): string {
  if (!tables.events) throw new Error('The run repository was built without the events table.');
  return tables.events;
}

export interface MoveCondition {
  /** The statuses the run may be in; empty when no write could succeed. */
  from: RunStatus[];
  /** `#status IN (:from0, …)` */
  expression: string;
  names: { '#status': 'status' };
  values: Record<string, RunStatus>;
}

/**
 * The condition of a write that moves a run to `to`: the run is in a status the table allows
 * before `to` and, when `among` is given, also in one of those (a caller that fails only some).
 */
export function moveCondition(to: RunStatus, among?: readonly RunStatus[]): MoveCondition {
  const from = statusesAllowedBefore(to).filter((status) => among === undefined || among.includes(status));
  const values = Object.fromEntries(from.map((status, index) => [`:from${index}`, status]));
  return {
    from,
    expression: `#status IN (${Object.keys(values).join(', ')})`,
    names: { '#status': 'status' },
    values,
  };
}
