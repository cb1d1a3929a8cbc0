/*
 * What a refinement learns from (core/refinement.ts): the candidate's and each change's effect in
 * an earlier round, the runner's detail of a case, and the cases a refinement's findings rest on.
 */
import { describe, expect, it } from 'vitest';
import type { SynthesisProposal } from '../../../lambdas/core/ports/synthesis.ts';
import {
  type ArmResult,
  candidateEffect,
  changeEffects,
  citeEvaluationCases,
  detailOf,
  type RefinementEvidence,
  type Trial,
} from '../../../lambdas/core/refinement.ts';
import type { Change, Finding } from '../../../lambdas/core/schemas/runs.ts';

const change = (id: string): Change => ({
  id,
  slotId: 'answer',
  description: `change ${id}`,
  rationale: 'why',
  findingIds: [],
  patch: {},
});
/** A round: cases by id, each arm passed (true), failed (false) or failed with a detail (a string). */
const trial = (changes: Change[], cases: Record<string, Record<string, boolean | string>>): Trial => ({
  runId: 'run-1',
  changes,
  results: new Map(
    Object.entries(cases).map(([id, arms]) => [
      id,
      new Map<string, ArmResult>(
        Object.entries(arms).map(([arm, result]) => [
          arm,
          typeof result === 'string' ? { passed: false, detail: result } : { passed: result },
        ]),
      ),
    ]),
  ),
});

describe("a round's candidate", () => {
  it('fixed, regressed, still failed or passed each case with a result on both arms', () => {
    const round = trial([], {
      fixed: { base: false, candidate: true },
      regressed: { base: true, candidate: false },
      still: { base: false, candidate: 'still wrong' },
      passing: { base: true, candidate: true },
      baseOnly: { base: false },
      candidateOnly: { candidate: false },
    });
    expect(candidateEffect(round)).toEqual({
      fixed: ['fixed'],
      regressed: ['regressed'],
      stillFailing: ['still'],
      passing: ['passing'],
    });
  });
});

describe("a round's changes", () => {
  it("are judged on their own arm when replayed alone, else on the candidate's", () => {
    const round = trial([change('1'), change('2')], {
      a: { base: false, candidate: true, 'change:1': true },
      b: { base: true, candidate: false, 'change:1': 'cut short' },
      c: { base: false, candidate: false, 'change:1': false },
      d: { base: true, candidate: true, 'change:1': true },
      e: { base: true, 'change:1': false },
      f: { candidate: true, 'change:1': true },
    });
    const [alone, inferred] = changeEffects(round);
    expect(alone).toEqual({
      change: change('1'),
      replayedAlone: true,
      fixed: ['a'],
      broken: ['b', 'e'],
      failing: ['b', 'c', 'e'],
    });
    expect(inferred).toEqual({
      change: change('2'),
      replayedAlone: false,
      fixed: ['a'],
      broken: ['b'],
      failing: ['b', 'c'],
    });
  });

  it('are replayed alone when any case has their arm', () => {
    const round = trial([change('1')], {
      a: { base: false, candidate: false },
      b: { base: false, candidate: false, 'change:1': true },
    });
    expect(changeEffects(round)[0]).toMatchObject({ replayedAlone: true, fixed: ['b'], failing: [] });
  });
});

describe("a case's detail in a round", () => {
  it("is the runner's words on that arm, or nothing", () => {
    const round = trial([], { a: { base: true, candidate: 'cut short' } });
    expect(detailOf(round, 'a', 'candidate')).toBe('cut short');
    expect(detailOf(round, 'a', 'base')).toBeUndefined();
    expect(detailOf(round, 'a', 'change:9')).toBeUndefined();
    expect(detailOf(round, 'zz', 'candidate')).toBeUndefined();
  });
});

describe("a refinement's findings", () => {
  const finding = (id: string, executionIds: string[], caseIds?: string[]): Finding => ({
    id,
    description: id,
    signalIds: [],
    executionIds,
    ...(caseIds ? { caseIds } : {}),
  });
  const proposal = (findings: Finding[]) =>
    ({ diagnosis: { summary: 's', findings }, changes: [] }) as unknown as SynthesisProposal;
  const evidence = { cases: [{ executionId: 'e1' }, { executionId: 'e2' }] } as RefinementEvidence;

  it('name the evaluation cases among the runs they cite, unless they named their own', () => {
    const cited = citeEvaluationCases(
      proposal([finding('f1', ['e2', 'x', 'e1']), finding('f2', ['x']), finding('f3', ['e1'], ['e9'])]),
      evidence,
    );
    expect(cited.diagnosis).toEqual({
      summary: 's',
      findings: [
        finding('f1', ['e2', 'x', 'e1'], ['e2', 'e1']),
        finding('f2', ['x']),
        finding('f3', ['e1'], ['e9']),
      ],
    });
    expect(cited.diagnosis.findings[1]).not.toHaveProperty('caseIds');
    expect(cited).toMatchObject({ changes: [] });
  });

  it('are left as they are in a run that is no refinement', () => {
    const plain = proposal([finding('f1', ['e1'])]);
    expect(citeEvaluationCases(plain, undefined)).toBe(plain);
  });
});
