/**
 * Rule: output cut off at the token limit. Answered by a larger maxTokens on the model slot
 * (doubled, or a default when unset), up to a cap.
 */

import type { Slot } from '../../../core/schemas/pipelines.ts';
import type { JsonObject } from '../../merge-patch.ts';
import { collectFaultEvidence } from '../detect.ts';
import { HEURISTIC_V1_LIMITS as L } from '../limits.ts';
import type { FaultEvidence, FaultRule, Proposed, Skipped } from '../rule.ts';
import { numberSetting } from '../settings.ts';
import { actionOn, isModelLike, pickSlot } from '../slots.ts';

const raiseMaxTokens = (settings: JsonObject): Proposed | Skipped => {
  const current = numberSetting(settings, 'maxTokens');
  if ((current ?? 0) >= L.maxTokensCap) {
    return { skip: `maxTokens is already ${current}; shorter output must come from the prompt` };
  }
  if (current === undefined) {
    return {
      patch: { maxTokens: L.defaultMaxTokens },
      description: `Set maxTokens to ${L.defaultMaxTokens} (it was not set).`,
      rationale:
        'Output is cut off at the token limit; an explicit, larger budget lets complete answers through.',
      guess: 'maxTokens was not set, so the limit in force is unknown',
    };
  }
  const next = Math.min(L.maxTokensCap, current * 2);
  return {
    patch: { maxTokens: next },
    description: `Raise maxTokens from ${current} to ${next}.`,
    rationale: 'Output is cut off at the token limit; doubling the budget lets complete answers through.',
  };
};

const target = (finding: FaultEvidence, slots: readonly Slot[]) =>
  pickSlot(slots, finding.slot, isModelLike('maxTokens'), 'model');

export const truncationRule: FaultRule = {
  fault: 'truncation',
  label: 'Truncated output',
  pattern:
    /truncat|max[ _-]?tokens|token limit|length limit|finish[ _-]?reason\W*length|stop[ _-]?reason\W*max|cut off/,
  detect: (window) => collectFaultEvidence(window, 'truncation'),
  raises(finding, slots) {
    const slot = target(finding, slots)?.slot;
    return slot === undefined ? undefined : { setting: 'maxTokens', slotId: slot.id };
  },
  answer: (finding, { slots }) => actionOn('raiseMaxTokens', target(finding, slots), raiseMaxTokens),
};
