/*
 * claude-v1's prompt section for a refinement: the chain's rounds (each run's changes, what the
 * candidate and each change alone fixed and broke) and the runner's detail of failing cases, as
 * data — escaped and redacted like every other text, and shortened to its byte cap.
 */
import { candidateEffect, changeEffects, detailOf, type RefinementEvidence } from '../../core/refinement.ts';
import { escapePromptData, promptJson } from '../prompt-escape.ts';
import { redactText } from '../redact.ts';
import { byteLength, shorten } from '../text-budget.ts';

/** Case ids listed per figure, and the details quoted per round, at most. */
const IDS_LISTED = 12;
const DETAILS_PER_ROUND = 8;
const DETAIL_BYTES = 240;

const ids = (list: readonly string[]) =>
  list.length === 0
    ? 'none'
    : `${list.length} (${list.slice(0, IDS_LISTED).map(escapePromptData).join(', ')}${list.length > IDS_LISTED ? ', …' : ''})`;

/** The section's text, at most `maxBytes` bytes. */
export function renderRefinement(evidence: RefinementEvidence, maxBytes: number): string {
  const lines = [
    `This run refines run ${escapePromptData(evidence.parentRunId)} (chain of ${escapePromptData(evidence.rootRunId)}). ` +
      `Its evaluation replayed ${evidence.cases.length} case(s) shown here by execution id; ${evidence.heldOutCount} more are held out and not shown. ` +
      'Revise the last round: back off a change that broke cases, push further one that fixed some but not all, keep what held. ' +
      'Findings about these cases cite their runs in executionRefs when they are among the shown runs.',
  ];
  // Newest round first: when the cap cuts, the parent's round is what stays.
  for (const trial of [...evidence.trials].reverse()) {
    const round = candidateEffect(trial);
    lines.push(
      `Round of run ${escapePromptData(trial.runId)}: candidate fixed ${ids(round.fixed)}; broke ${ids(round.regressed)}; still failing ${ids(round.stillFailing)}.`,
    );
    for (const effect of changeEffects(trial)) {
      lines.push(
        `  change ${escapePromptData(effect.change.id)} on slot ${promptJson(effect.change.slotId)} patch ${shorten(promptJson(effect.change.patch), 400)}` +
          `${effect.replayedAlone ? ' (replayed alone)' : ' (only with the others)'}: fixed ${ids(effect.fixed)}; broke ${ids(effect.broken)}.`,
      );
    }
    const failing = [...round.regressed, ...round.stillFailing].slice(0, DETAILS_PER_ROUND);
    for (const id of failing) {
      const detail = detailOf(trial, id, 'candidate');
      if (detail)
        lines.push(
          `  case ${escapePromptData(id)} failed: ${promptJson(shorten(redactText(detail), DETAIL_BYTES))}`,
        );
    }
  }
  const text = lines.join('\n');
  return byteLength(text) <= maxBytes ? text : shorten(text, maxBytes);
}
