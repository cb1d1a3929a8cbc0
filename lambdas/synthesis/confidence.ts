import type { Confidence, Signal } from '../core/schemas.ts';

/**
 * The confidence of a proposal, computed by code from the evidence its findings cite; a model
 * never sets it.
 *
 * Rule (points, then a band):
 * - support: the distinct signals of the window that back the findings, i.e. every cited signal
 *   plus every repeat of one (same kind, slot and message; the prompt shows one of each):
 *   +2 when at least 10, +1 when at least 3.
 * - severity: +1 when at least half of that support is `warning` or `critical`.
 * - agreement: +1 when at least half of the findings are each backed by 2 or more signals.
 * - drops (references, changes or warning links the code had to remove): -1 for 1 or 2, -2 for 3+.
 * - high at 4 points, medium at 2 or 3, low below; low whenever no finding cites a signal.
 */
export const CONFIDENCE_RULE = {
  strongSupport: 10,
  someSupport: 3,
  severeShare: 0.5,
  corroboratedShare: 0.5,
  corroboratingSignals: 2,
  manyDrops: 3,
  highAt: 4,
  mediumAt: 2,
} as const;

export interface ConfidenceInput {
  /** The kept findings with their mapped signal ids. */
  findings: readonly { signalIds: readonly string[] }[];
  /** The signals the findings' ids point at. */
  shownSignals: readonly Signal[];
  /** The whole window the shown signals were picked from; repeats in it count as agreement. */
  allSignalsInWindow: readonly Signal[];
  /** How many references, changes or links the code dropped from the draft. */
  drops: number;
}

export interface ConfidenceScore {
  confidence: Confidence;
  points: number;
  support: number;
  severeShare: number;
  corroboratedFindings: number;
  drops: number;
}

/** The key under which signals count as repeats of one another. */
export function signalRepeatKey(signal: Pick<Signal, 'kind' | 'slotId' | 'message'>): string {
  return JSON.stringify([signal.kind, signal.slotId ?? null, signal.message]);
}

/** Scores the evidence behind a proposal; see the rule above. */
export function scoreConfidence(input: ConfidenceInput): ConfidenceScore {
  const byId = new Map(input.shownSignals.map((signal) => [signal.id, signal]));
  const repeatsByKey = new Map<string, Signal[]>();
  for (const signal of input.allSignalsInWindow) {
    const key = signalRepeatKey(signal);
    const group = repeatsByKey.get(key);
    if (group === undefined) repeatsByKey.set(key, [signal]);
    else group.push(signal);
  }

  const supportOf = (signalIds: readonly string[]): Signal[] => {
    const supporting = new Map<string, Signal>();
    for (const id of signalIds) {
      const cited = byId.get(id);
      if (cited === undefined) continue;
      supporting.set(cited.id, cited);
      for (const repeat of repeatsByKey.get(signalRepeatKey(cited)) ?? []) supporting.set(repeat.id, repeat);
    }
    return [...supporting.values()];
  };

  const supporting = supportOf(input.findings.flatMap((finding) => finding.signalIds));
  const support = supporting.length;
  const severe = supporting.filter((signal) => signal.severity !== 'info').length;
  const severeShare = support === 0 ? 0 : severe / support;
  const corroboratedFindings = input.findings.filter(
    (finding) => supportOf(finding.signalIds).length >= CONFIDENCE_RULE.corroboratingSignals,
  ).length;

  let points = 0;
  if (support >= CONFIDENCE_RULE.strongSupport) points += 2;
  else if (support >= CONFIDENCE_RULE.someSupport) points += 1;
  if (support > 0 && severeShare >= CONFIDENCE_RULE.severeShare) points += 1;
  if (
    input.findings.length > 0 &&
    corroboratedFindings / input.findings.length >= CONFIDENCE_RULE.corroboratedShare
  ) {
    points += 1;
  }
  if (input.drops >= CONFIDENCE_RULE.manyDrops) points -= 2;
  else if (input.drops > 0) points -= 1;

  let confidence: Confidence = 'low';
  if (support > 0 && points >= CONFIDENCE_RULE.highAt) confidence = 'high';
  else if (support > 0 && points >= CONFIDENCE_RULE.mediumAt) confidence = 'medium';

  return { confidence, points, support, severeShare, corroboratedFindings, drops: input.drops };
}
