/** The diagnosis bench's scorer: it must see a missed fault, an unrelated change and a change on a healthy pipeline. */
import { describe, expect, it } from 'vitest';
import { type DiagnosisCase, diagnosisCases, scoreDiagnosis } from '../../bench/diagnosis.ts';
import type { SynthesisProposal } from '../../lambdas/core/ports/synthesis.ts';

const caseNamed = (name: string): DiagnosisCase => {
  const found = diagnosisCases().find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no case ${name}`);
  return found;
};

/** A proposal for `testCase` that sets the given settings, at the given confidence. */
function proposalOf(
  testCase: DiagnosisCase,
  patches: { slotId: string; patch: Record<string, unknown> }[],
  confidence: SynthesisProposal['confidence'] = 'high',
  warningTypes: string[] = [],
): SynthesisProposal {
  return {
    diagnosis: { summary: 's', findings: [] },
    changes: patches.map(({ slotId, patch }, index) => ({
      id: String(index + 1),
      slotId,
      description: 'd',
      rationale: 'r',
      findingIds: ['1'],
      patch,
    })),
    structuredWarnings: warningTypes.map((type) => ({ type, message: 'm' })),
    confidence,
    analyzedSignalIds: [],
    analyzedExecutionIds: [],
    proposedSlots: testCase.context.baseConfiguration.slots.map((slot) => ({
      ...slot,
      settings: { ...slot.settings, ...patches.find((p) => p.slotId === slot.id)?.patch },
    })),
  };
}

describe('scoreDiagnosis', () => {
  it('finds a fault only when the right slot moved the right way', () => {
    const timeouts = caseNamed('timeouts');

    const up = scoreDiagnosis(
      timeouts,
      proposalOf(timeouts, [{ slotId: 'generator', patch: { timeoutMs: 60_000 } }]),
    );
    const down = scoreDiagnosis(
      timeouts,
      proposalOf(timeouts, [{ slotId: 'generator', patch: { timeoutMs: 10_000 } }]),
    );
    const elsewhere = scoreDiagnosis(
      timeouts,
      proposalOf(timeouts, [{ slotId: 'kb-search', patch: { timeoutMs: 60_000 } }]),
    );

    expect([up.found, down.found, elsewhere.found]).toEqual([1, 0, 0]);
    expect([up.unrelatedChanges, elsewhere.unrelatedChanges]).toEqual([0, 1]);
  });

  it('counts changes on a healthy pipeline and unflagged weak evidence as misses', () => {
    const healthy = caseNamed('healthy');
    const thin = caseNamed('thin evidence');

    const touched = scoreDiagnosis(
      healthy,
      proposalOf(healthy, [{ slotId: 'generator', patch: { temperature: 0 } }]),
    );
    const unflagged = scoreDiagnosis(thin, proposalOf(thin, [], 'medium'));
    const flagged = scoreDiagnosis(thin, proposalOf(thin, [], 'low', ['thin_evidence']));

    expect(touched).toMatchObject({ healthyChanges: 1, evidenceOk: false });
    expect([unflagged.evidenceOk, flagged.evidenceOk]).toEqual([false, true]);
  });
});
