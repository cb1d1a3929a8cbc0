/**
 * The text of heuristic-v1's draft: each finding's description, the summary, and the warnings
 * about thin evidence, guessed, conflicting or missing changes, left-out findings and stale signals.
 */
import type { Slot } from '../../core/schemas/pipelines.ts';
import { DRAFT_LIMITS, type DraftWarning } from '../draft.ts';
import type { Finding } from './detect.ts';
import { HEURISTIC_V1_LIMITS as L } from './limits.ts';
import type { ChangePlan } from './patches.ts';

const plural = (count: number, one: string, many = `${one}s`): string =>
  `${count} ${count === 1 ? one : many}`;
const where = (slot: Slot | undefined): string =>
  slot === undefined ? 'with no slot named' : `in slot "${slot.id}" (${slot.kind})`;

/** One finding in a sentence: its fault and slot, then the evidence in numbers. */
export function describeFinding({ rule, evidence }: Finding): string {
  const parts: string[] = [];
  if (evidence.signals.length > 0) parts.push(plural(evidence.signals.length, 'signal'));
  if (evidence.runFailures > 0) {
    const share = Math.round((evidence.runFailures / Math.max(1, evidence.runs)) * 100);
    parts.push(
      `${evidence.runFailures} of ${evidence.runs} recent runs failed ${evidence.slot === undefined ? '' : 'there '}this way (${share}%)`,
    );
  }
  if (evidence.p90Ms !== undefined)
    parts.push(`p90 duration ${evidence.p90Ms} ms over ${evidence.latencySamples} runs`);
  const readings = evidence.signals.flatMap((signal) => (signal.value === undefined ? [] : [signal.value]));
  if (rule.describeReadings !== undefined && readings.length > 0) parts.push(rule.describeReadings(readings));
  return `${rule.label} ${where(evidence.slot)}: ${parts.join('; ')}.`;
}

export interface OutcomeInput {
  signalCount: number;
  executionCount: number;
  /** The findings reported, and how many were found in all. */
  findings: readonly Finding[];
  foundCount: number;
  plan: ChangePlan;
  staleSlotIds: readonly string[];
}

/** The draft's summary and warnings, in the order a reader needs them. */
export function renderOutcome(input: OutcomeInput): { summary: string; warnings: DraftWarning[] } {
  const { findings, plan, staleSlotIds } = input;
  const warnings: DraftWarning[] = [];
  if (input.signalCount < L.thinWindow && input.executionCount < L.thinWindow) {
    warnings.push({
      type: 'thin_evidence',
      message: `Only ${plural(input.signalCount, 'signal')} and ${plural(input.executionCount, 'run')} in the window; the diagnosis rests on little evidence.`,
    });
  }
  // Findings on thin or contradicted evidence are flagged by finalizeProposal, for every handler alike.
  const speculativeAt = warnings.length;
  if (plan.conflicts.length > 0) {
    warnings.push({
      type: 'conflicting_evidence',
      message: plan.conflicts.join(' ').slice(0, DRAFT_LIMITS.textLength),
    });
  }
  if (plan.unaddressed.length > 0) {
    warnings.push({
      type: 'no_applicable_change',
      message:
        `No safe change addresses ${plan.unaddressed.length === 1 ? 'this finding' : 'these findings'}. ${plan.unaddressed.join(' ')}`.slice(
          0,
          DRAFT_LIMITS.textLength,
        ),
    });
  }
  if (input.foundCount > findings.length) {
    warnings.push({
      type: 'findings_truncated',
      message: `${plural(input.foundCount - findings.length, 'weaker finding was', 'weaker findings were')} left out; only the ${findings.length} strongest are reported.`,
    });
  }
  if (staleSlotIds.length > 0) {
    const named = staleSlotIds.slice(0, 5).map((id) => `"${id}"`);
    if (staleSlotIds.length > named.length) named.push(`${staleSlotIds.length - named.length} more`);
    warnings.push({
      type: 'stale_signals',
      message: `Signals name ${staleSlotIds.length === 1 ? 'a slot' : 'slots'} the base configuration does not have (${named.join(', ')}); they were not used.`,
    });
  }

  const evidence = `${plural(input.signalCount, 'signal')} and ${plural(input.executionCount, 'recent run')}`;
  let summary: string;
  if (findings.length === 0) {
    summary = `No fault found in ${evidence}; no changes proposed.`;
    warnings.push({
      type: 'no_changes',
      message: `Nothing to fix: none of the ${evidence} shows a fault this heuristic recognises.`,
    });
  } else {
    const found = findings
      .map(({ rule, evidence }) => `${rule.label.toLowerCase()} ${where(evidence.slot)}`)
      .join('; ');
    const outcome =
      plan.changes.length === 0
        ? 'No changes proposed: no setting this heuristic changes safely addresses them.'
        : `${plural(plan.changes.length, 'change')} proposed.`;
    summary = `${plural(findings.length, 'finding')} from ${evidence}: ${found}. ${outcome}`;
    if (plan.changes.length === 0) {
      warnings.push({
        type: 'no_changes',
        message: 'The findings stand, but no setting this heuristic changes safely addresses them.',
      });
    }
  }

  warnings.splice(speculativeAt, 0, ...speculativeWarnings(plan.guesses, warnings.length));
  return { summary: summary.slice(0, DRAFT_LIMITS.summaryLength), warnings };
}

/** One warning per guessed change reads best; a draft holds only so many, so past that they merge. */
function speculativeWarnings(guesses: ChangePlan['guesses'], otherWarnings: number): DraftWarning[] {
  if (otherWarnings + guesses.length <= DRAFT_LIMITS.warnings) {
    return guesses.map(({ changeId, reason }) => ({
      type: 'speculative_change',
      message: `Change ${changeId} is a guess: ${reason}.`,
      changeIds: [changeId],
    }));
  }
  const ids = guesses.map(({ changeId }) => changeId);
  return [
    {
      type: 'speculative_change',
      // Merged only past the warning limit, which one guess alone never reaches: always several.
      message: `Changes ${ids.join(', ')} are guesses; see their rationale.`,
      changeIds: ids,
    },
  ];
}
