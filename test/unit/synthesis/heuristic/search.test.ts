/** heuristic-v1's search over a numeric setting across a chain's rounds: the values tried, the next one. */
import { describe, expect, it } from 'vitest';
import type { ArmResult, Trial } from '../../../../lambdas/core/refinement.ts';
import type { Change } from '../../../../lambdas/core/schemas/runs.ts';
import { nextValue, type TriedValue, triedValues } from '../../../../lambdas/synthesis/heuristic/search.ts';

/** A value tried: the cases its change broke and fixed, and those still failing in its round. */
const tried = (
  value: number,
  broken: string[] = [],
  fixed: string[] = [],
  stillFailing: string[] = [],
): TriedValue => ({
  value,
  fixed,
  broken,
  round: { fixed: [], regressed: [], stillFailing, passing: [] },
});

describe('nextValue', () => {
  it('has nothing to decide before a value was tried, or when the last one tried is the base', () => {
    expect(nextValue(800, [])).toBeNull();
    expect(nextValue(800, [tried(1600, [], ['c1'], ['c2']), tried(800, [], ['c1'], ['c2'])])).toBeNull();
  });

  it('pushes a partial fix by at least twice the last step while no value broke cases', () => {
    // One fixed, one still failing: the rate says one more step of 800; at least double it.
    expect(nextValue(800, [tried(1600, [], ['c1'], ['c3'])])).toMatchObject({ value: 3200, move: 'push' });
    // Three still failing for one fixed: three more steps by the rate, capped at three times the step.
    expect(nextValue(800, [tried(1600, [], ['c1'], ['c2', 'c3', 'c4'])])).toMatchObject({ value: 4000 });
    // The last step fixed nothing and the same case still fails as one step before: grow it threefold.
    expect(nextValue(800, [tried(1200, [], ['c1'], ['c2']), tried(1600, [], [], ['c2'])])).toMatchObject({
      value: 2800,
      move: 'push',
    });
    expect(nextValue(800, [tried(1600, [], ['c1'], ['c3'])])).toEqual({
      value: 3200,
      move: 'push',
      brokeAt: null,
      heldAt: 1600,
      caseIds: ['c3'],
    });
  });

  it('searches downwards as well when the change lowered the setting', () => {
    expect(nextValue(1000, [tried(800, [], ['c1'], ['c2'])])).toEqual({
      value: 400,
      move: 'push',
      brokeAt: null,
      heldAt: 800,
      caseIds: ['c2'],
    });
    // 900 broke c3 after 950 held: halfway back, 925 (not kept at 950: 25 is more than 4 % of the step).
    expect(nextValue(1000, [tried(950, [], ['c1'], ['c2']), tried(900, ['c3'])])).toEqual({
      value: 925,
      move: 'back-off',
      brokeAt: 900,
      heldAt: 950,
      caseIds: ['c3'],
    });
  });

  it('backs off halfway towards the furthest value that held, naming the cases broken', () => {
    expect(nextValue(800, [tried(1600, [], ['c1'], ['c3']), tried(2400, ['c6', 'c7'])])).toEqual({
      value: 2000,
      move: 'back-off',
      brokeAt: 2400,
      heldAt: 1600,
      caseIds: ['c6', 'c7'],
    });
    // Of 150, 250 and 180 (all held), 250 is furthest from the base.
    expect(nextValue(100, [tried(150), tried(250), tried(180), tried(400, ['c9'])])).toEqual({
      value: 325,
      move: 'back-off',
      brokeAt: 400,
      heldAt: 250,
      caseIds: ['c9'],
    });
  });

  it('backs off halfway to the base when no value held', () => {
    expect(nextValue(1024, [tried(2048, ['c1'])])).toEqual({
      value: 1536,
      move: 'back-off',
      brokeAt: 2048,
      heldAt: null,
      caseIds: ['c1'],
    });
    // A setting centred on zero (a penalty from -0.5 to 0.5): halfway is 0, a value like any other.
    expect(nextValue(-0.5, [tried(0.5, ['c1'])])).toEqual({
      value: 0,
      move: 'back-off',
      brokeAt: 0.5,
      heldAt: null,
      caseIds: ['c1'],
    });
  });

  it('stays below the nearest value that broke cases on its side of the base, ignoring the other side', () => {
    const rounds = [
      tried(400, ['x']),
      tried(50, ['w']), // below the base: says nothing about raising it
      tried(100, ['v']), // the base itself
      tried(300, ['y']),
      tried(350, [], ['q']), // held, but past 300 which broke cases
      tried(300), // held once at 300 too: not below it
      tried(500, ['z']),
      tried(60), // held below the base
      tried(200, [], ['a'], ['b']),
    ];
    expect(nextValue(100, rounds)).toEqual({
      value: 250,
      move: 'push',
      brokeAt: 300,
      heldAt: 200,
      caseIds: ['b'],
    });
  });

  it('counts no value as held that sits at the base', () => {
    expect(nextValue(100, [tried(100), tried(200, ['c1'])])).toEqual({
      value: 150,
      move: 'back-off',
      brokeAt: 200,
      heldAt: null,
      caseIds: ['c1'],
    });
  });

  it('keeps the value that held once the next one is within 4 % of the step from it', () => {
    // Back-off to 196 is 4 away from 192, 4 % of the step of 100: converged.
    expect(nextValue(100, [tried(192, [], ['a'], ['b']), tried(200, ['c'])])).toEqual({
      value: 192,
      move: 'keep',
      brokeAt: 200,
      heldAt: 192,
      caseIds: ['c'],
    });
    // 197 is 5 away from 192: still worth a try.
    expect(nextValue(100, [tried(192, [], ['a'], ['b']), tried(202, ['c'])])).toMatchObject({
      value: 197,
      move: 'back-off',
    });
  });

  it('keeps the last value when it fixed cases and none still fail, or fixed none', () => {
    expect(nextValue(800, [tried(1600, [], ['c1'])])).toEqual({
      value: 1600,
      move: 'keep',
      brokeAt: null,
      heldAt: 1600,
      caseIds: [],
    });
    expect(nextValue(800, [tried(2400, ['c5']), tried(1600, [], [], ['c2'])])).toEqual({
      value: 1600,
      move: 'keep',
      brokeAt: 2400,
      heldAt: 1600,
      caseIds: [],
    });
  });

  it('rounds like the base: whole numbers stay whole, fractions to three places', () => {
    expect(nextValue(0.2, [tried(0.5, [], ['a'], ['b'])])).toMatchObject({ value: 1.1, move: 'push' });
    // Never below 0 for a setting that starts at or above it.
    expect(nextValue(1.3, [tried(0.65, [], ['a'], ['b'])])).toMatchObject({ value: 0, move: 'push' });
    expect(nextValue(0.7, [tried(0.3335, ['a'])])).toMatchObject({ value: 0.517, move: 'back-off' });
    expect(nextValue(10, [tried(15, ['a'])])).toMatchObject({ value: 13, move: 'back-off' });
  });
});

const change = (id: string, slotId: string, patch: Record<string, unknown>): Change => ({
  id,
  slotId,
  description: `change ${id}`,
  rationale: 'from the signals',
  findingIds: ['1'],
  patch,
});

/** A round over the listed cases: per case, the arms that passed. */
function trial(runId: string, changes: Change[], passed: Record<string, string[]>): Trial {
  const arms = ['base', 'candidate', ...changes.map((c) => `change:${c.id}`)];
  const results = new Map<string, Map<string, ArmResult>>(
    Object.entries(passed).map(([id, ok]) => [
      id,
      new Map(arms.map((arm) => [arm, { passed: ok.includes(arm) }])),
    ]),
  );
  return { runId, changes, results };
}

describe('triedValues', () => {
  const round = trial(
    'run-1',
    [
      change('1', 'retrieve', { timeoutMs: 1600 }),
      change('2', 'answer', { timeoutMs: 5000 }),
      change('3', 'retrieve', { timeoutMs: Number.POSITIVE_INFINITY }),
      change('4', 'retrieve', { timeoutMs: 'long' }),
    ],
    {
      'case-1': ['candidate', 'change:1', 'change:4'],
      'case-2': ['base', 'change:2', 'change:3', 'change:4'],
      'case-3': [],
    },
  );

  it("reads the slot's finite numeric values of the key, with the round's still failing cases", () => {
    expect(triedValues([round], 'retrieve', 'timeoutMs')).toEqual([
      {
        value: 1600,
        fixed: ['case-1'],
        broken: ['case-2'],
        round: { fixed: ['case-1'], regressed: ['case-2'], stillFailing: ['case-3'], passing: [] },
      },
    ]);
  });

  it('narrows the still failing cases to those related to what the change fixed', () => {
    const related = (_: Trial, fixed: readonly string[], failing: readonly string[]) =>
      failing.filter((id) => !fixed.includes(id) && id !== 'case-3');
    expect(triedValues([round, round], 'retrieve', 'timeoutMs', related).map((entry) => entry.round)).toEqual(
      [
        { fixed: ['case-1'], regressed: ['case-2'], stillFailing: [], passing: [] },
        { fixed: ['case-1'], regressed: ['case-2'], stillFailing: [], passing: [] },
      ],
    );
  });
});
