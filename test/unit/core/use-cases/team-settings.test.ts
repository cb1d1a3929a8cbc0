import { beforeEach, describe, expect, it } from 'vitest';
import { actorOf } from '../../../../lambdas/core/events.ts';
import { defaultTeamSettings } from '../../../../lambdas/core/lifecycle.ts';
import type { Pipeline } from '../../../../lambdas/core/schemas/pipelines.ts';
import {
  makeGetTeamSettings,
  makeReadWindowedEvidence,
  makeUpdateTeamSettings,
} from '../../../../lambdas/core/use-cases/lifecycle.ts';
import { makeWorld, principal, rejection, seedPipeline, type World } from './fakes.ts';

const T0 = '2025-06-02T10:00:00.000Z';
const admin = principal({ userId: 'user-root', principalId: 'user-root', role: 'admin' });
const member = principal();

let world: World;
beforeEach(() => {
  world = makeWorld(T0);
});

describe("a team's settings", () => {
  it('are read by any member of the team, and by no other team', async () => {
    const get = makeGetTeamSettings(world);
    expect(await get(member, 'team-a')).toEqual(defaultTeamSettings('team-a'));
    expect((await rejection(get(member, 'team-b'))).statusCode).toBe(403);
  });

  it("are changed by an admin only, the refusal naming the caller's role", async () => {
    const error = await rejection(
      makeUpdateTeamSettings(world)(member, 'team-a', { signalRetentionDays: 30 }),
    );
    expect(error.statusCode).toBe(403);
    expect(error.message).toBe("Only a team admin can change the team's settings; the member role cannot.");
    expect(world.settings.events).toEqual([]);
  });

  it('change only what the patch names, recording who and when with team_settings.updated', async () => {
    const update = makeUpdateTeamSettings(world);
    const first = await update(admin, 'team-a', { executionRetentionDays: 30 });
    expect(first).toEqual({
      ...defaultTeamSettings('team-a'),
      executionRetentionDays: 30,
      updatedAt: T0,
      updatedBy: 'user-root',
    });
    const second = await update(admin, 'team-a', { modelBudgetUsdPerMonth: 25 });
    expect(second.executionRetentionDays).toBe(30);
    expect(second.modelBudgetUsdPerMonth).toBe(25);
    expect(second.signalRetentionDays).toBe(defaultTeamSettings('team-a').signalRetentionDays);
    const third = await update(admin, 'team-a', { signalRetentionDays: 7 });
    expect(third).toMatchObject({
      signalRetentionDays: 7,
      executionRetentionDays: 30,
      modelBudgetUsdPerMonth: 25,
    });
    expect(await world.settings.get('team-a')).toEqual(third);
    expect(world.settings.events).toHaveLength(3);
    expect(world.settings.events[0]).toEqual({
      id: expect.stringMatching(/_team_settings_updated$/),
      type: 'team_settings.updated',
      timestamp: T0,
      data: { teamId: 'team-a', actor: actorOf(admin) },
    });
    expect(new Set(world.settings.events.map((event) => event.id)).size).toBe(3);
  });
});

describe('the windowed evidence', () => {
  let pipeline: Pipeline;
  beforeEach(async () => {
    ({ pipeline } = await seedPipeline(world));
  });

  it('reads nothing of a kind whose limit is zero', async () => {
    const reads: string[] = [];
    const pipelines = Object.assign(Object.create(world.pipelines), {
      recentSignals: async () => {
        reads.push('signals');
        return [];
      },
      recentExecutions: async () => {
        reads.push('executions');
        return [];
      },
    });
    const read = makeReadWindowedEvidence({ ...world, pipelines });
    expect(await read(pipeline, { signals: 0, executions: 0 })).toEqual({ signals: [], executions: [] });
    expect(reads).toEqual([]);
    await read(pipeline, { signals: 1, executions: 0 });
    await read(pipeline, { signals: 0, executions: 1 });
    expect(reads).toEqual(['signals', 'executions']);
  });
});
