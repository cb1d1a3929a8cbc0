/*
 * A pipeline's export, a page at a time: every record of it in a fixed order (the pipeline, its
 * configurations, activations, signals, executions, runs), each part by its sort key ascending
 * (signals and executions merged across their shards).
 * The cursor is the last exported item's key: a record written meanwhile after it comes in a later
 * page, one before it never; nothing is read twice or skipped. Items are parsed by the same schemas
 * the API answers with, so a line holds a record exactly as the API shows it.
 */
import { type DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { ValidationError } from '../core/errors.ts';
import type { ExportPage, ExportStore, RetentionWindow } from '../core/lifecycle.ts';
import { activationSchema, configurationSchema, pipelineSchema } from '../core/schemas/pipelines.ts';
import { executionSchema, signalSchema } from '../core/schemas/records.ts';
import { rolloutSchema } from '../core/schemas/rollouts.ts';
import { synthesisRunSchema } from '../core/schemas/runs.ts';
import {
  ACTIVATION_PREFIX,
  CONFIGURATION_PREFIX,
  executionsPartition,
  pipelineKey,
  pipelinePartition,
  RECORD_SOURCES,
  ROLLOUT_PREFIX,
  type Shard,
  signalsPartition,
} from './keys.ts';
import type { DeletionTables } from './removals.ts';
import { readAcross } from './shards.ts';

type Key = Record<string, string>;

/** One part of an export: how to read a page of it after `after`, and the record of an item. */
export interface ExportPart {
  type: string;
  /** Up to `limit` items after `after` (ascending), and whether more may follow. */
  read(
    context: { db: DynamoDBDocumentClient; tables: DeletionTables },
    pipelineId: string,
    after: Key | null,
    limit: number,
    window: RetentionWindow,
  ): Promise<{ items: Record<string, unknown>[]; more: boolean }>;
  /** The key an item resumes after (the Query's ExclusiveStartKey). */
  keyOf(item: Record<string, unknown>): Key;
  /** A cursor key must name this pipeline's partition: a tampered one is a 400, never another pipeline. */
  belongs(key: Key, pipelineId: string): boolean;
  record(item: unknown): unknown;
}

const dataKey = (item: Record<string, unknown>): Key => ({ pk: String(item.pk), sk: String(item.sk) });

/** A part kept in one data-table partition (optionally a sort-key prefix or a lower bound). */
function dataPart(
  type: string,
  schema: z.ZodMiniType,
  partitionOf: (pipelineId: string) => string,
  range: { prefix?: string; since?: (window: RetentionWindow) => string } = {},
): ExportPart {
  return {
    type,
    async read({ db, tables }, pipelineId, after, limit, window) {
      const conditions = ['pk = :pk'];
      const values: Record<string, string> = { ':pk': partitionOf(pipelineId) };
      if (range.prefix) {
        conditions.push('begins_with(sk, :prefix)');
        values[':prefix'] = range.prefix;
      }
      const since = range.since?.(window);
      // Inside the retention window only: a key-range bound, so older records are never read.
      const start = since !== undefined && (after === null || (after.sk ?? '') < since) ? null : after;
      if (since !== undefined) {
        conditions.push('sk >= :since');
        values[':since'] = since;
      }
      const { Items = [], LastEvaluatedKey } = await db.send(
        new QueryCommand({
          TableName: tables.data,
          KeyConditionExpression: conditions.join(' AND '),
          ExpressionAttributeValues: values,
          ...(start ? { ExclusiveStartKey: start } : {}),
          Limit: limit,
        }),
      );
      return { items: Items, more: LastEvaluatedKey !== undefined };
    },
    keyOf: dataKey,
    belongs: (key, pipelineId) => key.pk === partitionOf(pipelineId) && typeof key.sk === 'string',
    record: (item) => schema.parse(item),
  };
}

/**
 * A part kept in a sharded partition (every shard and the legacy one), merged by sort key: the
 * cursor is the last exported key, so a record written behind it is never read and one ahead always.
 */
function shardedPart(
  type: string,
  schema: z.ZodMiniType,
  partitionOf: (pipelineId: string, shard: Shard) => string,
  since: (window: RetentionWindow) => string,
): ExportPart {
  return {
    type,
    async read({ db, tables }, pipelineId, after, limit, window) {
      const lower = since(window);
      const resume = after !== null && (after.sk ?? '') >= lower;
      const queries = RECORD_SOURCES.map((shard) => ({
        base: {
          TableName: tables.data,
          ExpressionAttributeValues: { ':pk': partitionOf(pipelineId, shard) },
        },
        partition: 'pk = :pk',
        ...(resume ? { after: String(after.sk) } : { from: lower }),
      }));
      // Every item read up to where all shards are read is exported: none is read twice.
      const { items, complete } = await readAcross(
        db,
        queries,
        { sortKey: 'sk', limit, ascending: true },
        (item) => item,
      );
      return { items, more: !complete };
    },
    keyOf: dataKey,
    belongs: (key, pipelineId) =>
      typeof key.sk === 'string' && RECORD_SOURCES.some((shard) => key.pk === partitionOf(pipelineId, shard)),
    record: (item) => schema.parse(item),
  };
}

/**
 * What an export holds, in this order. Another feature's records are one more entry (a dataPart of
 * their partition), e.g. `rollout` or an evaluation set.
 */
export const EXPORT_PARTS: readonly ExportPart[] = [
  {
    type: 'pipeline',
    async read({ db, tables }, pipelineId, after) {
      if (after !== null) return { items: [], more: false };
      const { Item } = await db.send(
        new GetCommand({ TableName: tables.data, Key: pipelineKey(pipelineId), ConsistentRead: true }),
      );
      return { items: Item ? [Item] : [], more: false };
    },
    keyOf: dataKey,
    belongs: (key, pipelineId) => key.pk === pipelinePartition(pipelineId),
    record: (item) => pipelineSchema.parse(item),
  },
  /* @__PURE__ */ dataPart('configuration', configurationSchema, pipelinePartition, {
    prefix: CONFIGURATION_PREFIX,
  }),
  /* @__PURE__ */ dataPart('activation', activationSchema, pipelinePartition, { prefix: ACTIVATION_PREFIX }),
  /* @__PURE__ */ dataPart('rollout', rolloutSchema, pipelinePartition, { prefix: ROLLOUT_PREFIX }),
  /* @__PURE__ */ shardedPart('signal', signalSchema, signalsPartition, (window) => window.signalsSince),
  /* @__PURE__ */ shardedPart(
    'execution',
    executionSchema,
    executionsPartition,
    (window) => window.executionsSince,
  ),
  {
    type: 'run',
    async read({ db, tables }, pipelineId, after, limit) {
      const { Items = [], LastEvaluatedKey } = await db.send(
        new QueryCommand({
          TableName: tables.runs,
          IndexName: 'byPipeline',
          KeyConditionExpression: 'pipelineId = :id',
          ExpressionAttributeValues: { ':id': pipelineId },
          ...(after ? { ExclusiveStartKey: after } : {}),
          Limit: limit,
        }),
      );
      return { items: Items, more: LastEvaluatedKey !== undefined };
    },
    keyOf: (item) => ({
      id: String(item.id),
      pipelineId: String(item.pipelineId),
      createdAt: String(item.createdAt),
    }),
    belongs: (key, pipelineId) =>
      key.pipelineId === pipelineId && typeof key.id === 'string' && typeof key.createdAt === 'string',
    record: (item) => synthesisRunSchema.parse(item),
  },
];

// Built in a function called once and marked pure, so a bundle that does not use it leaves it out.
const cursorSchema = /* @__PURE__ */ (() =>
  z.strictObject({
    part: z.int().check(z.gte(0)),
    after: z.nullable(z.record(z.string(), z.string().check(z.maxLength(1024)))),
  }))();

function encode(cursor: z.infer<typeof cursorSchema>): string {
  return Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url');
}

function decode(cursor: string | undefined, pipelineId: string, parts: readonly ExportPart[]) {
  if (cursor === undefined) return { part: 0, after: null };
  const invalid = () =>
    new ValidationError('The export cursor is invalid; use the Link of the previous page.');
  if (cursor.length > 4096 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const result = cursorSchema.safeParse(parsed);
  if (!result.success) throw invalid();
  const part = parts[result.data.part];
  if (!part || (result.data.after !== null && !part.belongs(result.data.after, pipelineId))) throw invalid();
  return result.data;
}

/** Items read per Query while filling a page. */
const READ_LIMIT = 200;

/** DynamoDB adapter of ExportStore; `parts` is EXPORT_PARTS unless a test gives others. */
export function makeExportStore(
  db: DynamoDBDocumentClient,
  tables: DeletionTables,
  parts: readonly ExportPart[] = EXPORT_PARTS,
): ExportStore {
  return {
    async page(pipelineId, cursor, window, maxBytes): Promise<ExportPage> {
      let { part: index, after } = decode(cursor, pipelineId, parts);
      const lines: string[] = [];
      let bytes = 0;
      const context = { db, tables };
      while (index < parts.length) {
        const part = parts[index] as ExportPart;
        const { items, more } = await part.read(context, pipelineId, after, READ_LIMIT, window);
        for (const item of items) {
          const line = `${JSON.stringify({ type: part.type, record: part.record(item) })}\n`;
          const size = Buffer.byteLength(line, 'utf8');
          // The page is full: the next one starts after the last item it holds.
          if (bytes + size > maxBytes && lines.length > 0) {
            return {
              body: lines.join(''),
              records: lines.length,
              nextCursor: encode({ part: index, after }),
            };
          }
          lines.push(line);
          bytes += size;
          after = part.keyOf(item);
        }
        if (!more) {
          index++;
          after = null;
        }
      }
      return { body: lines.join(''), records: lines.length, nextCursor: null };
    },
  };
}
