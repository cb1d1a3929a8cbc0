import { beforeEach, describe, expect, it } from 'vitest';
import type {
  KeptUsageKey,
  TeamUsageKey,
  TeamUsageKeyStore,
  UsageKeyRegistry,
} from '../../../lambdas/auth/ports.ts';
import {
  backfillUsageKeys,
  makeEnsureTeamUsageKey,
  makeUsageKeyOfRequest,
} from '../../../lambdas/auth/usage-keys.ts';
import { NotFoundError } from '../../../lambdas/core/errors.ts';
import { FakeClock } from './fakes.ts';

// A team's usage key of the evaluation plan: made once per team, whoever asks and however often,
// and named by the authorizer on the evaluation routes only, each team its own.

/** Team items with their keys, as the auth table keeps them (the first key kept wins). */
class FakeTeamKeys implements TeamUsageKeyStore {
  readonly keys = new Map<string, KeptUsageKey | null>();
  reads = 0;
  /** Teams listed per page (the Scan's page). */
  pageSize = 2;

  addTeam(teamId: string, key: TeamUsageKey | null = null, planId: string | null = PLAN) {
    this.keys.set(teamId, key && { ...key, planId });
  }
  async getTeamUsageKey(teamId: string) {
    this.reads += 1;
    return this.keys.get(teamId) ?? null;
  }
  async keepTeamUsageKey(teamId: string, key: TeamUsageKey, planId: string) {
    if (!this.keys.has(teamId)) throw new NotFoundError(`Team ${teamId} does not exist.`);
    const kept = this.keys.get(teamId);
    if (kept && kept.keyId !== key.keyId) return { keyId: kept.keyId, value: kept.value };
    this.keys.set(teamId, { ...key, planId });
    return key;
  }
  /** As a Scan: in key order, after the last team of the previous page; teams given a key meanwhile drop out. */
  async listTeamsWithoutUsageKey(planId: string, cursor?: string) {
    const after = [...this.keys.keys()].sort().filter((teamId) => cursor === undefined || teamId > cursor);
    const page = after.slice(0, this.pageSize);
    const teamIds = page.filter((teamId) => this.keys.get(teamId)?.planId !== planId);
    const last = page.at(-1);
    return { teamIds, ...(after.length > this.pageSize && last ? { cursor: last } : {}) };
  }
}

/** API Gateway's keys and the plan's, with every call it was asked to make. */
class FakeRegistry implements UsageKeyRegistry {
  planId = PLAN;
  readonly created: string[] = [];
  readonly onPlan = new Set<string>();
  readonly byTeam = new Map<string, TeamUsageKey>();
  private next = 0;

  async findKey(teamId: string) {
    return this.byTeam.get(teamId) ?? null;
  }
  async createKey(teamId: string) {
    this.next += 1;
    const key = { keyId: `key-${this.next}`, value: `value-${this.next}-of-${teamId}` };
    this.created.push(teamId);
    this.byTeam.set(teamId, key);
    return key;
  }
  async addToPlan(keyId: string) {
    this.onPlan.add(keyId);
  }
}

const PLAN = 'plan-1';
let teams: FakeTeamKeys;
let registry: FakeRegistry;
let ensure: ReturnType<typeof makeEnsureTeamUsageKey>;

beforeEach(() => {
  teams = new FakeTeamKeys();
  registry = new FakeRegistry();
  ensure = makeEnsureTeamUsageKey({ store: teams, registry });
});

describe('giving a team its usage key', () => {
  it('creates one key on the evaluation plan and keeps it on the team', async () => {
    teams.addTeam('team-a');

    const key = await ensure('team-a');

    expect(key).toEqual({ keyId: 'key-1', value: 'value-1-of-team-a' });
    expect(registry.onPlan).toEqual(new Set(['key-1']));
    expect(teams.keys.get('team-a')).toEqual({ ...key, planId: PLAN });
  });

  it('makes no second key however often it is asked', async () => {
    teams.addTeam('team-a');

    const first = await ensure('team-a');
    const again = await ensure('team-a');

    expect(again).toEqual(first);
    expect(registry.created).toEqual(['team-a']);
  });

  it('puts a kept key on a new plan (a replaced service stack) rather than make another', async () => {
    teams.addTeam('team-a', { keyId: 'key-old', value: 'value-old' }, 'plan-gone');

    const key = await ensure('team-a');

    expect(key).toEqual({ keyId: 'key-old', value: 'value-old' });
    expect(registry.created).toEqual([]);
    expect(registry.onPlan).toEqual(new Set(['key-old']));
    expect(teams.keys.get('team-a')?.planId).toBe(PLAN);
  });

  it('takes up the key an interrupted attempt made but did not keep', async () => {
    teams.addTeam('team-a');
    const left = await registry.createKey('team-a');

    const key = await ensure('team-a');

    expect(key).toEqual(left);
    expect(registry.created).toEqual(['team-a']);
    expect(registry.onPlan).toEqual(new Set([left.keyId]));
  });

  it('answers the key kept first when another attempt kept one meanwhile', async () => {
    teams.addTeam('team-a');
    const other = { keyId: 'key-other', value: 'value-other' };
    const keep = teams.keepTeamUsageKey.bind(teams);
    teams.keepTeamUsageKey = async (teamId, key, planId) => {
      await keep(teamId, other, planId);
      return keep(teamId, key, planId);
    };

    expect(await ensure('team-a')).toEqual(other);
  });

  it('refuses a team that does not exist', async () => {
    await expect(ensure('team-gone')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('the deploy’s backfill', () => {
  it('gives every team without a key on the plan its key, across pages, and leaves the others as they are', async () => {
    const kept = { keyId: 'key-old', value: 'value-old' };
    teams.addTeam('team-a');
    teams.addTeam('team-b', kept);
    teams.addTeam('team-c');
    teams.addTeam('team-d', { keyId: 'key-d', value: 'value-d' }, 'plan-gone');
    teams.pageSize = 1;

    const outcome = await backfillUsageKeys({
      store: teams,
      ensure,
      planId: PLAN,
      clock: new FakeClock(),
      deadline: Number.POSITIVE_INFINITY,
    });

    expect(outcome).toEqual({ provisioned: 3, done: true });
    expect(registry.created).toEqual(['team-a', 'team-c']);
    expect(registry.onPlan).toEqual(new Set(['key-1', 'key-2', 'key-d']));
    expect(teams.keys.get('team-b')).toEqual({ ...kept, planId: PLAN });
    expect([...teams.keys.values()].every((key) => key?.planId === PLAN)).toBe(true);
  });

  it('stops at its deadline, and a second pass finishes without making a key twice', async () => {
    for (const teamId of ['team-a', 'team-b', 'team-c']) teams.addTeam(teamId);
    const clock = new FakeClock();
    const deadline = clock.now().getTime() + 2_000;
    const slowEnsure = async (teamId: string) => {
      clock.advance(1_000);
      return ensure(teamId);
    };

    const first = await backfillUsageKeys({
      store: teams,
      ensure: slowEnsure,
      planId: PLAN,
      clock,
      deadline,
    });
    const second = await backfillUsageKeys({
      store: teams,
      ensure,
      planId: PLAN,
      clock,
      deadline: Number.POSITIVE_INFINITY,
    });

    expect(first).toEqual({ provisioned: 2, done: false });
    expect(second).toEqual({ provisioned: 1, done: true });
    expect(registry.created).toEqual(['team-a', 'team-b', 'team-c']);
  });
});

describe('the usage key of a request', () => {
  const EVALUATION_ROUTES = ['/pipelines/{pipelineId}/serving-configuration', '/ofrep/v1/evaluate/flags'];
  const SHARED_KEY = 'shared-evaluations-key-0123456789';
  let clock: FakeClock;
  let usageKeyOf: ReturnType<typeof makeUsageKeyOfRequest>;

  beforeEach(() => {
    clock = new FakeClock();
    teams.addTeam('team-a', { keyId: 'key-a', value: 'value-a' });
    teams.addTeam('team-b', { keyId: 'key-b', value: 'value-b' });
    teams.addTeam('team-new');
    usageKeyOf = makeUsageKeyOfRequest({
      store: teams,
      evaluationRoutes: EVALUATION_ROUTES,
      fallbackKey: SHARED_KEY,
      clock,
    });
  });

  it('is the caller’s team’s key on an evaluation route, and none on any other route', async () => {
    expect(await usageKeyOf('/pipelines/{pipelineId}/serving-configuration', 'team-a')).toBe('value-a');
    expect(await usageKeyOf('/ofrep/v1/evaluate/flags', 'team-a')).toBe('value-a');
    expect(await usageKeyOf('/pipelines/{pipelineId}', 'team-a')).toBeUndefined();
    // An execution's read that merely ends like the serving route is not an evaluation.
    expect(await usageKeyOf('/pipelines/{pipelineId}/executions/{executionId}', 'team-a')).toBeUndefined();
    expect(teams.reads).toBe(1);
  });

  it('never answers one team’s key for another, whatever the order of their requests', async () => {
    const route = EVALUATION_ROUTES[0] as string;
    const answers = [];
    for (const teamId of ['team-a', 'team-b', 'team-a', 'team-b'])
      answers.push(await usageKeyOf(route, teamId));

    expect(answers).toEqual(['value-a', 'value-b', 'value-a', 'value-b']);
    // Read once per team: a kept key never changes.
    expect(teams.reads).toBe(2);
  });

  it('names the shared key for a team without a key, and picks its own up within a minute of the backfill', async () => {
    const route = EVALUATION_ROUTES[0] as string;
    expect(await usageKeyOf(route, 'team-new')).toBe(SHARED_KEY);
    // Only on the evaluation routes: any other route names no key at all.
    expect(await usageKeyOf('/pipelines/{pipelineId}', 'team-new')).toBeUndefined();
    await ensure('team-new');

    expect(await usageKeyOf(route, 'team-new')).toBe(SHARED_KEY);
    clock.advance(60_000);
    expect(await usageKeyOf(route, 'team-new')).toBe(teams.keys.get('team-new')?.value);
  });
});
