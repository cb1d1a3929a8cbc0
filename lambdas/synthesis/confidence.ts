/* How sure a proposal may claim to be: the confidence score from support, severity and
   corroboration, and the thin/contradicted evidence assessment that lowers it and warns. */

import type { Execution, Signal } from '../core/schemas/records.ts';
import type { Change, Confidence, StructuredWarning } from '../core/schemas/runs.ts';
import { signalRepeatKey } from './evidence/signals.ts';

/**
 * The confidence of a proposal, computed by code from the evidence its findings cite; a model
 * never sets it.
 *
 * Rule (points, then a band):
 * - support: the distinct signals of the window that back the findings, i.e. every cited signal
 *   plus every repeat of one (same kind, slot and message; the prompt shows one of each), plus
 *   the distinct executions they cite: +2 when at least 10, +1 when at least 3.
 * - severity: +1 when at least half of that support is `warning` or `critical` signals or failed runs.
 * - agreement: +1 when at least half of the findings are each backed by 2 or more signals or runs.
 * - drops (references, changes or warning links the code had to remove): -1 for 1 or 2, -2 for 3+.
 * - high at 4 points, medium at 2 or 3, low below; low whenever no finding cites a signal or run,
 *   and whenever the evidence of a finding is thin or contradicted (see EVIDENCE_RULE).
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
  /** The kept findings with their mapped signal and execution ids. */
  findings: readonly { signalIds: readonly string[]; executionIds?: readonly string[] }[];
  /** The executions the findings' execution ids point at. */
  shownExecutions?: readonly Execution[];
  /** The signals the findings' ids point at. */
  shownSignals: readonly Signal[];
  /** The whole window the shown signals were picked from; repeats in it count as agreement. */
  allSignalsInWindow: readonly Signal[];
  /** How many references, changes or links the code dropped from the draft. */
  drops: number;
  /** Whether some finding rests on thin or contradicted evidence (see assessEvidence): confidence is then low. */
  weakEvidence?: boolean;
}

export interface ConfidenceScore {
  confidence: Confidence;
  points: number;
  support: number;
  severeShare: number;
  corroboratedFindings: number;
  drops: number;
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

  const executionsById = new Map((input.shownExecutions ?? []).map((execution) => [execution.id, execution]));
  const runsOf = (executionIds: readonly string[] = []): Execution[] =>
    [...new Set(executionIds)].flatMap((id) => executionsById.get(id) ?? []);

  const supporting = supportOf(input.findings.flatMap((finding) => finding.signalIds));
  const runs = runsOf(input.findings.flatMap((finding) => finding.executionIds ?? []));
  const support = supporting.length + runs.length;
  const severe =
    supporting.filter((signal) => signal.severity !== 'info').length +
    runs.filter((run) => run.status === 'failed').length;
  const severeShare = support === 0 ? 0 : severe / support;
  const corroboratedFindings = input.findings.filter(
    (finding) =>
      supportOf(finding.signalIds).length + runsOf(finding.executionIds).length >=
      CONFIDENCE_RULE.corroboratingSignals,
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
  if (input.weakEvidence === true) confidence = 'low';
  else if (support > 0 && points >= CONFIDENCE_RULE.highAt) confidence = 'high';
  else if (support > 0 && points >= CONFIDENCE_RULE.mediumAt) confidence = 'medium';

  return { confidence, points, support, severeShare, corroboratedFindings, drops: input.drops };
}

/**
 * When evidence is too weak to trust a change, whatever the points say:
 * - thin: a finding backed by fewer than `thinSignals` signals (repeats included) and fewer than
 *   `thinExecutions` runs;
 * - contradicted: a finding whose signals report failures in one slot and that cites no failed
 *   run, while at least `contradictingRuns` results of that slot are in the window and at least
 *   `contradictingSuccessShare` of them succeeded.
 */
export const EVIDENCE_RULE = {
  thinSignals: 3,
  thinExecutions: 3,
  contradictingRuns: 10,
  contradictingSuccessShare: 0.9,
} as const;

/** Signals that report a failure (not feedback, scores or latency): the ones successful runs contradict. */
const FAILURE_REPORT =
  /error|fail|exception|crash|timed?[ _-]?out|deadline|invalid|malformed|json|\bpars(e|er|ing)|schema|truncat|max[ _-]?tokens|cut off|refus/i;

export interface EvidenceInput {
  findings: readonly { id: string; signalIds: readonly string[]; executionIds: readonly string[] }[];
  changes: readonly Pick<Change, 'id' | 'findingIds'>[];
  shownSignals: readonly Signal[];
  allSignalsInWindow: readonly Signal[];
  shownExecutions: readonly Execution[];
  /** Every run the synthesis read, to count how a slot fares. */
  executionsInWindow: readonly Execution[];
}

export interface EvidenceAssessment {
  /** A `thin_evidence` and a `contradicted_evidence` warning at most, naming the changes they weaken. */
  warnings: StructuredWarning[];
  thinFindingIds: string[];
  contradictedFindingIds: string[];
}

const idList = (label: string, list: readonly string[]): string =>
  `${label}${list.length === 1 ? '' : 's'} ${list.join(', ')}`;
const count = (n: number, one: string): string => `${n} ${one}${n === 1 ? '' : 's'}`;

/** Finds the findings whose evidence is thin or contradicted; see EVIDENCE_RULE. */
export function assessEvidence(input: EvidenceInput): EvidenceAssessment {
  const byId = new Map(input.shownSignals.map((signal) => [signal.id, signal]));
  const repeats = new Map<string, number>();
  for (const signal of input.allSignalsInWindow) {
    const key = signalRepeatKey(signal);
    repeats.set(key, (repeats.get(key) ?? 0) + 1);
  }
  const shownRuns = new Map(input.shownExecutions.map((execution) => [execution.id, execution]));

  const thin: string[] = [];
  const thinDetail: string[] = [];
  const contradicted: string[] = [];
  const contradictedDetail: string[] = [];
  for (const finding of input.findings) {
    const cited = [...new Set(finding.signalIds)].flatMap((id) => byId.get(id) ?? []);
    const signals = cited.reduce(
      (sum, signal) => sum + Math.max(1, repeats.get(signalRepeatKey(signal)) ?? 0),
      0,
    );
    const runs = [...new Set(finding.executionIds)].flatMap((id) => shownRuns.get(id) ?? []);
    if (signals < EVIDENCE_RULE.thinSignals && runs.length < EVIDENCE_RULE.thinExecutions) {
      thin.push(finding.id);
      thinDetail.push(`finding ${finding.id}: ${count(signals, 'signal')}, ${count(runs.length, 'run')}`);
    }

    const failureSlots = new Set(
      cited
        .filter((signal) => FAILURE_REPORT.test(`${signal.kind} ${signal.message}`))
        .map((signal) => signal.slotId),
    );
    const [slotId] = failureSlots;
    if (failureSlots.size !== 1 || slotId === undefined) continue;
    if (runs.some((run) => run.status === 'failed')) continue;
    const results = input.executionsInWindow.flatMap((execution) =>
      (execution.slotResults ?? []).filter((result) => result.slotId === slotId),
    );
    const succeeded = results.filter((result) => result.status === 'succeeded').length;
    if (
      results.length >= EVIDENCE_RULE.contradictingRuns &&
      succeeded / results.length >= EVIDENCE_RULE.contradictingSuccessShare
    ) {
      contradicted.push(finding.id);
      contradictedDetail.push(
        `finding ${finding.id} reports failures in slot "${slotId}", where ${succeeded} of the ${results.length} recent runs succeeded`,
      );
    }
  }

  const warnings: StructuredWarning[] = [];
  const warn = (
    type: string,
    findingIds: readonly string[],
    detail: readonly string[],
    why: string,
  ): void => {
    if (findingIds.length === 0) return;
    const changeIds = input.changes
      .filter((change) => change.findingIds.some((id) => findingIds.includes(id)))
      .map((change) => change.id);
    const effect =
      changeIds.length === 0 ? 'No change rests on it.' : `It weakens ${idList('change', changeIds)}.`;
    warnings.push({
      type,
      message: `${why} (${detail.join('; ')}). ${effect}`.slice(0, 1_000),
      ...(changeIds.length > 0 ? { changeIds } : {}),
    });
  };
  warn(
    'thin_evidence',
    thin,
    thinDetail,
    `${idList('Finding', thin)} ${thin.length === 1 ? 'rests' : 'rest'} on thin evidence`,
  );
  warn(
    'contradicted_evidence',
    contradicted,
    contradictedDetail,
    `The run history contradicts ${idList('finding', contradicted)}`,
  );
  return { warnings, thinFindingIds: thin, contradictedFindingIds: contradicted };
}
