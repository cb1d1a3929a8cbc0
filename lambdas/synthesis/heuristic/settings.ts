/**
 * Setting changes more than one rule proposes: another retry, a sentence added to a prompt's
 * instructions; and reading a numeric setting.
 */
import type { JsonObject } from '../merge-patch.ts';
import { HEURISTIC_V1_LIMITS as L } from './limits.ts';
import type { Proposed, Skipped } from './rule.ts';

/** A setting's value when it is a finite number. */
export const numberSetting = (settings: JsonObject, key: string): number | undefined => {
  const value = settings[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
};

/** One more retry (or the default when none is set), up to the cap. */
export const raiseRetries =
  (cause: 'transient' | 'error') =>
  (settings: JsonObject): Proposed | Skipped => {
    const current = numberSetting(settings, 'maxRetries');
    if ((current ?? 0) >= L.retriesCap) {
      return { skip: `maxRetries is already ${current}, the most this heuristic sets` };
    }
    const next = current === undefined ? L.defaultRetries : current + 1;
    const rationale =
      cause === 'transient'
        ? 'The failures look transient (rate limits, overload, dropped connections or time limits); another retry recovers most of them.'
        : 'The slot fails often; another retry may recover intermittent failures.';
    const guesses = [
      cause === 'error'
        ? 'the errors do not show that they are transient, so retrying may not help'
        : undefined,
      current === undefined ? 'maxRetries was not set, so the retries in force are unknown' : undefined,
    ].filter((reason) => reason !== undefined);
    return {
      patch: { maxRetries: next },
      description:
        current === undefined
          ? `Set maxRetries to ${next} (it was not set).`
          : `Raise maxRetries from ${current} to ${next}.`,
      rationale,
      ...(guesses.length > 0 ? { guess: guesses.join('; ') } : {}),
    };
  };

/** The sentence appended to the instructions, unless they already say it. */
export const appendInstruction =
  (sentence: string, rationale: string, guess?: string) =>
  (settings: JsonObject): Proposed | Skipped => {
    const current = typeof settings.instructions === 'string' ? settings.instructions : undefined;
    if (current?.includes(sentence)) return { skip: 'the instructions already say this' };
    const next =
      current === undefined || current.trim() === '' ? sentence : `${current.trimEnd()}\n\n${sentence}`;
    return {
      patch: { instructions: next },
      description: `Add to the instructions: "${sentence}"`,
      rationale,
      ...(guess === undefined ? {} : { guess }),
    };
  };
