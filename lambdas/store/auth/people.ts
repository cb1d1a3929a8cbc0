/*
 * The people directory on the auth table: users' emails and API tokens' names by id, read with
 * BatchGetItem (projections of those attributes only) and kept a few minutes in the warm function.
 */
import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DisplayNames, PeopleDirectory } from '../../core/ports/people.ts';
import type { ItemKey } from '../keys.ts';
import { apiTokenIdKey, apiTokenKey, userKey } from './keys.ts';

/** Keys of one BatchGetItem request. */
const BATCH = 100;
const MAX_ROUNDS = 8;
/** Names change rarely (a token's never): a warm function keeps what it read this long. */
const CACHE_MS = 5 * 60_000;
const CACHE_ENTRIES = 2_000;

type Item = Record<string, unknown>;

/** The attributes the directory reads, and only these (its IAM grant allows no others). */
export const PEOPLE_ATTRIBUTES = ['pk', 'sk', 'email', 'name', 'teamId', 'tokenHash'] as const;

interface Cached {
  name: string | null;
  /** A token's team: a token is named only to its own team. */
  teamId?: string;
  until: number;
}

/** DynamoDB adapter of PeopleDirectory. */
export function makePeopleDirectory(
  db: DynamoDBDocumentClient,
  tableName: string,
  now: () => number = Date.now,
): PeopleDirectory {
  const cache = new Map<string, Cached>();
  const remember = (key: string, entry: Omit<Cached, 'until'>) => {
    if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(key, { ...entry, until: now() + CACHE_MS });
  };
  const fresh = (key: string) => {
    const entry = cache.get(key);
    return entry && entry.until > now() ? entry : undefined;
  };
  const read = (keys: ItemKey[]) => batchGet(db, tableName, keys);

  async function userNames(userIds: readonly string[]): Promise<void> {
    const missing = userIds.filter((id) => !fresh(`user#${id}`));
    const items = await read(missing.map(userKey));
    const emails = new Map(items.map((item) => [String(item.pk), item.email]));
    for (const id of missing) {
      const email = emails.get(userKey(id).pk);
      remember(`user#${id}`, { name: typeof email === 'string' ? email : null });
    }
  }

  async function tokenNames(tokenIds: readonly string[]): Promise<void> {
    const missing = tokenIds.filter((id) => !fresh(`token#${id}`));
    // The id pointer names the token's hash, which keys the token item: two rounds, each one batch.
    const pointers = await read(missing.map(apiTokenIdKey));
    const hashOf = new Map(pointers.map((item) => [String(item.pk), String(item.tokenHash)]));
    const tokens = await read([...hashOf.values()].map(apiTokenKey));
    const byHash = new Map(tokens.map((item) => [String(item.pk), item]));
    for (const id of missing) {
      const hash = hashOf.get(apiTokenIdKey(id).pk);
      const token = hash === undefined ? undefined : byHash.get(apiTokenKey(hash).pk);
      remember(`token#${id}`, {
        name: typeof token?.name === 'string' ? token.name : null,
        ...(typeof token?.teamId === 'string' ? { teamId: token.teamId } : {}),
      });
    }
  }

  return {
    async displayNames(teamId, { userIds, tokenIds }): Promise<DisplayNames> {
      await Promise.all([userNames(userIds), tokenNames(tokenIds)]);
      const users = new Map<string, string>();
      const tokens = new Map<string, string>();
      for (const id of userIds) {
        const name = fresh(`user#${id}`)?.name;
        if (name) users.set(id, name);
      }
      for (const id of tokenIds) {
        const entry = fresh(`token#${id}`);
        if (entry?.name && entry.teamId === teamId) tokens.set(id, entry.name);
      }
      return { users, tokens };
    },
  };
}

/** The items of these keys that exist, 100 keys a request, unprocessed keys asked again. */
async function batchGet(db: DynamoDBDocumentClient, tableName: string, keys: ItemKey[]): Promise<Item[]> {
  const found: Item[] = [];
  for (let at = 0; at < keys.length; at += BATCH) {
    let pending: Item[] = keys.slice(at, at + BATCH).map((key) => ({ ...key }));
    for (let round = 0; pending.length > 0; round++) {
      if (round >= MAX_ROUNDS) throw new Error('DynamoDB left names unread; try again later.');
      const { Responses, UnprocessedKeys } = await db.send(
        new BatchGetCommand({
          RequestItems: {
            [tableName]: {
              Keys: pending,
              ProjectionExpression: PEOPLE_ATTRIBUTES.map((_, index) => `#a${index}`).join(', '),
              ExpressionAttributeNames: Object.fromEntries(
                PEOPLE_ATTRIBUTES.map((name, index) => [`#a${index}`, name]),
              ),
            },
          },
        }),
      );
      found.push(...(Responses?.[tableName] ?? []));
      pending = (UnprocessedKeys?.[tableName]?.Keys ?? []) as Item[];
      if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** round));
    }
  }
  return found;
}
