import { describe, expect, it } from 'vitest';
import type { ArmResult, RefinementEvidence, Trial } from '../../../../lambdas/core/refinement.ts';
import type { Change } from '../../../../lambdas/core/schemas/runs.ts';
import { synthesizeHeuristically } from '../../../../lambdas/synthesis/heuristic/engine.ts';
import { context, execution, slot } from './fixtures.ts';

const slots = [slot('retrieve', 'retriever', { timeoutMs: 800 }), slot('answer', 'llm', { maxTokens: 128 })];
const cases = Array.from({ length: 8 }, (_, index) => execution(`case-${index + 1}`, index, undefined));

const change = (id: string, slotId: string, patch: Record<string, unknown>): Change => ({
  id,
  slotId,
  description: `change ${id}`,
  rationale: 'from the signals',
  findingIds: ['1'],
  patch,
});

/** A round: per case, which arms passed (`base`, `candidate`, `change:<id>`). */
function trial(runId: string, changes: Change[], passed: Record<string, string[]>): Trial {
  const results = new Map<string, Map<string, ArmResult>>();
  for (const { id } of cases) {
    const arms = ['base', 'candidate', ...changes.map((c) => `change:${c.id}`)];
    results.set(id, new Map(arms.map((arm) => [arm, { passed: passed[id]?.includes(arm) ?? false }])));
  }
  return { runId, changes, results };
}

const evidenceOf = (trials: Trial[]): RefinementEvidence => ({
  parentRunId: trials.at(-1)?.runId ?? '',
  rootRunId: trials[0]?.runId ?? '',
  cases: cases.map((c) => ({ executionId: c.id, status: 'failed' as const })),
  trials,
  heldOutCount: 2,
});

// Round 1: the timeout alone fixes case-1 and case-2 but case-3 still fails; the token budget
// fixes case-4 and breaks case-5, which passed on the base.
const round1 = trial(
  'run-1',
  [change('1', 'retrieve', { timeoutMs: 1600 }), change('2', 'answer', { maxTokens: 256 })],
  {
    'case-1': ['candidate', 'change:1'],
    'case-2': ['candidate', 'change:1'],
    'case-4': ['candidate', 'change:2'],
    'case-5': ['base', 'change:1'],
    'case-6': ['base', 'candidate', 'change:1', 'change:2'],
  },
);

describe('heuristic-v1 refining a run from its evaluation', () => {
  it('pushes a partial fix further and backs off a change that broke cases, citing the cases', () => {
    const proposal = synthesizeHeuristically({
      ...context(slots, [], cases),
      refinement: evidenceOf([round1]),
    });
    const patches = proposal.changes.map((c) => [c.slotId, c.patch]);
    expect(patches).toEqual([
      ['retrieve', { timeoutMs: 3200 }],
      ['answer', { maxTokens: 192 }],
    ]);
    const backOff = proposal.diagnosis.findings.find((finding) => finding.description.includes('maxTokens'));
    expect(backOff?.description).toContain('broke 1 case(s) (case-5)');
    expect(backOff?.caseIds).toEqual(['case-5']);
    expect(backOff?.executionIds).toEqual(['case-5']);
    const push = proposal.diagnosis.findings.find((finding) => finding.description.includes('timeoutMs'));
    expect(push?.caseIds).toContain('case-3');
  });

  it('bisects between the value that held and the one that broke cases, then keeps the held one', () => {
    const round2 = trial(
      'run-2',
      [change('1', 'retrieve', { timeoutMs: 2400 }), change('2', 'answer', { maxTokens: 192 })],
      {
        'case-1': ['candidate', 'change:1'],
        'case-2': ['candidate', 'change:1'],
        'case-3': ['candidate', 'change:1'],
        'case-4': ['candidate', 'change:2'],
        'case-5': ['base', 'candidate', 'change:2'],
        'case-6': ['base', 'candidate', 'change:2'],
        'case-7': ['base', 'candidate', 'change:2'],
      },
    );
    // 2400 broke case-6 (passed on the base): back to halfway between 1600 (held) and 2400. 192 held
    // and fixed case-4 while case-8 still fails: halfway up to 256, which broke case-5.
    const proposal = synthesizeHeuristically({
      ...context(slots, [], cases),
      refinement: evidenceOf([round1, round2]),
    });
    expect(proposal.changes.map((c) => c.patch)).toEqual([{ timeoutMs: 2000 }, { maxTokens: 224 }]);
  });

  it('proposes the same as a first run when the context has no refinement', () => {
    expect(synthesizeHeuristically(context(slots, [], cases)).changes).toEqual([]);
  });
});
