/** Building the changes: one per action and slot, on the settings as changed so far. */
import { describe, expect, it } from 'vitest';
import { planChanges } from '../../../../lambdas/synthesis/heuristic/patches.ts';
import type { Action, FaultRule } from '../../../../lambdas/synthesis/heuristic/rule.ts';
import { errorRule } from '../../../../lambdas/synthesis/heuristic/rules/error.ts';
import { FORMAT_INSTRUCTION, formatRule } from '../../../../lambdas/synthesis/heuristic/rules/format.ts';
import { latencyRule } from '../../../../lambdas/synthesis/heuristic/rules/latency.ts';
import { timeoutRule } from '../../../../lambdas/synthesis/heuristic/rules/timeout.ts';
import { transientRule } from '../../../../lambdas/synthesis/heuristic/rules/transient.ts';
import { truncationRule } from '../../../../lambdas/synthesis/heuristic/rules/truncation.ts';
import { finding, slot } from './fixtures.ts';

const gen = slot('gen', 'model', { maxRetries: 1, timeoutMs: 600_000, maxTokens: 2_000 });
const tool = slot('tool', 'tool');

/** A rule that answers every finding with the given actions. */
const ruleAnswering = (actions: Action[]): FaultRule => ({ ...errorRule, answer: () => actions });

describe('planChanges', () => {
  it('makes one change for two findings asking for the same one, cited by both', () => {
    const plan = planChanges(
      [finding(transientRule, { slot: gen }), finding(errorRule, { slot: gen })],
      [gen],
    );
    expect(plan.changes).toEqual([
      {
        id: '1',
        slotId: 'gen',
        description: 'Slot "gen": Raise maxRetries from 1 to 2.',
        rationale: expect.stringContaining('transient'),
        findingIds: ['1', '2'],
        patch: { maxRetries: 2 },
      },
    ]);
    expect(plan.unaddressed).toEqual([]);
  });

  it('cites a finding once even when it asks twice for the same change', () => {
    const build = () => ({ patch: { x: 1 }, description: 'd', rationale: 'r' });
    const twice = ruleAnswering([
      { name: 'x', slot: gen, build },
      { name: 'x', slot: gen, build },
    ]);
    expect(planChanges([finding(twice, { slot: gen })], [gen]).changes.map((c) => c.findingIds)).toEqual([
      ['1'],
    ]);
  });

  it('builds each change on the settings as the earlier changes left them', () => {
    const plan = planChanges([finding(errorRule, { slot: gen }), finding(timeoutRule, { slot: gen })], [gen]);
    expect(plan.changes.map((change) => [change.id, change.findingIds, change.patch])).toEqual([
      ['1', ['1'], { maxRetries: 2 }],
      ['2', ['2'], { maxRetries: 3 }],
    ]);
  });

  it('lists the guesses, joining the slot pick and the change own reason', () => {
    const plan = planChanges([finding(errorRule, { slot: undefined })], [gen, slot('gen2', 'model')]);
    expect(plan.guesses).toEqual([
      {
        changeId: '1',
        reason:
          'the evidence names no single model slot; "gen" is the nearest of 2; the errors do not show that they are transient, so retrying may not help',
      },
    ]);
    expect(planChanges([finding(transientRule, { slot: gen })], [gen]).guesses).toEqual([]);
  });

  it('says why a finding went unanswered: the skipped changes, or no slot to take one', () => {
    const capped = slot('gen', 'model', { maxRetries: 5, timeoutMs: 600_000 });
    const plan = planChanges(
      [finding(transientRule, { slot: capped }), finding(truncationRule, { slot: tool })],
      [tool],
    );
    expect(plan.unaddressed).toEqual([
      'Finding 1: slot "gen": maxRetries is already 5, the most this heuristic sets.',
      'Finding 2: no slot of this configuration can take a fix for it.',
    ]);
    expect(plan.changes).toEqual([]);
  });

  it('joins the reasons of every skipped change of a finding', () => {
    const cold = slot('gen', 'model', { temperature: 0 });
    const done = slot('prompt', 'prompt', { instructions: FORMAT_INSTRUCTION });
    expect(planChanges([finding(formatRule, { slot: cold })], [done, cold]).unaddressed).toEqual([
      'Finding 1: slot "gen": temperature is already 0; slot "prompt": the instructions already say this.',
    ]);
  });

  it('records a change ruled out by another finding as a conflict, not as unanswered', () => {
    const plan = planChanges(
      [finding(truncationRule, { slot: gen }), finding(latencyRule, { slot: gen })],
      [gen],
    );
    expect(plan.changes.map((change) => change.patch)).toEqual([{ maxTokens: 4_000 }]);
    expect(plan.conflicts).toEqual([
      'Finding 2: slot "gen": maxTokens of slot "gen" is being raised for truncated output, so it is not lowered for latency.',
    ]);
    expect(plan.unaddressed).toHaveLength(1);
  });
});
