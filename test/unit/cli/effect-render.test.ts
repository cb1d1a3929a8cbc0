import { describe, expect, it } from 'vitest';
import { renderEffect } from '../../../cli/rollout-commands.ts';

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
      'difference +2.5 percentage points (95 % interval -3.1 percentage points to +8.1 percentage points), p = 0.3800',
    );
  });
});
