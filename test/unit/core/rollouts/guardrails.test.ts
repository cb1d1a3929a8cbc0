import { describe, expect, it } from 'vitest';
import {
  GUARDRAIL_POLICIES,
  guardrailCheckOf,
  policiesOn,
  policyActingOn,
} from '../../../../lambdas/core/rollouts/guardrails.ts';
import type { Pipeline } from '../../../../lambdas/core/schemas/pipelines.ts';
import type { Execution } from '../../../../lambdas/core/schemas/records.ts';
import type { Rollout } from '../../../../lambdas/core/schemas/rollouts.ts';

function rollout(overrides: Partial<Rollout> = {}): Rollout {
  return {
    id: 'rollout-1',
    pipelineId: 'pipeline-1',
    synthesisRunId: 'run-1',
    baseConfigurationId: 'cfg-base',
    candidateConfigurationId: 'cfg-candidate',
    percent: 10,
    minExecutions: 30,
    autoPromote: false,
    autoRollback: false,
    status: 'active',
    startedAt: '2025-06-02T09:00:00.000Z',
    startedBy: 'user-ada',
    endedAt: null,
    endedBy: null,
    endReason: null,
    ...overrides,
  };
}

const policy = (flag: string) => GUARDRAIL_POLICIES.find((row) => row.flag === flag);

describe('the guardrail policies', () => {
  it('autoRollback rolls a candidate shown worse back, and acts on no other decision', () => {
    const guarded = rollout({ autoRollback: true });
    expect(policyActingOn(guarded, 'roll_back')).toEqual(policy('autoRollback'));
    expect(policy('autoRollback')).toMatchObject({ ends: 'rolled_back' });
    for (const action of ['promote', 'step_up', 'keep'] as const) {
      expect(policyActingOn(guarded, action), action).toBeNull();
    }
  });

  it('autoPromote promotes only a candidate shown within every threshold at the last step, never on "keep collecting"', () => {
    const guarded = rollout({ autoPromote: true });
    expect(policyActingOn(guarded, 'promote')).toEqual(policy('autoPromote'));
    expect(policy('autoPromote')).toMatchObject({ ends: 'promoted' });
    expect(policyActingOn(guarded, 'roll_back')).toBeNull();
    expect(policyActingOn(guarded, 'keep')).toBeNull();
  });

  it('has the policies whose flags are set on, and none once the rollout ended', () => {
    expect(policiesOn(rollout())).toEqual([]);
    expect(policiesOn(rollout({ autoRollback: true, autoPromote: true })).map((row) => row.flag)).toEqual([
      'autoRollback',
      'autoPromote',
    ]);
    for (const status of ['promoted', 'rolled_back'] as const) {
      expect(policiesOn(rollout({ autoRollback: true, autoPromote: true, status }))).toEqual([]);
      expect(policyActingOn(rollout({ autoRollback: true, status }), 'roll_back')).toBeNull();
    }
  });
});

describe('the check a batch of executions asks for', () => {
  const pipeline = (active: Rollout | null): Pipeline => ({
    id: 'pipeline-1',
    teamId: 'team-a',
    name: 'support',
    activeConfigurationId: 'cfg-base',
    createdAt: '2025-06-01T00:00:00.000Z',
    rollout: active,
  });
  const ran = (...configurationIds: string[]): Execution[] =>
    configurationIds.map((configurationId, i) => ({
      id: `execution-${i}`,
      pipelineId: 'pipeline-1',
      configurationId,
      status: 'failed',
      durationMs: 10,
      startedAt: '2025-06-02T09:30:00.000Z',
    }));

  it('names the rollout when the batch ran its base or its candidate and a guardrail is on', () => {
    const check = { pipelineId: 'pipeline-1', rolloutId: 'rollout-1' };
    expect(guardrailCheckOf(pipeline(rollout({ autoRollback: true })), ran('cfg-other', 'cfg-base'))).toEqual(
      check,
    );
    expect(guardrailCheckOf(pipeline(rollout({ autoPromote: true })), ran('cfg-candidate'))).toEqual(check);
  });

  it('asks nothing without a rollout, without a guardrail on, or for other configurations', () => {
    expect(guardrailCheckOf(pipeline(null), ran('cfg-base'))).toBeNull();
    expect(guardrailCheckOf(pipeline(rollout()), ran('cfg-base', 'cfg-candidate'))).toBeNull();
    expect(guardrailCheckOf(pipeline(rollout({ autoRollback: true })), ran('cfg-other'))).toBeNull();
    expect(
      guardrailCheckOf(pipeline(rollout({ autoRollback: true, status: 'rolled_back' })), ran('cfg-base')),
    ).toBeNull();
  });
});
