/*
 * The legacy `explanation` and `warnings` of a run, rendered from its diagnosis, changes and
 * structured warnings for clients of the first API version.
 */
import type { Change, Diagnosis, StructuredWarning } from './schemas/runs.ts';

/** How many cited execution ids the explanation names before it only counts the rest. */
const NAMED_EXECUTIONS = 5;

/** " (runs a, b and 3 more)" for the executions a finding cites; empty when it cites none. */
function citedExecutions(ids: readonly string[]): string {
  if (ids.length === 0) return '';
  const named = ids.slice(0, NAMED_EXECUTIONS).join(', ');
  const more = ids.length - NAMED_EXECUTIONS;
  return ` (run${ids.length === 1 ? '' : 's'} ${named}${more > 0 ? ` and ${more} more` : ''})`;
}

/** The legacy `explanation`: a plain-text rendering of the diagnosis (with the runs each finding cites) and the changes. */
export function renderExplanation(diagnosis: Diagnosis, changes: Change[]): string {
  const lines = [diagnosis.summary];
  if (diagnosis.findings.length > 0) {
    lines.push('', 'Findings:');
    for (const finding of diagnosis.findings) {
      lines.push(`${finding.id}. ${finding.description}${citedExecutions(finding.executionIds)}`);
    }
  }
  if (changes.length > 0) {
    lines.push('', 'Changes:');
    for (const change of changes) {
      lines.push(
        `${change.id}. [${change.slotId}] ${change.description} — ${change.rationale} (fixes finding ${change.findingIds.join(', ')})`,
      );
    }
  }
  return lines.join('\n');
}

/** The legacy `warnings`: the messages of the structured warnings. */
export function legacyWarnings(warnings: StructuredWarning[]): string[] {
  return warnings.map((warning) => warning.message);
}
