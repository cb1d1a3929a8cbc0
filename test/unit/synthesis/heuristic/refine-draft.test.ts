/** heuristic-v1's refinement draft: the parent's changes revised from its evaluation, beside the fresh draft. */
import { describe, expect, it } from 'vitest';
import type {
  ArmResult,
  LearningCase,
  RefinementEvidence,
  Trial,
} from '../../../../lambdas/core/refinement.ts';
import type { Change } from '../../../../lambdas/core/schemas/runs.ts';
import type { DraftChange, DraftFinding, SynthesisDraft } from '../../../../lambdas/synthesis/draft.ts';
import { refineDraft } from '../../../../lambdas/synthesis/heuristic/refine.ts';
import { execution, slot } from './fixtures.ts';

const slots = [
  slot('retrieve', 'retriever', { timeoutMs: 800, index: 'kb-v1' }),
  slot('answer', 'llm', { maxTokens: 128, model: 'small' }),
];
const ids = (count: number) => Array.from({ length: count }, (_, index) => `case-${index + 1}`);
const shown = (caseIds: string[]) => caseIds.map((id, index) => execution(id, index, undefined));

const change = (
  id: string,
  slotId: string,
  patch: Record<string, unknown>,
  description = `change ${id}`,
): Change => ({
  id,
  slotId,
  description,
  rationale: 'from the signals',
  findingIds: ['1'],
  patch,
});

/** A round over the listed cases: per case, the arms that passed and the runner's details by arm. */
function trial(
  runId: string,
  changes: Change[],
  passed: Record<string, string[]>,
  details: Record<string, Record<string, string>> = {},
): Trial {
  const arms = ['base', 'candidate', ...changes.map((c) => `change:${c.id}`)];
  const results = new Map<string, Map<string, ArmResult>>(
    Object.entries(passed).map(([id, ok]) => [
      id,
      new Map(arms.map((arm) => [arm, { passed: ok.includes(arm), detail: details[id]?.[arm] }])),
    ]),
  );
  return { runId, changes, results };
}

const evidenceOf = (trials: Trial[], cases: LearningCase[] = []): RefinementEvidence => ({
  parentRunId: trials.at(-1)?.runId ?? 'run-0',
  rootRunId: trials[0]?.runId ?? 'run-0',
  cases,
  trials,
  heldOutCount: 2,
});
const failedCases = (caseIds: string[], error?: (id: string) => string): LearningCase[] =>
  caseIds.map((id) => ({ executionId: id, status: 'failed', ...(error ? { error: error(id) } : {}) }));

const finding = (id: string, signalRefs: number[] = []): DraftFinding => ({
  id,
  description: `fresh finding ${id}`,
  signalRefs,
  executionRefs: [],
});
const freshChange = (
  id: string,
  slotId: string,
  patch: Record<string, unknown>,
  findingIds = ['1'],
): DraftChange => ({
  id,
  slotId,
  description: `fresh change ${id}`,
  rationale: 'fresh rationale',
  findingIds,
  patch,
});
const draft = (parts: Partial<SynthesisDraft> = {}): SynthesisDraft => ({
  diagnosis: { summary: 'Fresh summary.', findings: parts.diagnosis?.findings ?? [] },
  changes: parts.changes ?? [],
  warnings: parts.warnings ?? [],
});

// The timeout alone fixes case-1 and case-2, and case-3, case-7, case-8 still fail; the token
// budget fixes case-4 and breaks case-5, which passed on the base.
const round1 = trial(
  'run-1',
  [change('1', 'retrieve', { timeoutMs: 1600 }), change('2', 'answer', { maxTokens: 256 })],
  {
    'case-1': ['candidate', 'change:1'],
    'case-2': ['candidate', 'change:1'],
    'case-3': [],
    'case-4': ['candidate', 'change:2'],
    'case-5': ['base', 'change:1'],
    'case-6': ['base', 'candidate', 'change:1', 'change:2'],
    'case-7': [],
    'case-8': [],
  },
);

describe('refineDraft', () => {
  it("revises the parent's changes into findings citing their cases, then adds the fresh changes it did not touch", () => {
    const fresh = draft({
      diagnosis: { summary: 'Fresh summary.', findings: [finding('1', [4])] },
      changes: [
        freshChange('1', 'retrieve', { timeoutMs: 1600, index: 'kb-v2' }),
        freshChange('2', 'answer', { temperature: 0.2, timeoutMs: 100 }),
      ],
      warnings: [
        { type: 'speculative_change', message: 'a guess', changeIds: ['2'] },
        { type: 'thin_evidence', message: 'few runs' },
        { type: 'speculative_change', message: 'the revised one', changeIds: ['1'] },
      ],
    });
    const push = 'timeoutMs 1600 fixed cases but 3 still fail (case-3, case-7, case-8): pushed to 3200';
    const backOff = 'maxTokens 256 broke 1 case(s) (case-5): backed off to 192';
    const refined = refineDraft(fresh, evidenceOf([round1], failedCases(ids(8))), slots, shown(ids(8)));
    expect(refined.draft).toEqual({
      diagnosis: {
        summary:
          'Fresh summary. Refinement of run run-1 from its evaluation on 8 case(s) (2 held out, not shown).',
        findings: [
          finding('1', [4]),
          {
            id: '2',
            description: `Run run-1's change 1 on slot "retrieve" in its evaluation: ${push}.`,
            signalRefs: [],
            executionRefs: [3, 7, 8],
          },
          {
            id: '3',
            description: `Run run-1's change 2 on slot "answer" in its evaluation: ${backOff}.`,
            signalRefs: [],
            executionRefs: [5],
          },
        ],
      },
      changes: [
        {
          id: '1',
          slotId: 'retrieve',
          description: `Slot "retrieve": ${push}`,
          rationale: 'Revised from the evaluation of run run-1: from the signals',
          findingIds: ['2', '1'],
          patch: { timeoutMs: 3200 },
        },
        {
          id: '2',
          slotId: 'answer',
          description: `Slot "answer": ${backOff}`,
          rationale: 'Revised from the evaluation of run run-1: from the signals',
          findingIds: ['3'],
          patch: { maxTokens: 192 },
        },
        { ...freshChange('2', 'answer', { temperature: 0.2, timeoutMs: 100 }), id: '3' },
      ],
      warnings: [
        { type: 'speculative_change', message: 'a guess', changeIds: ['3'] },
        { type: 'thin_evidence', message: 'few runs' },
      ],
    });
    expect([...refined.caseIds]).toEqual([
      ['2', ['case-3', 'case-7', 'case-8']],
      ['3', ['case-5']],
    ]);
  });

  it('names the bounds of a bisection: the value that held, the one that broke cases', () => {
    const round2 = trial(
      'run-2',
      [change('1', 'retrieve', { timeoutMs: 2400 }), change('2', 'answer', { maxTokens: 192 })],
      {
        'case-3': ['candidate', 'change:1'],
        'case-4': ['candidate', 'change:2'],
        'case-6': ['base', 'candidate', 'change:2'],
        'case-8': [],
      },
    );
    const { draft: refined } = refineDraft(draft(), evidenceOf([round1, round2]), slots, []);
    expect(refined.changes.map((c) => [c.description, c.patch])).toEqual([
      [
        'Slot "retrieve": timeoutMs 2400 broke 1 case(s) (case-6): backed off to 2000, between 1600 (held) and 2400',
        { timeoutMs: 2000 },
      ],
      [
        'Slot "answer": maxTokens 192 fixed cases but 1 still fail (case-8): pushed to 224, below 256 which broke cases',
        { maxTokens: 224 },
      ],
    ]);
  });

  it('keeps a value that fixed every case it could, and one next to a value that held, saying so', () => {
    const kept = trial('run-1', [change('1', 'retrieve', { timeoutMs: 1600 })], {
      'case-1': ['candidate', 'change:1'],
      'case-2': ['base', 'candidate', 'change:1'],
    });
    expect(refineDraft(draft(), evidenceOf([kept]), slots, []).draft.changes[0]).toMatchObject({
      description: 'Slot "retrieve": timeoutMs kept at 1600',
      patch: { timeoutMs: 1600 },
    });
    const near = trial('run-2', [change('1', 'answer', { maxTokens: 232 })], {
      'case-1': ['candidate'],
      'case-2': ['base'],
    });
    const held = trial('run-1', [change('1', 'answer', { maxTokens: 228 })], {
      'case-1': ['candidate', 'change:1'],
      'case-3': [],
    });
    expect(refineDraft(draft(), evidenceOf([held, near]), slots, []).draft.changes[0]).toMatchObject({
      description: 'Slot "answer": maxTokens kept at 228 (232 broke cases)',
      patch: { maxTokens: 228 },
    });
  });

  it('names five cases in full and counts the rest, citing at most 20 shown runs', () => {
    const broke = (count: number) =>
      trial(
        'run-1',
        [change('1', 'answer', { maxTokens: 512 })],
        Object.fromEntries(ids(count).map((id) => [id, ['base']])),
      );
    const five = refineDraft(draft(), evidenceOf([broke(5)]), slots, shown(ids(5))).draft;
    expect(five.changes[0]?.description).toBe(
      'Slot "answer": maxTokens 512 broke 5 case(s) (case-1, case-2, case-3, case-4, case-5): backed off to 320',
    );
    const many = refineDraft(draft(), evidenceOf([broke(25)]), slots, shown(ids(25))).draft;
    expect(many.changes[0]?.description).toBe(
      'Slot "answer": maxTokens 512 broke 25 case(s) (case-1, case-2, case-3, case-4, case-5 and 20 more): backed off to 320',
    );
    expect(many.diagnosis.findings[0]?.executionRefs).toEqual(
      Array.from({ length: 20 }, (_, index) => index + 1),
    );
  });

  it('cites the signals of the fresh findings on the same setting when no case is among the shown runs', () => {
    const many = Array.from({ length: 60 }, (_, index) => index + 1);
    const fresh = draft({
      diagnosis: {
        summary: 'Fresh summary.',
        findings: [finding('1', many), finding('2', [2, 70]), finding('3', [90])],
      },
      changes: [
        freshChange('1', 'retrieve', { timeoutMs: 1200 }, ['1', '2']),
        freshChange('2', 'answer', {}, ['3']),
      ],
    });
    const refined = refineDraft(fresh, evidenceOf([round1]), slots, []).draft;
    expect(refined.diagnosis.findings.slice(3).map((f) => [f.signalRefs, f.executionRefs])).toEqual([
      [many.slice(0, 50), []],
      [[], []],
    ]);
    const deduplicated = refineDraft(
      draft({
        diagnosis: { summary: 'Fresh summary.', findings: [finding('1', [1, 2]), finding('2', [2, 3])] },
        changes: [freshChange('1', 'retrieve', { timeoutMs: 1200 }, ['1', '2'])],
      }),
      evidenceOf([round1]),
      slots,
      shown(['case-1']),
    ).draft;
    expect(deduplicated.diagnosis.findings[2]?.signalRefs).toEqual([1, 2, 3]);
  });

  it('cites at most 20 findings per revised change, its own first', () => {
    const cited = Array.from({ length: 25 }, (_, index) => String(index + 30));
    const fresh = draft({ changes: [freshChange('1', 'retrieve', { timeoutMs: 1200 }, cited)] });
    const [revised] = refineDraft(fresh, evidenceOf([round1]), slots, []).draft.changes;
    expect(revised?.findingIds).toEqual(['1', ...cited.slice(0, 19)]);
  });

  it('keeps another change that broke nothing as it was (a removed number too) and drops a setting of one that broke cases', () => {
    const round = trial(
      'run-1',
      [
        change('1', 'answer', { model: 'large', topP: 0.9, maxTokens: null }),
        change('2', 'retrieve', { timeoutMs: 1600, index: 'kb-v2' }),
      ],
      {
        'case-1': ['candidate', 'change:1', 'change:2'],
        'case-5': ['base', 'change:1'],
        'case-6': ['base', 'candidate', 'change:1'],
      },
    );
    const refined = refineDraft(draft(), evidenceOf([round]), slots, shown(['case-5', 'case-6']));
    expect(refined.draft.changes.map(({ id, description, patch }) => ({ id, description, patch }))).toEqual([
      {
        id: '1',
        description: 'Slot "answer": change 1',
        patch: { model: 'large', topP: 0.9, maxTokens: null },
      },
      {
        id: '2',
        description:
          'Slot "retrieve": timeoutMs 1600 broke 2 case(s) (case-5, case-6): backed off to 1200; index dropped: it broke case-5, case-6',
        patch: { timeoutMs: 1200 },
      },
    ]);
    expect(refined.draft.diagnosis.findings.map((f) => [f.description, f.executionRefs])).toEqual([
      ['Run run-1\'s change 1 on slot "answer" in its evaluation: broke nothing.', []],
      [
        'Run run-1\'s change 2 on slot "retrieve" in its evaluation: timeoutMs 1600 broke 2 case(s) (case-5, case-6): backed off to 1200; index dropped: it broke case-5, case-6.',
        [1, 2],
      ],
    ]);
    expect(refined.caseIds.get('2')).toEqual(['case-5', 'case-6']);
  });

  it('proposes nothing of a change left with no setting to move, nor of one on a slot gone', () => {
    // 127 broke a case: halfway back to 128 rounds to 128, the base itself; 800 is the base already.
    const round = trial(
      'run-1',
      [
        change('1', 'answer', { maxTokens: 127 }),
        change('2', 'retrieve', { timeoutMs: 800 }),
        change('3', 'rerank', { topK: 5 }),
      ],
      { 'case-1': ['base', 'change:2', 'change:3'] },
    );
    const fresh = draft({ diagnosis: { summary: 'Fresh summary.', findings: [finding('1')] } });
    const refined = refineDraft(fresh, evidenceOf([round]), slots, []);
    expect(refined.draft.changes).toEqual([]);
    expect(refined.draft.diagnosis.findings).toEqual([finding('1')]);
    expect(refined.caseIds.size).toBe(0);
  });

  it('pushes only for the still failing cases that fail as the fixed ones did, numbers aside', () => {
    const round = trial(
      'run-1',
      [change('1', 'retrieve', { timeoutMs: 1600 })],
      { 'case-1': ['candidate', 'change:1'], 'case-3': [], 'case-7': [], 'case-8': [] },
      {
        'case-1': { base: 'timed out after 0.75 s (attempt 1)' },
        'case-3': { candidate: 'timed out after 1.5 s (attempt 12)' },
        'case-7': { candidate: 'answer was not JSON' },
      },
    );
    const cases = failedCases(['case-1', 'case-3', 'case-7', 'case-8'], () => 'pipeline failed');
    expect(refineDraft(draft(), evidenceOf([round], cases), slots, []).draft.changes[0]?.description).toBe(
      'Slot "retrieve": timeoutMs 1600 fixed cases but 1 still fail (case-3): pushed to 3200',
    );
  });

  it('compares the recorded errors when the runner gave no detail', () => {
    const round = trial('run-1', [change('1', 'retrieve', { timeoutMs: 1600 })], {
      'case-1': ['candidate', 'change:1'],
      'case-3': [],
      'case-7': [],
    });
    const errors: Record<string, string> = {
      'case-1': 'Timeout after 800ms',
      'case-3': 'Timeout after 800ms',
      'case-7': 'Invalid JSON',
    };
    const cases = failedCases(['case-1', 'case-3', 'case-7'], (id) => errors[id] ?? '');
    expect(refineDraft(draft(), evidenceOf([round], cases), slots, []).draft.changes[0]?.description).toBe(
      'Slot "retrieve": timeoutMs 1600 fixed cases but 1 still fail (case-3): pushed to 3200',
    );
  });

  it('stays within 20 findings and 20 changes', () => {
    const nineteen = Array.from({ length: 19 }, (_, index) => finding(String(index + 1)));
    const full = refineDraft(
      draft({ diagnosis: { summary: 'Fresh summary.', findings: nineteen } }),
      evidenceOf([round1]),
      slots,
      [],
    ).draft;
    expect(full.diagnosis.findings.map((f) => f.id)).toEqual([...nineteen.map((f) => f.id), '20']);
    expect(full.changes.map((c) => [c.id, c.slotId, c.findingIds])).toEqual([['1', 'retrieve', ['20']]]);

    const others = Array.from({ length: 20 }, (_, index) =>
      freshChange(String(index + 1), 'answer', { [`k${index}`]: 1 }),
    );
    const changes = refineDraft(draft({ changes: others }), evidenceOf([round1]), slots, []).draft.changes;
    expect(changes.map((c) => c.id)).toEqual(Array.from({ length: 20 }, (_, index) => String(index + 1)));
    expect(changes.slice(2).map((c) => c.description)).toEqual(others.slice(0, 18).map((c) => c.description));
  });

  it('returns the fresh draft when the chain has no round yet', () => {
    const fresh = draft({
      diagnosis: { summary: 'Fresh summary.', findings: [finding('1')] },
      changes: [freshChange('1', 'answer', { temperature: 0.2 })],
    });
    expect(refineDraft(fresh, evidenceOf([]), slots, []).draft).toEqual({
      diagnosis: {
        summary:
          'Fresh summary. Refinement of run run-0 from its evaluation on 0 case(s) (2 held out, not shown).',
        findings: [finding('1')],
      },
      changes: [freshChange('1', 'answer', { temperature: 0.2 })],
      warnings: [],
    });
  });

  it('clips a description at 1,000 characters with an ellipsis, and keeps one of exactly 1,000', () => {
    const prefix = 'Slot "answer": ';
    const round = (description: string) =>
      trial('run-1', [change('1', 'answer', { model: 'large' }, description)], {
        'case-1': ['base', 'candidate', 'change:1'],
      });
    const exact = 'x'.repeat(1000 - prefix.length);
    expect(refineDraft(draft(), evidenceOf([round(exact)]), slots, []).draft.changes[0]?.description).toBe(
      `${prefix}${exact}`,
    );
    const long = refineDraft(draft(), evidenceOf([round(`${exact}yz`)]), slots, []).draft.changes[0]
      ?.description;
    expect(long).toBe(`${prefix}${'x'.repeat(1000 - prefix.length - 1)}…`);
  });
});
