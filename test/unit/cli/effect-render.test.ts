import { describe, expect, it } from 'vitest';
import { renderEffect, renderRollout } from '../../../cli/rollout-render.ts';

type Effect = Parameters<typeof renderEffect>[0];
const arm = (executions: number, failed: number) => ({
  executions,
  failed,
  failureRate: failed / executions,
  durationMs: null,
  signals: { info: 0, warning: 0, critical: 0 },
  from: null,
  to: null,
});

describe('runs effect, in words', () => {
  it('gives the difference of two failure rates in percentage points, signed, never as "%"', () => {
    const effect = {
      runId: 'run-1',
      mode: 'before_after',
      rolloutId: null,
      baseConfigurationId: 'config-1',
      appliedConfigurationId: 'config-2',
      arms: { base: arm(200, 20), applied: arm(200, 25) },
      slots: [],
      failureRate: { difference: 0.025, ci95: [-0.031, 0.081], pValue: 0.38 },
      verdict: 'no_significant_change',
      minExecutions: 30,
      measuredAt: '2026-12-02T08:00:00.000Z',
    } as unknown as Effect;
    const lines = renderEffect(effect).split('\n');
    expect(lines[1]).toContain('10.0 % failed (20 of 200)');
    expect(lines[3]).toBe(
      'difference +2.5 percentage points (anytime-valid interval -3.1 percentage points to +8.1 percentage points), p = 0.3800',
    );
  });
});

describe('runs effect and rollout show, every guarded metric', () => {
  const effect = {
    runId: 'run-1',
    mode: 'rollout',
    rolloutId: 'rollout-1',
    baseConfigurationId: 'config-1',
    appliedConfigurationId: 'config-2',
    arms: { base: arm(900, 18), applied: arm(100, 2) },
    slots: [],
    failureRate: { difference: 0, ci95: [-0.04, 0.04], pValue: 1 },
    verdict: 'no_significant_change',
    minExecutions: 200,
    measuredAt: '2026-12-02T08:00:00.000Z',
    metrics: [
      {
        metric: 'failure_rate',
        kind: null,
        direction: 'lower_is_better',
        threshold: 0.01,
        unit: 'rate',
        base: { n: 900, mean: 0.02 },
        applied: { n: 100, mean: 0.02 },
        difference: 0,
        interval: [-0.04, 0.04],
        worseBound: 0.035,
        verdict: 'inconclusive',
      },
      {
        metric: 'signal',
        kind: 'relevance',
        direction: 'higher_is_better',
        threshold: 0.05,
        unit: 'score',
        base: { n: 880, mean: 0.8 },
        applied: { n: 95, mean: 0.62 },
        difference: -0.18,
        interval: [-0.25, -0.11],
        worseBound: -0.23,
        verdict: 'worse',
      },
      {
        metric: 'duration_ms',
        kind: null,
        direction: 'lower_is_better',
        threshold: 200,
        unit: 'ms',
        base: { n: 20, mean: 310.4 },
        applied: { n: 10, mean: 295 },
        difference: null,
        interval: null,
        worseBound: null,
        verdict: 'not_enough_data',
      },
    ],
    notes: [],
    next: 'moves to step 2 of 3 once the candidate has 200 executions at step 1 (100 so far)',
  } as unknown as Effect;

  it('gives each metric both arms in its unit, the signed difference, its interval, worst case, threshold and verdict', () => {
    const text = renderEffect(effect);
    const row = (name: string) => text.split('\n').find((line) => line.startsWith(name)) ?? '';
    expect(row('failure rate (lower is better)')).toMatch(
      /2\.00 % \(n = 900\)\s+2\.00 % \(n = 100\)\s+0\.00 points\s+-4\.00 points to \+4\.00 points\s+\+3\.50 points\s+1\.00 points\s+inconclusive/,
    );
    expect(row('signal relevance (higher is better)')).toMatch(
      /0\.800 \(n = 880\)\s+0\.620 \(n = 95\)\s+-0\.180\s+-0\.250 to -0\.110\s+-0\.230\s+0\.050\s+worse/,
    );
    expect(row('mean duration (lower is better)')).toMatch(
      /310 ms \(n = 20\)\s+295 ms \(n = 10\)\s+n\/a\s+n\/a\s+n\/a\s+200 ms\s+not enough data/,
    );
    expect(text).toContain(
      'next: moves to step 2 of 3 once the candidate has 200 executions at step 1 (100 so far)',
    );
  });

  it('says where a rollout is in its steps and what it guards', () => {
    const rollout = {
      id: 'rollout-1',
      status: 'active',
      percent: 25,
      steps: [5, 25, 50],
      step: 1,
      guardrails: [
        { metric: 'failure_rate', threshold: 0.01 },
        { metric: 'signal', kind: 'relevance', direction: 'higher_is_better', threshold: 0.05 },
        { metric: 'duration_ms' },
      ],
      startedBy: 'u1',
      startedByName: 'ada@example.com',
      endedBy: null,
      endedByName: null,
    } as unknown as Parameters<typeof renderRollout>[0];
    const text = renderRollout(rollout);
    expect(text).toMatch(/step:\s+2 of 3: 25 % of traffic \(steps 5 → 25 → 50 %\)/);
    expect(text).toContain(
      'failure rate (lower is better) within 1.00 points; signal relevance (higher is better) within 0.050; mean duration (lower is better) within 100 ms',
    );
    expect(
      renderRollout({ ...rollout, steps: undefined, step: undefined, percent: 10, guardrails: undefined }),
    ).toMatch(
      /step:\s+1 of 1: 10 % of traffic \(steps 10 %\)[\s\S]*guardrails:\s+failure rate \(lower is better\) within 1\.00 points/,
    );
  });
});
