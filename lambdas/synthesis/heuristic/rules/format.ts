/**
 * Rule: malformed output (format, parse and schema errors). Answered by a lower temperature on the
 * model slot and an instruction to return only valid JSON in the prompt slot.
 */
import type { JsonObject } from '../../merge-patch.ts';
import { collectFaultEvidence } from '../detect.ts';
import type { FaultRule, Proposed, Skipped } from '../rule.ts';
import { appendInstruction, numberSetting } from '../settings.ts';
import { actionOn, isModelLike, isPromptLike, pickSlot } from '../slots.ts';

export const FORMAT_INSTRUCTION =
  'Respond only with valid JSON that matches the requested schema: no prose, no code fences, no trailing commas.';

const lowerTemperature = (settings: JsonObject): Proposed | Skipped => {
  const current = numberSetting(settings, 'temperature');
  if (current === undefined) return { skip: 'temperature is not set, so lowering it is not a known change' };
  if (current === 0) return { skip: 'temperature is already 0' };
  const next = current >= 0.4 ? Math.round((current / 2) * 100) / 100 : 0;
  return {
    patch: { temperature: next },
    description: `Lower temperature from ${current} to ${next}.`,
    rationale:
      'Malformed output strays from the expected structure; a lower temperature makes it more predictable.',
  };
};

export const formatRule: FaultRule = {
  fault: 'format',
  label: 'Malformed output (format or parse errors)',
  pattern:
    /json|\bpars(e|er|ing)|schema|malformed|unexpected token|invalid (format|output|response)|\bformat/,
  detect: (window) => collectFaultEvidence(window, 'format'),
  answer: (finding, { slots }) => [
    ...actionOn(
      // Stryker disable next-line StringLiteral: an action name only keys the merging of equal changes, and no other action has this one.
      'temperature',
      pickSlot(slots, finding.slot, isModelLike('temperature'), 'model'),
      lowerTemperature,
    ),
    ...actionOn(
      // Stryker disable next-line StringLiteral: an action name only keys the merging of equal changes, and no other action has this one.
      'formatInstruction',
      pickSlot(slots, finding.slot, isPromptLike, 'prompt'),
      appendInstruction(
        FORMAT_INSTRUCTION,
        'An explicit instruction to return only valid JSON reduces malformed output.',
      ),
    ),
  ],
};
