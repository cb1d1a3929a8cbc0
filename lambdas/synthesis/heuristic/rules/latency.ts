/**
 * Rule: high latency, from slow readings or a slot whose p90 duration is slow. Answered, as a
 * guess, by a smaller topK on a retrieval slot or a smaller maxTokens on the model slot.
 */

import { percentile } from '../../evidence/executions.ts';
import type { JsonObject } from '../../merge-patch.ts';
import { collectFaultEvidence, measuredP90 } from '../detect.ts';
import { HEURISTIC_V1_LIMITS as L } from '../limits.ts';
import type { FaultRule, Proposed, Skipped } from '../rule.ts';
import { numberSetting } from '../settings.ts';
import { actionOn, hasKey, isModelLike, pickSlot } from '../slots.ts';

const LATENCY_GUESS = 'latency has many causes; this trades output length or recall for speed';

const lowerMaxTokens = (settings: JsonObject): Proposed | Skipped => {
  const current = numberSetting(settings, 'maxTokens');
  if (current === undefined || current <= L.maxTokensFloorForLatency) {
    return { skip: `maxTokens is ${current ?? 'not set'}, too small or unknown to lower safely` };
  }
  const next = Math.max(L.maxTokensFloorForLatency, Math.round(current * 0.75));
  return {
    patch: { maxTokens: next },
    description: `Lower maxTokens from ${current} to ${next}.`,
    rationale: 'Long generations drive latency; a smaller token budget bounds the time per call.',
    guess: LATENCY_GUESS,
  };
};

const lowerTopK = (settings: JsonObject): Proposed | Skipped => {
  const current = numberSetting(settings, 'topK');
  if (current === undefined || current <= L.topKFloor * 2) {
    return { skip: `topK is ${current ?? 'not set'}, too small or unknown to lower safely` };
  }
  const next = Math.max(L.topKFloor, Math.ceil(current / 2));
  return {
    patch: { topK: next },
    description: `Lower topK from ${current} to ${next}.`,
    rationale: 'Fewer retrieved items mean less work per call and shorter prompts downstream.',
    guess: LATENCY_GUESS,
  };
};

export const latencyRule: FaultRule = {
  fault: 'latency',
  label: 'High latency',
  pattern: /latenc|\bslow|\bp9[059]\b|response time|duration/,
  infoValueShowsFault: (value) => value >= L.slowMs,
  detect: (window) =>
    collectFaultEvidence(window, 'latency', (stats, found, open) => {
      const p90Ms = measuredP90(stats);
      if (p90Ms === undefined) return;
      const evidence = p90Ms >= L.slowMs ? open() : found;
      if (evidence === undefined) return;
      evidence.p90Ms = p90Ms;
      evidence.latencySamples = stats.durations.length;
      // A latency finding cites the runs that were slow in its slot.
      evidence.executions = stats.timedRuns.filter((_, index) => (stats.durations[index] ?? 0) >= L.slowMs);
    }),
  describeReadings: (readings) => `p90 reported latency ${percentile(readings, 0.9)} ms`,
  answer(finding, { slots, isRaised }) {
    if (finding.slot !== undefined && hasKey(finding.slot, 'topK')) {
      // Stryker disable next-line StringLiteral: an action name only keys the merging of equal changes, and no other action has this one.
      return actionOn('topK', { slot: finding.slot }, lowerTopK);
    }
    const target = pickSlot(slots, finding.slot, isModelLike('maxTokens'), 'model');
    if (target !== undefined && isRaised('maxTokens', target.slot.id)) {
      return actionOn('lowerMaxTokens', target, () => ({
        skip: `maxTokens of slot "${target.slot.id}" is being raised for truncated output, so it is not lowered for latency`,
        conflict: true,
      }));
    }
    return actionOn('lowerMaxTokens', target, lowerMaxTokens);
  },
};
