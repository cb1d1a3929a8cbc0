/*
 * A rollout's guardrails as a table of policies: which flag turns each on, the decisions it acts on
 * and how it ends the rollout. The judge (use-cases/guardrails.ts) and the per-batch check that
 * asks for a judgement (guardrailCheckOf, on POST …/executions) both read the policies a rollout
 * has on through policiesOn, so a batch asks exactly when a verdict could make the judge act.
 */
import type { GuardrailCheck } from '../ports/rollouts.ts';
import type { Pipeline } from '../schemas/pipelines.ts';
import type { Execution, Signal } from '../schemas/records.ts';
import type { Rollout } from '../schemas/rollouts.ts';
import type { RolloutAction } from './decision.ts';

/** One guardrail a rollout may carry. */
export interface GuardrailPolicy {
  /** The rollout's flag that turns it on. */
  flag: 'autoRollback' | 'autoPromote';
  /** The judge's decisions it acts on (core/rollouts/decision.ts). */
  actsOn: readonly RolloutAction[];
  /** How it ends the rollout. */
  ends: 'rolled_back' | 'promoted';
}

/** Every guardrail, in the order the judge looks at them (their verdicts do not overlap). */
export const GUARDRAIL_POLICIES: readonly GuardrailPolicy[] = [
  { flag: 'autoRollback', actsOn: ['roll_back'], ends: 'rolled_back' },
  // Promotion only on shown non-inferiority at the last step, never on "not significant".
  { flag: 'autoPromote', actsOn: ['promote'], ends: 'promoted' },
];

/** The guardrails a rollout has on: none for a rollout that is no longer active. */
export function policiesOn(rollout: Rollout): GuardrailPolicy[] {
  if (rollout.status !== 'active') return [];
  return GUARDRAIL_POLICIES.filter((policy) => rollout[policy.flag]);
}

/** The guardrail of the rollout that acts on `action`, or null when none does. */
export function policyActingOn(rollout: Rollout, action: RolloutAction): GuardrailPolicy | null {
  return policiesOn(rollout).find((policy) => policy.actsOn.includes(action)) ?? null;
}

/** True when a judgement could change the rollout: a guardrail on, or a step still to take. */
export function judgedAtAll(rollout: Rollout): boolean {
  if (rollout.status !== 'active') return false;
  return policiesOn(rollout).length > 0 || (rollout.step ?? 0) < (rollout.steps?.length ?? 1) - 1;
}

/**
 * The guardrail check a batch asks for: only while the pipeline has an active rollout with a
 * guardrail on and the batch ran its base or its candidate.
 */
export function guardrailCheckOf(pipeline: Pipeline, executions: Execution[]): GuardrailCheck | null {
  const rollout = pipeline.rollout;
  if (!rollout || !judgedAtAll(rollout)) return null;
  const arms = [rollout.baseConfigurationId, rollout.candidateConfigurationId];
  if (!executions.some((execution) => arms.includes(execution.configurationId))) return null;
  return { pipelineId: pipeline.id, rolloutId: rollout.id };
}

/**
 * The check a batch of signals asks for: a score that cites an execution, of a kind the active
 * rollout guards, may be what shows its candidate worse (a score often arrives after its execution).
 */
export function guardrailCheckOfSignals(pipeline: Pipeline, signals: Signal[]): GuardrailCheck | null {
  const rollout = pipeline.rollout;
  if (!rollout || !judgedAtAll(rollout)) return null;
  const kinds = new Set(
    (rollout.guardrails ?? []).flatMap((guard) =>
      guard.metric === 'signal' && guard.kind ? [guard.kind] : [],
    ),
  );
  const scores = signals.some(
    (signal) => signal.executionId !== undefined && signal.value !== undefined && kinds.has(signal.kind),
  );
  return scores ? { pipelineId: pipeline.id, rolloutId: rollout.id } : null;
}
