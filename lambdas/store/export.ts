/*
 * A pipeline's export, a page at a time: every record of it in a fixed order of parts (the
 * pipeline, its configurations, activations, signals, executions, runs), each part by its sort key
 * ascending (signals and executions: within each shard, merged within each read; every item read
 * is exported, so across reads a record may follow a slightly newer one of another shard).
 * The cursor is the last exported item's key (and a sharded part's every shard's position): a
 * record written meanwhile after it comes in a later page, one before it never; nothing is read
 * twice or skipped. Items are parsed by the same schemas
 * the API answers with, so a line holds a record exactly as the API shows it.
 */

// node:zlib loads when an export cursor is first written or read, not at every cold start of the
// functions that bundle this module without using it (its load showed in their init time).
const zlib = () => process.getBuiltinModule('node:zlib');

import { type DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { ValidationError } from '../core/errors.ts';
import type { ExportPage, ExportStore, RetentionWindow } from '../core/lifecycle.ts';
import { activationSchema, configurationSchema, pipelineSchema } from '../core/schemas/pipelines.ts';
import { executionSchema, signalSchema } from '../core/schemas/records.ts';
import { rolloutSchema } from '../core/schemas/rollouts.ts';
import { synthesisRunSchema } from '../core/schemas/runs.ts';
import { exportedCounters } from '../core/series.ts';
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
import { LEGACY_SHARDS, legacySeriesPartition, seriesPartition } from './series-keys.ts';
import { readOnward } from './shards.ts';

type Key = Record<string, string>;

/** One part of an export: how to read a page of it after `after`, and the record of an item. */
export interface ExportPart {
  type: string;
  /**
   * Up to `limit` items after `after` (ascending), and whether more may follow. A sharded part
   * reads each source after its own head (`heads`, else `after`), answering with every item its
   * source and every source's position after the read.
   */
  read(
    context: { db: DynamoDBDocumentClient; tables: DeletionTables },
    pipelineId: string,
    after: Key | null,
    limit: number,
    window: RetentionWindow,
    heads: Heads | null,
  ): Promise<PartRead>;
  /** The key an item resumes after (the Query's ExclusiveStartKey). */
  keyOf(item: Record<string, unknown>): Key;
  /** A cursor key must name this pipeline's partition: a tampered one is a 400, never another pipeline. */
  belongs(key: Key, pipelineId: string): boolean;
  record(item: unknown): unknown;
}

/** Per source of a sharded part, the key (or bare time) its next read goes on after; null: from `after`. */
type Heads = Array<string | null>;

interface PartRead {
  items: Record<string, unknown>[];
  more: boolean;
  /** A sharded part's: every source's position after the read (null: read to its end). */
  positions?: Heads;
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
 * A part kept in a sharded partition (every shard and the legacy one), merged by sort key within
 * each read: the cursor holds every source's position (the last key read from it), so every item
 * read is exported and none read twice; a record written behind a source's position is never
 * read, one ahead of it always (docs/data-lifecycle.md says what order a reader sees).
 */
function shardedPart<S extends Shard>(
  type: string,
  record: (item: unknown) => unknown,
  partitionOf: (pipelineId: string, shard: S) => string,
  since: (window: RetentionWindow) => string,
  sources: readonly S[] = RECORD_SOURCES as readonly S[],
): ExportPart {
  return {
    type,
    async read({ db, tables }, pipelineId, after, limit, window, heads) {
      const lower = since(window);
      const queries = sources.map((shard, index) => {
        // The heads, once a part has them, say where every source is; before, the cursor's key does.
        const head = heads !== null ? (heads[index] ?? null) : (after?.sk ?? null);
        return {
          base: {
            TableName: tables.data,
            ExpressionAttributeValues: { ':pk': partitionOf(pipelineId, shard) },
          },
          partition: 'pk = :pk',
          ...(head !== null && head >= lower ? { after: head } : { from: lower }),
        };
      });
      const read = await readOnward(db, queries, { sortKey: 'sk', limit, ascending: true });
      return { items: read.items, more: !read.complete, positions: read.positions };
    },
    keyOf: dataKey,
    belongs: (key, pipelineId) =>
      typeof key.sk === 'string' && sources.some((shard) => key.pk === partitionOf(pipelineId, shard)),
    record,
  };
}

/** The series' partition (null) and the layout before's shard partitions, as an export part's sources. */
const SERIES_SOURCES: readonly Shard[] = /* @__PURE__ */ [null, ...LEGACY_SHARDS];

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
  /* @__PURE__ */ shardedPart(
    'signal',
    (item) => signalSchema.parse(item),
    signalsPartition,
    (window) => window.signalsSince,
  ),
  /* @__PURE__ */ shardedPart(
    'execution',
    (item) => executionSchema.parse(item),
    executionsPartition,
    (window) => window.executionsSince,
  ),
  // The hourly series as counters to add up (a bucket may come in a line per shard; core/series.ts).
  /* @__PURE__ */ shardedPart(
    'series_hour',
    exportedCounters,
    (pipelineId, shard: Shard) =>
      shard === null ? seriesPartition(pipelineId, 'hour') : legacySeriesPartition(pipelineId, 'hour', shard),
    (window) => (window.signalsSince < window.executionsSince ? window.signalsSince : window.executionsSince),
    SERIES_SOURCES,
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
    heads: z.optional(
      z.array(z.nullable(z.string().check(z.maxLength(1024)))).check(z.maxLength(RECORD_SOURCES.length)),
    ),
  }))();

type Cursor = z.infer<typeof cursorSchema>;

/**
 * A cursor with heads (a key of every shard, ~3 KB of JSON with 64-character ids) is deflated,
 * marked by a leading `z`; one without is its JSON (as versions before wrote it, still read).
 */
function encode(cursor: Cursor): string {
  const json = JSON.stringify(cursor);
  return cursor.heads === undefined
    ? Buffer.from(json, 'utf8').toString('base64url')
    : `z${zlib().deflateRawSync(json).toString('base64url')}`;
}

/** The largest cursor JSON read back (a deflated one is never inflated past it). */
const MAX_CURSOR_JSON = 48 * 1024;

function decode(cursor: string | undefined, pipelineId: string, parts: readonly ExportPart[]): Cursor {
  if (cursor === undefined) return { part: 0, after: null };
  const invalid = () =>
    new ValidationError('The export cursor is invalid; use the Link of the previous page.');
  if (cursor.length > 4096 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let parsed: unknown;
  try {
    const bytes = Buffer.from(cursor.startsWith('z') ? cursor.slice(1) : cursor, 'base64url');
    const json = cursor.startsWith('z')
      ? zlib().inflateRawSync(bytes, { maxOutputLength: MAX_CURSOR_JSON })
      : bytes;
    parsed = JSON.parse(json.toString('utf8'));
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

/**
 * Where a sharded part goes on after the first `exported` items of a read (the read's order is the
 * keys'): each source after the last exported key, or after its own position when it was read less
 * far (everything of it before that is exported); none exported: where the read started. A record
 * written meanwhile behind those heads is not exported, one ahead of them is.
 */
function headsAfter(
  read: PartRead,
  exported: number,
  started: { heads: Heads | null; after: Key | null },
): Heads | undefined {
  if (!read.positions) return undefined;
  const last = read.items[exported - 1]?.sk;
  if (exported === 0 || typeof last !== 'string') {
    return read.positions.map((_, source) =>
      started.heads !== null ? (started.heads[source] ?? null) : (started.after?.sk ?? null),
    );
  }
  return read.positions.map((position) => (position !== null && position < last ? position : last));
}

/** DynamoDB adapter of ExportStore; `parts` is EXPORT_PARTS unless a test gives others. */
export function makeExportStore(
  db: DynamoDBDocumentClient,
  tables: DeletionTables,
  parts: readonly ExportPart[] = EXPORT_PARTS,
): ExportStore {
  return {
    async page(pipelineId, cursor, window, maxBytes): Promise<ExportPage> {
      const decoded = decode(cursor, pipelineId, parts);
      let { part: index, after } = decoded;
      let heads: Heads | null = decoded.heads ?? null;
      const lines: string[] = [];
      let bytes = 0;
      const context = { db, tables };
      while (index < parts.length) {
        const part = parts[index] as ExportPart;
        const started = { heads, after };
        const read = await part.read(context, pipelineId, after, READ_LIMIT, window, heads);
        for (const [at, item] of read.items.entries()) {
          const line = `${JSON.stringify({ type: part.type, record: part.record(item) })}\n`;
          const size = Buffer.byteLength(line, 'utf8');
          // The page is full: the next one starts after the last item it holds.
          if (bytes + size > maxBytes && lines.length > 0) {
            const next = headsAfter(read, at, started);
            return {
              body: lines.join(''),
              records: lines.length,
              nextCursor: encode({ part: index, after, ...(next ? { heads: next } : {}) }),
            };
          }
          lines.push(line);
          bytes += size;
          after = part.keyOf(item);
        }
        heads = headsAfter(read, read.items.length, started) ?? null;
        if (!read.more) {
          index++;
          after = null;
          heads = null;
        }
      }
      return { body: lines.join(''), records: lines.length, nextCursor: null };
    },
  };
}
