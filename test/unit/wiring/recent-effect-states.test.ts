import { describe, expect, it } from 'vitest';
import { emptyState } from '../../../lambdas/core/rollouts/effect-state.ts';
import { makeRecentEffectStates, RECENT_STATES_KEPT } from '../../../lambdas/wiring/recent-effect-states.ts';

const stateOf = (slot: string) =>
  emptyState({
    now: new Date('2025-06-02T10:00:00.000Z'),
    slotIds: [slot],
    base: { configurationId: 'cfg-base' },
    applied: { configurationId: 'cfg-candidate' },
    signalsFrom: '',
  });

describe("an environment's memory of effect states", () => {
  it('answers the state remembered last for a run of a pipeline, and nothing for another', () => {
    const states = makeRecentEffectStates();
    states.remember('pipeline-1', 'run-1', stateOf('a'));
    states.remember('pipeline-1', 'run-1', stateOf('b'));

    expect(states.get('pipeline-1', 'run-1')).toEqual(stateOf('b'));
    expect(states.get('pipeline-1', 'run-2')).toBeUndefined();
    expect(states.get('pipeline-2', 'run-1')).toBeUndefined();
  });

  it(`keeps the ${RECENT_STATES_KEPT} runs remembered most recently, forgetting the oldest first`, () => {
    const states = makeRecentEffectStates();
    for (let run = 0; run <= RECENT_STATES_KEPT; run++) states.remember('p', `run-${run}`, stateOf('a'));
    // Remembered again: the newest now, so the next one forgets run-2, not run-1.
    states.remember('p', 'run-1', stateOf('b'));
    states.remember('p', 'run-new', stateOf('a'));

    expect(states.get('p', 'run-0')).toBeUndefined();
    expect(states.get('p', 'run-1')).toEqual(stateOf('b'));
    expect(states.get('p', 'run-2')).toBeUndefined();
    expect(states.get('p', 'run-3')).toEqual(stateOf('a'));
    expect(states.get('p', 'run-new')).toEqual(stateOf('a'));
  });
});
