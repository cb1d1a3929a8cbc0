import type { Change, Diagnosis, StructuredWarning } from './schemas.ts';

/** The legacy `explanation`: a plain-text rendering of the diagnosis and the changes. */
export function renderExplanation(diagnosis: Diagnosis, changes: Change[]): string {
  const lines = [diagnosis.summary];
  if (diagnosis.findings.length > 0) {
    lines.push('', 'Findings:');
    for (const finding of diagnosis.findings) lines.push(`${finding.id}. ${finding.description}`);
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
