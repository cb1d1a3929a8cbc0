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
import { routingPoint } from '../../../../lambdas/core/rollouts/routing.ts';
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

describe('the bulk evaluation’s flags', () => {
  const cfg = (id: string, pipelineId: string, version: number): Configuration => ({
    ...configuration(id),
    pipelineId,
    version,
  });
  /** p1 without a rollout, p2 in a rollout of 50 % (its state served), p3 with no serving item. */
  function world() {
    const now = { ms: 1_000_000 };
    const reads = { configurations: [] as string[], states: [] as string[][], starts: 0 };
    const states = new Map([
      [
        'p2',
        {
          pipelineId: 'p2',
          teamId: 'team-1',
          active: cfg('c2', 'p2', 3),
          rollout: { id: 'rollout-2', percent: 50, candidate: cfg('c2-next', 'p2', 4) },
        },
      ],
    ]);
    const indexed: TeamPipeline[] = [
      { id: 'p1', activeConfigurationId: 'c1', rollout: null },
      {
        id: 'p2',
        activeConfigurationId: 'c2',
        rollout: { id: 'rollout-2', percent: 50, candidateConfigurationId: 'c2-next' },
      },
      { id: 'p3', activeConfigurationId: 'c3', rollout: null },
    ];
    const stored = new Map([
      ['c1', cfg('c1', 'p1', 1)],
      ['c3', cfg('c3', 'p3', 2)],
    ]);
    const serving: TeamServing = {
      servingVersion: async () => ({ version: 5, changedAt: 0 }),
      startServingVersion: async () => {
        reads.starts++;
      },
      teamPipelines: async () => indexed,
      servingStates: async (ids) => {
        reads.states.push([...ids]);
        return new Map([...states].filter(([id]) => ids.includes(id)));
      },
    };
    const pipelines = {
      getConfiguration: async (_pipelineId: string, id: string) => {
        reads.configurations.push(id);
        return stored.get(id) ?? null;
      },
    } as unknown as PipelineRepository;
    const evaluate = makeEvaluateFlags(
      { pipelines, teamServing: serving },
      () => 0.5,
      () => now.ms,
    );
    return { reads, indexed, stored, evaluate };
  }
  const keyIn = (inside: boolean) => {
    for (let i = 0; ; i++) if (routingPoint('rollout-2', `user-${i}`) < 50 === inside) return `user-${i}`;
  };

  it('answers every pipeline of the team: STATIC outside a rollout, SPLIT on the arm the key gets', async () => {
    const { evaluate } = world();
    const candidate = await evaluate(principal, keyIn(true), undefined);
    expect(candidate.flags).toEqual([
      {
        key: 'p1',
        value: { configurationId: 'c1', version: 1, slots: [] },
        variant: 'c1',
        reason: 'STATIC',
        metadata: { arm: 'base', version: 1 },
      },
      {
        key: 'p2',
        value: { configurationId: 'c2-next', version: 4, slots: [] },
        variant: 'c2-next',
        reason: 'SPLIT',
        metadata: { rolloutId: 'rollout-2', arm: 'candidate', version: 4 },
      },
      expect.objectContaining({ key: 'p3', variant: 'c3', reason: 'STATIC' }),
    ]);
    const base = await evaluate(principal, keyIn(false), undefined);
    expect(base.flags?.[1]).toMatchObject({
      variant: 'c2',
      reason: 'SPLIT',
      metadata: { arm: 'base', version: 3 },
    });
    expect(base.etag).not.toBe(candidate.etag);
  });

  it("reads a configuration once: from the pipeline's serving item, else the table, then from memory", async () => {
    const { reads, evaluate } = world();
    await evaluate(principal, keyIn(true), undefined);
    expect(reads.states).toEqual([['p1', 'p2', 'p3']]);
    expect(reads.configurations.sort()).toEqual(['c1', 'c3']);
    await evaluate(principal, keyIn(false), undefined);
    // Only the base arm of p2 is new: its serving item names it.
    expect(reads.states).toEqual([['p1', 'p2', 'p3'], ['p2']]);
    expect(reads.configurations.sort()).toEqual(['c1', 'c3']);
    await evaluate(principal, keyIn(true), undefined);
    expect(reads.states).toHaveLength(2);
    expect(reads.starts).toBe(0);
  });

  it('leaves out a pipeline deleted since the index read it', async () => {
    const { stored, evaluate } = world();
    stored.delete('c3');
    const answer = await evaluate(principal, keyIn(true), undefined);
    expect(answer.flags?.map((flag) => flag.key)).toEqual(['p1', 'p2']);
  });

  it('answers 304 to its ETag sent weak, among others, and not to one of another targeting key or malformed', async () => {
    const { evaluate } = world();
    const key = keyIn(true);
    const { etag } = await evaluate(principal, key, undefined);
    expect(await evaluate(principal, key, `W/${etag}`)).toEqual({ etag, flags: null });
    expect(await evaluate(principal, key, `"other", *,  ${etag} `)).toEqual({ etag, flags: null });
    expect((await evaluate(principal, keyIn(false), etag)).flags).toHaveLength(3);
    expect((await evaluate(principal, key, `x${etag}`)).flags).toHaveLength(3);
    expect((await evaluate(principal, key, `${etag}x`)).flags).toHaveLength(3);
  });

  it('answers 304 to a provisional ETag once the index shows the same flags', async () => {
    const now = { ms: 1_000_000 };
    const { state, change, evaluate } = team(now);
    change('c1');
    const first = await evaluate();
    expect(first.etag).toMatch(/\.q"$/);
    const again = await evaluate(first.etag);
    expect(again).toEqual({ etag: first.etag, flags: null });
    expect(state.reads).toEqual(['version', 'index', 'version', 'index']);
  });
});
