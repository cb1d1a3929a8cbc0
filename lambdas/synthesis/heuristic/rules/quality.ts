/**
 * Rule: poor answers (bad feedback, low eval scores). Answered, as a guess, by an instruction in
 * the prompt slot to keep to what the input supports.
 */
import { collectFaultEvidence } from '../detect.ts';
import type { FaultRule } from '../rule.ts';
import { appendInstruction } from '../settings.ts';
import { actionOn, isPromptLike, pickSlot } from '../slots.ts';

export const QUALITY_INSTRUCTION =
  'Base every statement on the provided input; if the input does not support an answer, say so instead of guessing.';

/** Reads 0–1, 0–5, 0–10 and 0–100 scales; below half of the scale is a low score. */
export function isLowScore(value: number): boolean {
  const scale = [1, 5, 10].find((top) => value <= top) ?? 100;
  return value / scale < 0.5;
}

export const qualityRule: FaultRule = {
  fault: 'quality',
  label: 'Poor answers (bad feedback or low eval scores)',
  pattern:
    /feedback|\beval|rating|score|quality|review|judge|hallucinat|incorrect|inaccurate|irrelevant|unhelpful|\bwrong\b|off[ -]topic|thumbs[ _-]?down/,
  infoValueShowsFault: isLowScore,
  detect: (window) => collectFaultEvidence(window, 'quality'),
  describeReadings(readings) {
    const mean = readings.reduce((sum, value) => sum + value, 0) / readings.length;
    return `mean score ${Math.round(mean * 100) / 100}`;
  },
  answer: (finding, { slots }) =>
    actionOn(
      'qualityInstruction',
      pickSlot(slots, finding.slot, isPromptLike, 'prompt'),
      appendInstruction(
        QUALITY_INSTRUCTION,
        'Users or evals flag poor answers; a stricter instruction keeps the model to what the input supports.',
        'the signals say answers are poor, not why; a generic instruction may not address the cause',
      ),
    ),
};
