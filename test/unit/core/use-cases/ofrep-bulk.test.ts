/**
 * The bulk evaluation's 304 decided by the team's serving version: what it reads, and why a change
 * racing the answer, or an index that has not caught up, never earns a stale 304.
 */
import { describe, expect, it } from 'vitest';
import type { PipelineRepository } from '../../../../lambdas/core/ports/pipelines.ts';
import type {
  ServingVersion,
  TeamPipeline,
  TeamServing,
} from '../../../../lambdas/core/ports/team-serving.ts';
import type { Principal } from '../../../../lambdas/core/principal.ts';
import type { Configuration } from '../../../../lambdas/core/schemas/pipelines.ts';
import { INDEX_SETTLE_MS, makeEvaluateFlags } from '../../../../lambdas/core/use-cases/ofrep.ts';

const principal: Principal = {
  principalId: 'user-1',
  userId: 'user-1',
  teamId: 'team-1',
  role: 'viewer',
  method: 'api-token',
  tokenId: 'token-1',
};

const configuration = (id: string): Configuration => ({
  id,
  pipelineId: 'p1',
  version: 1,
  slots: [],
  source: 'manual',
  createdAt: '2026-11-27T00:00:00.000Z',
  createdBy: 'user-1',
});

/** A team whose index shows `indexed` (which may lag `stamp`), counting what each request reads. */
function team(now: { ms: number }) {
  const state = {
    stamp: null as ServingVersion | null,
    indexed: [{ id: 'p1', activeConfigurationId: 'c1', rollout: null }] as TeamPipeline[],
    reads: [] as string[],
    /** Runs between the version's read and the index's, as a concurrent change would. */
    meanwhile: () => {},
  };
  const serving: TeamServing = {
    async servingVersion() {
      state.reads.push('version');
      return state.stamp;
    },
    async startServingVersion(_teamId, at) {
      state.stamp ??= { version: 0, changedAt: at };
    },
    async teamPipelines() {
      state.reads.push('index');
      state.meanwhile();
      return state.indexed;
    },
    async servingStates() {
      return new Map();
    },
  };
  const pipelines = {
    getConfiguration: async (_pipelineId: string, id: string) => configuration(id),
  } as unknown as PipelineRepository;
  const change = (activeConfigurationId: string) => {
    state.stamp = { version: (state.stamp?.version ?? 0) + 1, changedAt: now.ms };
    state.indexed = [{ id: 'p1', activeConfigurationId, rollout: null }];
  };
  const evaluate = makeEvaluateFlags({ pipelines, teamServing: serving }, Math.random, () => now.ms);
  return { state, change, evaluate: (etag?: string) => evaluate(principal, 'user-7', etag) };
}

describe('the bulk evaluation’s ETag', () => {
  it('answers 304 from the version alone once the last change has settled', async () => {
    const now = { ms: 1_000_000 };
    const { state, change, evaluate } = team(now);
    change('c1');
    now.ms += INDEX_SETTLE_MS;
    const first = await evaluate();
    state.reads = [];

    const again = await evaluate(first.etag);

    expect(again).toEqual({ etag: first.etag, flags: null });
    expect(state.reads).toEqual(['version']);
  });

  it('never answers 304 to an answer read while a change committed', async () => {
    const now = { ms: 1_000_000 };
    const { state, change, evaluate } = team(now);
    change('c1');
    now.ms += INDEX_SETTLE_MS;
    state.meanwhile = () => {
      state.meanwhile = () => {};
      change('c2');
    };
    const raced = await evaluate();
    expect(raced.flags?.[0]?.variant).toBe('c2');
    now.ms += INDEX_SETTLE_MS;

    const next = await evaluate(raced.etag);

    // The raced answer named the version read before the change: the next request answers again.
    expect(next.flags?.[0]?.variant).toBe('c2');
    expect(next.etag).not.toBe(raced.etag);
    expect(await evaluate(next.etag)).toEqual({ etag: next.etag, flags: null });
  });

  it('gives an answer read before the index caught up a provisional ETag, never a stale 304', async () => {
    const now = { ms: 1_000_000 };
    const { state, change, evaluate } = team(now);
    change('c1');
    now.ms += INDEX_SETTLE_MS;
    const before = await evaluate();
    change('c2');
    state.indexed = [{ id: 'p1', activeConfigurationId: 'c1', rollout: null }];

    const lagging = await evaluate(before.etag);
    expect(lagging.flags?.[0]?.variant).toBe('c1');
    state.indexed = [{ id: 'p1', activeConfigurationId: 'c2', rollout: null }];
    now.ms += INDEX_SETTLE_MS;
    const caughtUp = await evaluate(lagging.etag);

    expect(caughtUp.flags?.[0]?.variant).toBe('c2');
    expect(await evaluate(caughtUp.etag)).toEqual({ etag: caughtUp.etag, flags: null });
  });

  it('reads the index for a team with no version yet, and starts its version', async () => {
    const now = { ms: 1_000_000 };
    const { state, evaluate } = team(now);

    const first = await evaluate();

    expect(first.flags?.[0]?.variant).toBe('c1');
    expect(state.reads).toEqual(['version', 'index']);
    expect(state.stamp).toEqual({ version: 0, changedAt: now.ms });
  });
});
