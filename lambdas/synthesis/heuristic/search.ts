/*
 * heuristic-v1's search over a numeric setting across a chain's rounds: each value tried, whether
 * it broke cases (on its own arm, or in the candidate), and the next value to try — backed off
 * halfway towards the last value that broke nothing, or pushed further in the same direction while
 * cases still fail — from the evaluation evidence alone.
 */
import { type CandidateEffect, candidateEffect, changeEffects, type Trial } from '../../core/refinement.ts';

/** One value of a setting tried in one round, and what its change did there. */
export interface TriedValue {
  value: number;
  fixed: string[];
  broken: string[];
  /** The round's candidate effect: what still failed with every change together. */
  round: CandidateEffect;
}

/** What the search decided for a setting, and why. */
export interface NextValue {
  value: number;
  move: 'back-off' | 'push' | 'keep';
  /** The value that last broke cases, when one did (the search stays below it). */
  brokeAt: number | null;
  /** The value furthest from the base that broke nothing, when one did. */
  heldAt: number | null;
  /** The cases behind the decision: the broken ones for a back-off, the still failing ones for a push. */
  caseIds: string[];
}

/**
 * The values of `slotId.key` tried in the trials, oldest first, with their change's effect. A
 * round's still failing cases are narrowed to those `related` to what the change fixed (the same
 * recorded failure): a case failing for another reason is no cause to push this setting further.
 */
export function triedValues(
  trials: readonly Trial[],
  slotId: string,
  key: string,
  related: (trial: Trial, fixed: readonly string[], failing: readonly string[]) => string[] = (
    _,
    __,
    failing,
  ) => [...failing],
): TriedValue[] {
  return trials.flatMap((trial) => {
    const effects = changeEffects(trial);
    const round = candidateEffect(trial);
    return effects.flatMap((effect) => {
      const value = effect.change.slotId === slotId ? effect.change.patch[key] : undefined;
      if (typeof value !== 'number' || !Number.isFinite(value)) return [];
      const stillFailing = related(trial, effect.fixed, round.stillFailing);
      return [{ value, fixed: effect.fixed, broken: effect.broken, round: { ...round, stillFailing } }];
    });
  });
}

/**
 * The last value fixed nothing, yet broke nothing and the same cases still fail as with the value
 * tried before it in the same direction: the step was too short to matter, so the search grows it.
 */
function stuck(tried: readonly TriedValue[], distance: (value: number) => number): boolean {
  const [before, last] = tried.slice(-2);
  if (!before || !last || distance(before.value) <= 0 || distance(last.value) <= distance(before.value))
    return false;
  const earlier = new Set(before.round.stillFailing);
  return last.round.stillFailing.length > 0 && last.round.stillFailing.every((id) => earlier.has(id));
}

/** How much a push grows the last step: at least double it, at most triple it. */
const GROWTH = { min: 2, max: 3 } as const;

/** A setting that starts at 0 or above (a timeout, a budget, a temperature) never goes below 0. */
const within = (value: number, base: number) => (base >= 0 ? Math.max(0, value) : value);

/** Two values this close (relative to the step from the base) are the same: the search has converged. */
const CONVERGED = 0.04;

const roundLike = (value: number, like: number) =>
  Number.isInteger(like) ? Math.round(value) : Math.round(value * 1000) / 1000;

/**
 * The next value of a setting whose base value is `base`, from the values tried (the last is the
 * parent's). Broke cases: halfway back towards the furthest value that broke nothing (or the base).
 * Broke none and cases still fail the same way (it fixed some, or the same cases fail as one step
 * before): further in the same direction — halfway to the nearest value that broke cases, or by
 * twice the last step when none did, so a setting several times off is reached within a few
 * rounds. Otherwise: kept.
 */
export function nextValue(base: number, tried: readonly TriedValue[]): NextValue | null {
  const last = tried.at(-1);
  if (!last || last.value === base) return null;
  const direction = Math.sign(last.value - base);
  const distance = (value: number) => (value - base) * direction;
  const broke = tried.filter((entry) => entry.broken.length > 0 && distance(entry.value) > 0);
  const brokeAt =
    broke.length === 0 ? null : broke.reduce((a, b) => (distance(b.value) < distance(a.value) ? b : a)).value;
  const held = tried.filter(
    (entry) =>
      entry.broken.length === 0 &&
      distance(entry.value) > 0 &&
      (brokeAt === null || distance(entry.value) < distance(brokeAt)),
  );
  const heldAt =
    held.length === 0 ? null : held.reduce((a, b) => (distance(b.value) > distance(a.value) ? b : a)).value;
  const step = Math.abs(last.value - base);
  const decide = (value: number, move: NextValue['move'], caseIds: string[]): NextValue => {
    const rounded = roundLike(value, base);
    // Too close to a value already known to hold: keep that one rather than split hairs.
    if (heldAt !== null && Math.abs(rounded - heldAt) <= CONVERGED * step) {
      return { value: heldAt, move: 'keep', brokeAt, heldAt, caseIds };
    }
    return { value: rounded, move, brokeAt, heldAt, caseIds };
  };
  if (last.broken.length > 0) {
    return decide(((heldAt ?? base) + last.value) / 2, 'back-off', last.broken);
  }
  const stillFailing = last.round.stillFailing;
  if (stillFailing.length > 0 && (last.fixed.length > 0 || stuck(tried, distance))) {
    // The step before this one: from the nearest value tried short of the last (else the base).
    const short = tried.filter(
      (entry) => distance(entry.value) > 0 && distance(entry.value) < distance(last.value),
    );
    const from =
      short.length === 0
        ? base
        : short.reduce((a, b) => (distance(b.value) > distance(a.value) ? b : a)).value;
    // Cases still fail the same way: at least double the step — by the distance the last value's
    // rate of fixes says the rest need, up to three times the step — but never reach a value that
    // broke cases (bisect towards it instead).
    const step = last.value - from;
    const needed =
      last.fixed.length === 0 ? Infinity : (distance(last.value) * stillFailing.length) / last.fixed.length;
    const grown = Math.min(GROWTH.max * Math.abs(step), Math.max(GROWTH.min * Math.abs(step), needed));
    const further = brokeAt === null ? last.value + direction * grown : (last.value + brokeAt) / 2;
    return decide(within(further, base), 'push', stillFailing);
  }
  return { value: last.value, move: 'keep', brokeAt, heldAt, caseIds: [] };
}
