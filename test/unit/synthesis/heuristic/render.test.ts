/** The text of heuristic-v1's draft: finding descriptions, the summary and the warnings. */
import { describe, expect, it } from 'vitest';
import type { ChangePlan } from '../../../../lambdas/synthesis/heuristic/patches.ts';
import { describeFinding, renderOutcome } from '../../../../lambdas/synthesis/heuristic/render.ts';
import { errorRule } from '../../../../lambdas/synthesis/heuristic/rules/error.ts';
import { latencyRule } from '../../../../lambdas/synthesis/heuristic/rules/latency.ts';
import { truncationRule } from '../../../../lambdas/synthesis/heuristic/rules/truncation.ts';
import { finding, signal, slot } from './fixtures.ts';

const gen = slot('gen', 'model');
const warn = (id: string, value?: number) =>
  signal(id, { message: 'slow', ...(value === undefined ? {} : { value }) });

describe('describeFinding', () => {
  it('counts signals and the share of runs that failed this way in the slot', () => {
    expect(
      describeFinding(finding(errorRule, { slot: gen, signals: [warn('a')], runFailures: 3, runs: 12 })),
    ).toBe('Errors in slot "gen" (model): 1 signal; 3 of 12 recent runs failed there this way (25%).');
  });

  it('says "failed this way" for runs naming no slot, and rounds the share', () => {
    expect(
      describeFinding(finding(errorRule, { signals: [warn('a'), warn('b')], runFailures: 2, runs: 3 })),
    ).toBe('Errors with no slot named: 2 signals; 2 of 3 recent runs failed this way (67%).');
  });

  it('adds the measured p90 and what the rule reads in the signal values', () => {
    const readings = [warn('a', 30_000), warn('b'), warn('c', 25_000)];
    expect(
      describeFinding(
        finding(latencyRule, { slot: gen, signals: readings, p90Ms: 21_000, latencySamples: 9 }),
      ),
    ).toBe(
      'High latency in slot "gen" (model): 3 signals; p90 duration 21000 ms over 9 runs; p90 reported latency 30000 ms.',
    );
    expect(describeFinding(finding(latencyRule, { slot: gen, signals: [warn('b')] }))).toBe(
      'High latency in slot "gen" (model): 1 signal.',
    );
    expect(describeFinding(finding(errorRule, { slot: gen, signals: [warn('a', 5)] }))).toBe(
      'Errors in slot "gen" (model): 1 signal.',
    );
  });

  it('guards the share against a finding that counts no runs', () => {
    expect(describeFinding(finding(errorRule, { runFailures: 1, runs: 0 }))).toBe(
      'Errors with no slot named: 1 of 0 recent runs failed this way (100%).',
    );
  });
});

const emptyPlan = (): ChangePlan => ({ changes: [], guesses: [], unaddressed: [], conflicts: [] });
const change = (id: string) => ({
  id,
  slotId: 'gen',
  description: `change ${id}`,
  rationale: 'r',
  findingIds: ['1'],
  patch: { x: Number(id) },
});
const outcome = (input: Partial<Parameters<typeof renderOutcome>[0]> = {}) =>
  renderOutcome({
    signalCount: 5,
    executionCount: 5,
    findings: [],
    foundCount: 0,
    plan: emptyPlan(),
    staleSlotIds: [],
    ...input,
  });
const types = (warnings: { type: string }[]) => warnings.map((warning) => warning.type);

describe('renderOutcome', () => {
  it('says nothing was found, and that there is nothing to fix', () => {
    expect(outcome()).toEqual({
      summary: 'No fault found in 5 signals and 5 recent runs; no changes proposed.',
      warnings: [
        {
          type: 'no_changes',
          message:
            'Nothing to fix: none of the 5 signals and 5 recent runs shows a fault this heuristic recognises.',
        },
      ],
    });
  });

  it('flags thin evidence below 3 signals and 3 runs, and only then', () => {
    expect(outcome({ signalCount: 1, executionCount: 2 }).warnings[0]).toEqual({
      type: 'thin_evidence',
      message: 'Only 1 signal and 2 runs in the window; the diagnosis rests on little evidence.',
    });
    expect(types(outcome({ signalCount: 3, executionCount: 0 }).warnings)).not.toContain('thin_evidence');
    expect(types(outcome({ signalCount: 0, executionCount: 3 }).warnings)).not.toContain('thin_evidence');
    expect(outcome({ signalCount: 2, executionCount: 1 }).summary).toBe(
      'No fault found in 2 signals and 1 recent run; no changes proposed.',
    );
  });

  it('sums up the findings and the changes proposed', () => {
    const plan = { ...emptyPlan(), changes: [change('1')] };
    const findings = [finding(truncationRule, { slot: gen }), finding(errorRule)];
    expect(outcome({ findings, foundCount: 2, plan })).toEqual({
      summary:
        '2 findings from 5 signals and 5 recent runs: truncated output in slot "gen" (model); errors with no slot named. 1 change proposed.',
      warnings: [],
    });
    expect(
      outcome({
        findings: findings.slice(0, 1),
        foundCount: 1,
        plan: { ...plan, changes: [change('1'), change('2')] },
      }).summary,
    ).toBe(
      '1 finding from 5 signals and 5 recent runs: truncated output in slot "gen" (model). 2 changes proposed.',
    );
  });

  it('says when the findings stand but no change addresses them', () => {
    const { summary, warnings } = outcome({ findings: [finding(errorRule)], foundCount: 1 });
    expect(summary).toBe(
      '1 finding from 5 signals and 5 recent runs: errors with no slot named. No changes proposed: no setting this heuristic changes safely addresses them.',
    );
    expect(warnings).toEqual([
      {
        type: 'no_changes',
        message: 'The findings stand, but no setting this heuristic changes safely addresses them.',
      },
    ]);
  });

  it('reports conflicts, unanswered findings, left-out findings and stale slots, in that order', () => {
    const plan = {
      ...emptyPlan(),
      changes: [change('1')],
      conflicts: ['Finding 2: a.', 'Finding 3: b.'],
      unaddressed: ['Finding 4: c.'],
    };
    const { warnings } = outcome({
      findings: [finding(errorRule)],
      foundCount: 3,
      plan,
      staleSlotIds: ['s1'],
    });
    expect(warnings).toEqual([
      { type: 'conflicting_evidence', message: 'Finding 2: a. Finding 3: b.' },
      { type: 'no_applicable_change', message: 'No safe change addresses this finding. Finding 4: c.' },
      {
        type: 'findings_truncated',
        message: '2 weaker findings were left out; only the 1 strongest are reported.',
      },
      {
        type: 'stale_signals',
        message: 'Signals name a slot the base configuration does not have ("s1"); they were not used.',
      },
    ]);
  });

  it('uses the plural for several unanswered findings and stale slots, and names at most five', () => {
    const plan = { ...emptyPlan(), changes: [change('1')], unaddressed: ['Finding 1: a.', 'Finding 2: b.'] };
    const { warnings } = outcome({
      findings: [finding(errorRule)],
      foundCount: 2,
      plan,
      staleSlotIds: ['a', 'b', 'c', 'd', 'e', 'f'],
    });
    expect(warnings.map((warning) => warning.message)).toEqual([
      'No safe change addresses these findings. Finding 1: a. Finding 2: b.',
      '1 weaker finding was left out; only the 1 strongest are reported.',
      'Signals name slots the base configuration does not have ("a", "b", "c", "d", "e", 1 more); they were not used.',
    ]);
    expect(outcome({ staleSlotIds: ['a', 'b', 'c', 'd', 'e'] }).warnings[0]?.message).toBe(
      'Signals name slots the base configuration does not have ("a", "b", "c", "d", "e"); they were not used.',
    );
  });

  it('cuts long warning texts and the summary to what a draft allows', () => {
    const long = 'x'.repeat(700);
    const plan = {
      ...emptyPlan(),
      changes: [change('1')],
      conflicts: [long, long],
      unaddressed: [long, long],
    };
    const { warnings } = outcome({ findings: [finding(errorRule)], foundCount: 1, plan });
    expect(warnings.map((warning) => warning.message.length)).toEqual([1_000, 1_000]);
    expect(warnings[0]?.message.startsWith(`${long} x`)).toBe(true);
    const many = Array.from({ length: 40 }, () =>
      finding(truncationRule, { slot: slot('s'.repeat(60), 'model') }),
    );
    expect(outcome({ findings: many, foundCount: 40, plan }).summary).toHaveLength(2_000);
  });

  it('warns about each guessed change after the thin-evidence warning, or about all at once when room is short', () => {
    const guesses = [
      { changeId: '1', reason: 'why 1' },
      { changeId: '2', reason: 'why 2' },
    ];
    const plan = { ...emptyPlan(), changes: [change('1'), change('2')], guesses, conflicts: ['c.'] };
    const { warnings } = outcome({
      signalCount: 0,
      executionCount: 0,
      findings: [finding(errorRule)],
      foundCount: 1,
      plan,
    });
    expect(warnings).toEqual([
      expect.objectContaining({ type: 'thin_evidence' }),
      { type: 'speculative_change', message: 'Change 1 is a guess: why 1.', changeIds: ['1'] },
      { type: 'speculative_change', message: 'Change 2 is a guess: why 2.', changeIds: ['2'] },
      expect.objectContaining({ type: 'conflicting_evidence' }),
    ]);

    const fits = Array.from({ length: 19 }, (_, index) => ({ changeId: String(index + 1), reason: 'r' }));
    const full = outcome({ findings: [finding(errorRule)], foundCount: 1, plan: { ...plan, guesses: fits } });
    expect(full.warnings).toHaveLength(20);
    const crowded = outcome({
      findings: [finding(errorRule)],
      foundCount: 1,
      plan: { ...plan, guesses: [...fits, { changeId: '20', reason: 'r' }] },
    });
    expect(crowded.warnings[0]).toEqual({
      type: 'speculative_change',
      message: `Changes ${fits.map((guess) => guess.changeId).join(', ')}, 20 are guesses; see their rationale.`,
      changeIds: [...fits.map((guess) => guess.changeId), '20'],
    });
    expect(crowded.warnings).toHaveLength(2);
  });
});
