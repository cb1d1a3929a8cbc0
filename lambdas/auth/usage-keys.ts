/*
 * The evaluation rate per team on AWS: each team's API key on the evaluation plan (lib/api.ts),
 * made once — when the team is created, or by the deploy's backfill for older teams — and named by
 * the authorizer on the evaluation routes; a team without one yet is named the stack's shared key.
 * Locally there is no API Gateway and no plan: the local gateway counts evaluations per team itself
 * (local/gateway/rate-limit.ts) whatever key the authorizer names.
 */
import type { Clock } from '../core/ports/common.ts';
import type { TeamUsageKey, TeamUsageKeyStore, UsageKeyRegistry } from './ports.ts';

/** Gives a team its usage key unless it has one; null where there are no keys (the local stack). */
export type EnsureTeamUsageKey = (teamId: string) => Promise<TeamUsageKey | null>;

/**
 * Gives a team its usage key on the evaluation plan, once: a team whose key is on the plan keeps
 * it (no call to API Gateway), a kept key is put on a new plan (a replaced service stack), a key an
 * interrupted attempt left is taken up rather than made again, and of two attempts at once the
 * first key kept is the team's.
 */
export function makeEnsureTeamUsageKey({
  store,
  registry,
}: {
  store: TeamUsageKeyStore;
  registry: UsageKeyRegistry;
}): EnsureTeamUsageKey {
  return async (teamId) => {
    const kept = await store.getTeamUsageKey(teamId);
    if (kept?.planId === registry.planId) return { keyId: kept.keyId, value: kept.value };
    const key = kept ?? (await registry.findKey(teamId)) ?? (await registry.createKey(teamId));
    await registry.addToPlan(key.keyId);
    return store.keepTeamUsageKey(teamId, { keyId: key.keyId, value: key.value }, registry.planId);
  };
}

/** The local stack's: no API Gateway, so no key to make. */
export const noUsageKeys: EnsureTeamUsageKey = async () => null;

export interface BackfillOutcome {
  /** Teams given a key by this pass. */
  provisioned: number;
  /** false when the pass stopped at its deadline with teams left (the next pass goes on). */
  done: boolean;
}

/**
 * Gives every team whose key is missing or not on the plan `planId` its key there, page by page,
 * until none is left or `deadline` (epoch ms) comes; a later pass goes on where this one stopped,
 * since a team given its key no longer appears in the listing.
 */
export async function backfillUsageKeys({
  store,
  ensure,
  planId,
  clock,
  deadline,
}: {
  store: Pick<TeamUsageKeyStore, 'listTeamsWithoutUsageKey'>;
  ensure: EnsureTeamUsageKey;
  planId: string;
  clock: Clock;
  deadline: number;
}): Promise<BackfillOutcome> {
  let provisioned = 0;
  let cursor: string | undefined;
  do {
    const page = await store.listTeamsWithoutUsageKey(planId, cursor);
    for (const teamId of page.teamIds) {
      if (clock.now().getTime() >= deadline) return { provisioned, done: false };
      await ensure(teamId);
      provisioned += 1;
    }
    cursor = page.cursor;
  } while (cursor !== undefined);
  return { provisioned, done: true };
}

/** How long a warm authorizer remembers that a team has no key of its own yet (the backfill may be running). */
const MISSING_KEY_CACHE_MS = 60_000;
const CACHE_ENTRIES = 1_000;

/** The usage key the authorizer names for a request: on the evaluation routes only, else undefined. */
export type UsageKeyOfRequest = (resource: string, teamId: string) => Promise<string | undefined>;

/**
 * The authorizer's look-up of a request's usage key: on exactly the evaluation routes (`resource`
 * is API Gateway's path template) the caller's team's key, or `fallbackKey` (the stack's shared key
 * on the same plan) for a team that has none of its own yet, so such a team's evaluations share one
 * bucket instead of being refused; nothing on any other route. A team's key never changes once
 * kept, so a warm authorizer reads it once per team; keyed by team, a cached key is never another team's.
 */
export function makeUsageKeyOfRequest({
  store,
  evaluationRoutes,
  fallbackKey,
  clock,
}: {
  store: Pick<TeamUsageKeyStore, 'getTeamUsageKey'>;
  evaluationRoutes: readonly string[];
  fallbackKey: string;
  clock: Clock;
}): UsageKeyOfRequest {
  const routes = new Set(evaluationRoutes);
  const cache = new Map<string, { value: string | null; until: number }>();
  return async (resource, teamId) => {
    if (!routes.has(resource)) return undefined;
    const now = clock.now().getTime();
    const cached = cache.get(teamId);
    if (cached && cached.until > now) return cached.value ?? fallbackKey;
    const key = await store.getTeamUsageKey(teamId);
    if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(teamId, {
      value: key?.value ?? null,
      until: key ? Number.POSITIVE_INFINITY : now + MISSING_KEY_CACHE_MS,
    });
    return key?.value ?? fallbackKey;
  };
}
