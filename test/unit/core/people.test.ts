/*
 * People as names (core/people.ts): the ids of one answer are looked up in one batch, the service
 * is "system", a gone record is null, and an API token's change is shown with the token's name.
 */
import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../../lambdas/core/events.ts';
import {
  actorName,
  lookUpNames,
  nameActivations,
  nameEvents,
  nameRollout,
  nameRun,
  nameRuns,
} from '../../../lambdas/core/people.ts';
import type { PeopleDirectory } from '../../../lambdas/core/ports/people.ts';
import type { Activation } from '../../../lambdas/core/schemas/pipelines.ts';
import type { Rollout } from '../../../lambdas/core/schemas/rollouts.ts';
import type { SynthesisRun } from '../../../lambdas/core/schemas/runs.ts';

/** A directory that knows alice, bob and the token "ci", and records every lookup. */
function directory() {
  const lookups: Array<{ teamId: string; userIds: readonly string[]; tokenIds: readonly string[] }> = [];
  const people: PeopleDirectory = {
    displayNames: async (teamId, ids) => {
      lookups.push({ teamId, ...ids });
      return {
        users: new Map([
          ['u-alice', 'alice@example.com'],
          ['u-bob', 'bob@example.com'],
        ]),
        tokens: new Map([['t-ci', 'ci']]),
      };
    },
  };
  return { people, lookups };
}

const runOf = (id: string, fields: Partial<SynthesisRun>) =>
  ({
    id,
    teamId: 'team-1',
    triggeredBy: 'u-alice',
    approvedBy: null,
    rejectedBy: null,
    ...fields,
  }) as SynthesisRun;

describe('the names of one answer', () => {
  it('are looked up once, each id once, never the service or an absent id', async () => {
    const { people, lookups } = directory();
    const names = await lookUpNames(
      people,
      'team-1',
      ['u-alice', null, 'system', 'u-alice', undefined, 'u-gone'],
      ['t-ci', undefined, 't-ci'],
    );
    expect(lookups).toEqual([{ teamId: 'team-1', userIds: ['u-alice', 'u-gone'], tokenIds: ['t-ci'] }]);
    expect(names.user('u-alice')).toBe('alice@example.com');
    expect(names.user('u-gone')).toBeNull();
    expect(names.user(null)).toBeNull();
    expect(names.user('system')).toBe('system');
    expect(names.token('t-ci')).toBe('ci');
    expect(names.token('t-gone')).toBeNull();
  });

  it('need no lookup when the answer holds no one to name', async () => {
    const { people, lookups } = directory();
    const names = await lookUpNames(people, 'team-1', [null, 'system', undefined]);
    expect(lookups).toEqual([]);
    expect(names.user('system')).toBe('system');
    expect(names.user('u-alice')).toBeNull();
    expect(names.token('t-ci')).toBeNull();
  });
});

describe('named records', () => {
  it('name who started, approved and rejected each run, in one lookup for the page', async () => {
    const { people, lookups } = directory();
    const runs = [
      runOf('r1', { approvedBy: 'u-bob' }),
      runOf('r2', { triggeredBy: 'u-bob', rejectedBy: 'u-gone' }),
    ];
    const named = await nameRuns(people, runs);
    expect(named.map((run) => [run.id, run.triggeredByName, run.approvedByName, run.rejectedByName])).toEqual(
      [
        ['r1', 'alice@example.com', 'bob@example.com', null],
        ['r2', 'bob@example.com', null, null],
      ],
    );
    expect(lookups).toHaveLength(1);
    expect(await nameRuns(people, [])).toEqual([]);
    expect(lookups).toHaveLength(1);
    expect(await nameRun(people, runs[0] as SynthesisRun)).toMatchObject({
      id: 'r1',
      approvedByName: 'bob@example.com',
    });
  });

  it('name who activated a configuration, and who started and ended a rollout ("system" for a guardrail)', async () => {
    const { people, lookups } = directory();
    const activations = [{ id: 'a1', activatedBy: 'u-bob' }] as Activation[];
    expect(await nameActivations(people, 'team-9', activations)).toEqual([
      { id: 'a1', activatedBy: 'u-bob', activatedByName: 'bob@example.com' },
    ]);
    expect(lookups[0]?.teamId).toBe('team-9');
    const rollout = { id: 'ro1', startedBy: 'u-alice', endedBy: 'system' } as Rollout;
    expect(await nameRollout(people, 'team-9', rollout)).toEqual({
      ...rollout,
      startedByName: 'alice@example.com',
      endedByName: 'system',
    });
    const running = { id: 'ro2', startedBy: 'u-bob', endedBy: null } as Rollout;
    expect(await nameRollout(people, 'team-9', running)).toMatchObject({ endedByName: null });
  });
});

describe("an event's actor", () => {
  const event = (actor: DomainEvent['data']['actor']): DomainEvent => ({
    id: `evt_${actor.userId}`,
    type: 'synthesis_run.approved',
    timestamp: '2026-01-01T00:00:00.000Z',
    data: { teamId: 'team-1', actor },
  });

  it("is the person and the token's name for a token's change, the user's email for a session's, system for the service", async () => {
    const { people, lookups } = directory();
    const events = [
      event({ userId: 'u-alice', credential: 'api_token', tokenId: 't-ci' }),
      event({ userId: 'u-bob', credential: 'session' }),
      event({ userId: 'system', credential: 'system' }),
      event({ userId: 'u-alice', credential: 'api_token', tokenId: 't-gone' }),
    ];
    const named = await nameEvents(people, 'team-1', events);
    expect(named.map((one) => one.data.actor.name)).toEqual([
      'alice@example.com (API token "ci")',
      'bob@example.com',
      'system',
      // A token gone from the team: the person who made the change, still named.
      'alice@example.com',
    ]);
    expect(named[1]?.data.actor).toEqual({ userId: 'u-bob', credential: 'session', name: 'bob@example.com' });
    expect(lookups).toEqual([
      { teamId: 'team-1', userIds: ['u-alice', 'u-bob'], tokenIds: ['t-ci', 't-gone'] },
    ]);
  });

  it('is named system whatever ids a system actor carries', async () => {
    const { people } = directory();
    const names = await lookUpNames(people, 'team-1', ['u-alice'], ['t-ci']);
    expect(actorName(names, { userId: 'u-alice', credential: 'system', tokenId: 't-ci' })).toBe('system');
    expect(actorName(names, { userId: 'u-alice', credential: 'api_token', tokenId: 't-ci' })).toBe(
      'alice@example.com (API token "ci")',
    );
    expect(actorName(names, { userId: 'u-alice', credential: 'session' })).toBe('alice@example.com');
  });
});
