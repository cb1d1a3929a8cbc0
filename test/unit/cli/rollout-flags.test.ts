import { describe, expect, it } from 'vitest';
import {
  collectGuard,
  parseGuard,
  parseMinExecutions,
  parseSteps,
  rolloutBody,
} from '../../../cli/rollout-flags.ts';

describe('approve --guard', () => {
  it('reads each metric with its threshold in the metric’s unit, or without one for its default', () => {
    expect(parseGuard('failure_rate:0.01')).toEqual({ metric: 'failure_rate', threshold: 0.01 });
    expect(parseGuard('duration_ms:200')).toEqual({ metric: 'duration_ms', threshold: 200 });
    expect(parseGuard('tokens:50')).toEqual({ metric: 'tokens', threshold: 50 });
    expect(parseGuard('tokens')).toEqual({ metric: 'tokens' });
    expect(parseGuard('failure_rate:0')).toEqual({ metric: 'failure_rate', threshold: 0 });
  });

  it('reads a signal as kind, which way is better, and a required threshold', () => {
    expect(parseGuard('signal:relevance:higher:0.05')).toEqual({
      metric: 'signal',
      kind: 'relevance',
      direction: 'higher_is_better',
      threshold: 0.05,
    });
    expect(parseGuard('signal:cost_usd:lower_is_better:0.002')).toMatchObject({
      kind: 'cost_usd',
      direction: 'lower_is_better',
      threshold: 0.002,
    });
  });

  it.each([
    ['latency:100', '"latency" is not a guarded metric'],
    ['failure_rate:1%', 'the threshold "1%" is not a number ≥ 0'],
    ['failure_rate:', 'the threshold "" is not a number ≥ 0'],
    ['failure_rate:1.5', 'a failure rate threshold is a share from 0 to 1'],
    ['duration_ms:-5', 'the threshold "-5" is not a number ≥ 0'],
    ['duration_ms:0x10', 'the threshold "0x10" is not a number ≥ 0'],
    ['duration_ms:100:200', 'duration_ms takes one threshold at most'],
    ['signal:relevance:0.05', 'a signal guard names its kind, which way is better and its threshold'],
    ['signal:relevance:higher', 'a signal guard names its kind, which way is better and its threshold'],
    ['signal:Relevance:higher:0.05', '"Relevance" is not a signal kind'],
    ['signal:relevance:up:0.05', '"up" is not a direction'],
    ['signal:relevance:higher:0.05:x', 'a signal guard names its kind'],
  ])('refuses --guard %s, saying why and how to write one', (value, why) => {
    expect(() => parseGuard(value)).toThrow(why);
    expect(() => parseGuard(value)).toThrow('e.g. --guard signal:relevance:higher:0.05');
  });

  it('collects repeated --guard flags in order, each metric (and signal kind) once, at most five', () => {
    let guards = collectGuard('failure_rate:0.01');
    guards = collectGuard('signal:relevance:higher:0.05', guards);
    guards = collectGuard('signal:human_feedback:higher:0.05', guards);
    guards = collectGuard('duration_ms:200', guards);
    expect(guards.map((guard) => guard.kind ?? guard.metric)).toEqual([
      'failure_rate',
      'relevance',
      'human_feedback',
      'duration_ms',
    ]);
    expect(() => collectGuard('duration_ms:100', guards)).toThrow('duration_ms is guarded twice');
    expect(() => collectGuard('signal:relevance:lower:1', guards)).toThrow(
      'signal:relevance is guarded twice',
    );
    const five = collectGuard('tokens:50', guards);
    expect(() => collectGuard('signal:tone:higher:0.1', five)).toThrow('at most 5 guards');
  });
});

describe('approve --steps and the rollout it sends', () => {
  it('reads increasing whole percents from 1 to 99', () => {
    expect(parseSteps('5,25,50')).toEqual([5, 25, 50]);
    expect(parseSteps('1, 5')).toEqual([1, 5]);
    for (const bad of ['5,5,50', '25,5', '0,5', '5,100', '5,,25', '5.5,25', '', 'a']) {
      expect(() => parseSteps(bad), bad).toThrow('write increasing whole percents from 1 to 99');
    }
  });

  it('sends exactly rollout.steps and rollout.guardrails as given, and nothing unasked for', () => {
    expect(
      rolloutBody({
        rollout: 5,
        steps: [5, 25, 50],
        guards: [{ metric: 'failure_rate', threshold: 0.01 }],
        autoPromote: true,
        autoRollback: true,
      }),
    ).toEqual({
      percent: 5,
      steps: [5, 25, 50],
      guardrails: [{ metric: 'failure_rate', threshold: 0.01 }],
      autoPromote: true,
    });
    expect(rolloutBody({ rollout: 10, autoRollback: false, minExecutions: 500 })).toEqual({
      percent: 10,
      minExecutions: 500,
      autoRollback: false,
    });
  });

  it('refuses steps that do not start at the --rollout percent, showing the command to write', () => {
    expect(() => rolloutBody({ rollout: 5, steps: [25, 50], autoRollback: true })).toThrow(
      '--steps starts at the --rollout percent: --rollout 5 --steps 5,25,50',
    );
  });

  it('reads --min-executions as a whole number from 30 to 100000', () => {
    expect(parseMinExecutions('200')).toBe(200);
    for (const bad of ['29', '100001', '2e2', 'many', '']) {
      expect(() => parseMinExecutions(bad), bad).toThrow('from 30 to 100000');
    }
  });
});
