/*
 * What every record and body is built from: the limits every edge enforces, ids, times, bounded
 * strings and numbers, and the checks shared by several aggregates.
 */
import * as z from 'zod/mini';
import '../zod-locale.ts';

/*
 * The limits as plain constants, which the schemas read: esbuild keeps a top-level statement whose
 * arguments read a property (LIMITS.x, a shape) or build a string from a value (it may run code),
 * so such a schema, and all it is built from, would be bundled and built at the cold start of every
 * function importing its module, used or not.
 */
export const BATCH_SIZE = 100;
export const SLOTS_PER_CONFIGURATION = 50;
export const NAME_LENGTH = 200;
export const MESSAGE_LENGTH = 4_000;
export const SETTINGS_BYTES = 16_000;
/** An execution's `input`, serialized as JSON (UTF-8). */
export const INPUT_BYTES = 16_384;
/** Results a runner may post in one request. */
export const EVALUATION_BATCH = 100;

/** Limits every edge enforces; documented in the README. */
export const LIMITS = {
  batchSize: BATCH_SIZE,
  slotsPerConfiguration: SLOTS_PER_CONFIGURATION,
  nameLength: NAME_LENGTH,
  messageLength: MESSAGE_LENGTH,
  settingsBytes: SETTINGS_BYTES,
  inputBytes: INPUT_BYTES,
  evaluationBatch: EVALUATION_BATCH,
  bodyBytes: 1_000_000,
  pageSize: 100,
} as const;

/** Server ids are nanoids; client-supplied ids share their alphabet. */
export const idSchema = /* @__PURE__ */ z
  .string()
  .check(
    /* @__PURE__ */ z.minLength(1),
    /* @__PURE__ */ z.maxLength(64),
    /* @__PURE__ */ z.regex(/^[A-Za-z0-9_-]+$/, 'must contain only A-Z, a-z, 0-9, _ and -'),
  );

export const runIdSchema = /* @__PURE__ */ z
  .string()
  .check(/* @__PURE__ */ z.regex(/^[A-Za-z0-9_-]{21}$/, 'must be a 21-character nanoid'));

export const timestampSchema = /* @__PURE__ */ z.iso.datetime({ offset: false });

/** How far ahead of the server's clock a client may date an event (clock skew, time zones gone wrong). */
export const MAX_FUTURE_SKEW_MS = 24 * 3_600_000;
const EARLIEST_EVENT = /* @__PURE__ */ Date.parse('2000-01-01T00:00:00Z');

/**
 * When a client says something happened: not before 2000 and at most 24 h ahead of now, so a
 * signal dated 9999-12-31 cannot sit at the top of every "most recent" window.
 */
export const eventTimestampSchema = /* @__PURE__ */ timestampSchema
  .check(
    /* @__PURE__ */ z.refine(
      (value) => {
        const at = Date.parse(value);
        return at >= EARLIEST_EVENT && at <= Date.now() + MAX_FUTURE_SKEW_MS;
      },
      { message: 'must be from 2000-01-01 to at most 24 hours from now' },
    ),
    // The document says what the refinement checks (JSON Schema cannot run it).
  )
  ./* @__PURE__ */ register(/* @__PURE__ */ z.globalRegistry, {
    description: "An ISO 8601 UTC time from 2000-01-01 to at most 24 hours after the server's clock.",
  });

/**
 * Where `value` holds an empty key (the path to it, the empty key last), or undefined when it
 * holds none. DynamoDB refuses an empty attribute name in a map at any depth, so settings and
 * patches of them must not carry one.
 */
export function emptyKeyPath(value: unknown): Array<string | number> | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const entries: Array<[string | number, unknown]> = Array.isArray(value)
    ? [...value.entries()]
    : Object.entries(value);
  for (const [key, child] of entries) {
    if (key === '') return [key];
    const below = emptyKeyPath(child);
    if (below !== undefined) return [key, ...below];
  }
  return undefined;
}

export const slotKindSchema = /* @__PURE__ */ z
  .string()
  .check(
    /* @__PURE__ */ z.minLength(1),
    /* @__PURE__ */ z.maxLength(64),
    /* @__PURE__ */ z.regex(/^[a-z][a-z0-9_-]*$/, 'must be lower-case, e.g. prompt, model, tool, retrieval'),
  );

/** Strings and numbers with bounds, as zod/mini spells `z.string().min().max()`. */
export const boundedString = (min: number, max: number) =>
  z.string().check(z.minLength(min), z.maxLength(max));
export const shortString = (max: number) => z.string().check(z.maxLength(max));
export const trimmedString = (min: number, max: number) =>
  z.string().check(z.trim(), z.minLength(min), z.maxLength(max));
export const boundedNumber = (min: number, max: number) => z.number().check(z.gte(min), z.lte(max));
export const boundedInt = (min: number, max: number) => z.int().check(z.gte(min), z.lte(max));
export const minInt = (min: number) => z.int().check(z.gte(min));

/** The serialized size of a JSON value in UTF-8 bytes (TextEncoder: the core has no Buffer). */
export function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value) ?? '').length;
}

/** Ids given in one batch must differ (with equal times they would name one item). */
export function hasUniqueIds(records: Array<{ id?: string | undefined }>): boolean {
  const ids = records.flatMap((record) => (record.id === undefined ? [] : [record.id]));
  return new Set(ids).size === ids.length;
}

/** A page of a list: the cursor is opaque to callers. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}
