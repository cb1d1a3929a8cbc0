/*
 * The per-batch guardrail: recording executions of an active rollout's arms queues a check
 * {pipelineId, rolloutId} (makeRecordExecutions); the guardrail queue's consumer judges exactly the
 * rollouts its batch names, each once, with the same judge as the sweeper's pass (judgeRollout).
 */
import * as z from 'zod/mini';
import type { GuardrailCheck } from '../ports/rollouts.ts';
import { idSchema } from '../schemas/common.ts';
import { type GuardrailOutcome, type JudgeDeps, judgeRollout } from './guardrails.ts';

/** Checks naming the same rollout of the same pipeline ask for one judgement. */
export const checkKey = (check: GuardrailCheck) => `${check.pipelineId}/${check.rolloutId}`;

/** The body of a guardrail queue message. */
export const guardrailCheckSchema = /* @__PURE__ */ z.object({ pipelineId: idSchema, rolloutId: idSchema });

/** What became of one named rollout: judged, no longer active, or an error for the caller to sort. */
export type CheckResult =
  | { check: GuardrailCheck; outcome: GuardrailOutcome | NotActive }
  | { check: GuardrailCheck; error: unknown };

/** The rollout named ended (or another one started) before it was judged: nothing to do. */
export interface NotActive {
  rolloutId: string;
  pipelineId: string;
  action: 'not_active';
  reason: string;
}

/**
 * Judges the rollouts the checks name, each once however many checks name it (a burst of batches
 * asks many times for the same judgement). A rollout that is no longer the pipeline's active one,
 * or whose pipeline is gone, is a no-op. One rollout's error does not keep the others from being judged.
 */
export function makeJudgeNamedRollouts(deps: JudgeDeps) {
  return async (checks: GuardrailCheck[]): Promise<CheckResult[]> => {
    // Checks with one key name the same rollout: whichever is kept, the judgement is the same.
    const distinct = new Map(checks.map((check) => [checkKey(check), check]));
    const results: CheckResult[] = [];
    for (const check of distinct.values()) {
      try {
        results.push({ check, outcome: await judgeNamed(deps, check) });
      } catch (error) {
        results.push({ check, error });
      }
    }
    return results;
  };
}

/** One GetItem for the pipeline, which carries its active rollout; then the sweeper's judge. */
async function judgeNamed(deps: JudgeDeps, check: GuardrailCheck): Promise<GuardrailOutcome | NotActive> {
  const pipeline = await deps.pipelines.getPipeline(check.pipelineId);
  const rollout = pipeline?.rollout;
  if (!rollout || rollout.id !== check.rolloutId || rollout.status !== 'active') {
    return {
      ...check,
      action: 'not_active',
      reason: pipeline ? 'the rollout is no longer active' : 'the pipeline no longer exists',
    };
  }
  return judgeRollout(deps, rollout);
}
