/*
 * The effect states a function's execution environment measured lately (core/ports/rollouts.ts
 * RecentEffectStates): an in-memory list of the newest few, built once per environment by the
 * composition root, so that a warm start's next measurement reads early.
 */
import type { RecentEffectStates } from '../core/ports/rollouts.ts';
import type { EffectState } from '../core/rollouts/effect-state.ts';

/** Runs whose state is remembered: a few, the newest kept (a state is at most one item's size). */
export const RECENT_STATES_KEPT = 16;

/** A memory of the last `kept` runs' states, the oldest remembered forgotten first. */
export function makeRecentEffectStates(kept = RECENT_STATES_KEPT): RecentEffectStates {
  const states = new Map<string, EffectState>();
  const keyOf = (pipelineId: string, runId: string) => `${pipelineId}#${runId}`;
  return {
    get: (pipelineId, runId) => states.get(keyOf(pipelineId, runId)),
    remember(pipelineId, runId, state) {
      const key = keyOf(pipelineId, runId);
      states.delete(key);
      states.set(key, state);
      while (states.size > kept) {
        const oldest = states.keys().next().value;
        if (oldest === undefined) break;
        states.delete(oldest);
      }
    },
  };
}
