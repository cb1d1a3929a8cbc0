/**
 * Rule: calls that hit their time limit. Answered by a longer timeoutMs on the calling slot (twice
 * the limit, or twice the measured p90 when unset), and by another retry once the cap is reached.
 */
import type { JsonObject } from '../../merge-patch.ts';
import { collectFaultEvidence, measuredP90 } from '../detect.ts';
import { HEURISTIC_V1_LIMITS as L } from '../limits.ts';
import type { FaultRule, Proposed, Skipped } from '../rule.ts';
import { numberSetting, raiseRetries } from '../settings.ts';
import { actionOn, callingSlot } from '../slots.ts';

const raiseTimeout =
  (p90Ms: number | undefined) =>
  (settings: JsonObject): Proposed | Skipped => {
    const current = numberSetting(settings, 'timeoutMs');
    if ((current ?? 0) >= L.timeoutCapMs) {
      // The limit cannot grow any more; retrying is what is left.
      const retried = raiseRetries('transient')(settings);
      return 'skip' in retried ? { skip: `timeoutMs is already ${current} and ${retried.skip}` } : retried;
    }
    if (current !== undefined) {
      const next = Math.min(L.timeoutCapMs, current * 2);
      return {
        patch: { timeoutMs: next },
        description: `Raise timeoutMs from ${current} to ${next}.`,
        rationale:
          'Calls hit their time limit; a longer limit lets slow but healthy calls finish instead of failing the run.',
      };
    }
    const next =
      p90Ms === undefined
        ? L.defaultTimeoutMs
        : Math.min(L.timeoutCapMs, Math.max(L.minTimeoutMs, Math.ceil((p90Ms * 2) / 1000) * 1000));
    return {
      patch: { timeoutMs: next },
      description: `Set timeoutMs to ${next} (it was not set).`,
      rationale: `Calls hit their time limit; an explicit limit of ${next} ms ${p90Ms === undefined ? 'is a starting point' : `is twice the p90 duration of ${p90Ms} ms`}.`,
      guess: `timeoutMs was not set, so the limit in force is unknown and ${next} ms may not be higher`,
    };
  };

export const timeoutRule: FaultRule = {
  fault: 'timeout',
  label: 'Timeouts',
  pattern: /timed?[ _-]?out|timeout|deadline exceeded|etimedout/,
  // The slot's measured p90 sizes a new limit, so the finding carries it.
  detect: (window) =>
    collectFaultEvidence(window, 'timeout', (stats, found) => {
      const p90Ms = measuredP90(stats);
      if (found === undefined || p90Ms === undefined) return;
      found.p90Ms = p90Ms;
      found.latencySamples = stats.durations.length;
    }),
  answer: (finding, { slots }) =>
    actionOn('timeout', callingSlot(finding, slots, 'timeoutMs'), raiseTimeout(finding.p90Ms)),
};
