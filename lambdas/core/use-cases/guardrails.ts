/*
 * The guardrails' judge: reads an active rollout's counters, judges them (core/rollouts/judge.ts:
 * the anytime-valid test on every guarded metric) and acts — rolls back on a metric shown worse
 * (autoRollback), moves up a step when every metric is shown within its threshold, promotes at the
 * last step (autoPromote) — keeping each judgement for the effect's history. The sweeper's pass
 * judges every active rollout, the guardrail queue's consumer those a batch names.
 */
import { ConflictError, NotFoundError } from '../errors.ts';
import { newEvent, SYSTEM_ACTOR } from '../events.ts';
import type { JudgementPoint, RolloutRepository } from '../ports/rollouts.ts';
import type { RunRepository } from '../ports/runs.ts';
import { policyActingOn } from '../rollouts/guardrails.ts';
import { judgeCounters, type RolloutJudgement } from '../rollouts/judge.ts';
import type { Rollout } from '../schemas/rollouts.ts';
import { endRollout, type RolloutDeps } from './rollouts.ts';

/** How many active rollouts one guardrail pass judges at most. */
export const GUARDRAIL_BATCH = 100;

export interface GuardrailOutcome {
  rolloutId: string;
  pipelineId: string;
  action: 'promoted' | 'rolled_back' | 'stepped' | 'kept' | 'lost_race';
  reason: string;
}

/** What judging a rollout needs. */
export type JudgeDeps = Pick<RolloutDeps, 'pipelines' | 'clock' | 'ids'> & {
  /** The rollouts, their counters and judgement history. */
  rollouts: RolloutRepository;
  runs: RunRepository;
};

/**
 * The guardrail: judges every active rollout (judgeRollout), at most GUARDRAIL_BATCH a pass. The
 * sweeper's pass, the backstop of the per-batch checks.
 */
export function makeJudgeRollouts(deps: JudgeDeps) {
  return async (): Promise<GuardrailOutcome[]> => {
    const active = await deps.rollouts.listActive(GUARDRAIL_BATCH);
    const outcomes: GuardrailOutcome[] = [];
    for (const rollout of active) outcomes.push(await judgeRollout(deps, rollout));
    return outcomes;
  };
}

/**
 * Judges one active rollout on its counters (one BatchGetItem): a rollback or promotion its flags
 * allow ends it, by "system", the metric, both arms, the interval and the threshold in endReason;
 * a step held moves it up. A person (or another judge) acting at the same moment wins quietly.
 */
export async function judgeRollout(deps: JudgeDeps, rollout: Rollout): Promise<GuardrailOutcome> {
  const [counts, history] = await Promise.all([
    deps.rollouts.rolloutCounts(rollout.pipelineId, rollout.id),
    deps.rollouts.judgementHistory(rollout.pipelineId, rollout.id),
  ]);
  const judged = judgeCounters(rollout, counts);
  await keepPoint(deps, rollout, judged, history, counts.candidate.executions);
  const { decision } = judged;
  const base = { rolloutId: rollout.id, pipelineId: rollout.pipelineId };
  try {
    if (decision.action === 'step_up') {
      await stepUp(deps, rollout, decision.reason);
      return { ...base, action: 'stepped', reason: decision.reason };
    }
    const policy = policyActingOn(rollout, decision.action);
    if (!policy) return { ...base, action: 'kept', reason: `${decision.reason}; ${decision.next}` };
    const reason = `Guardrail: ${decision.reason}; ${policy.ends.replace('_', ' ')} automatically.`;
    await endRollout(deps, rollout, policy.ends, SYSTEM_ACTOR, reason);
    return { ...base, action: policy.ends, reason };
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    return { ...base, action: 'lost_race', reason: error.message };
  }
}

/** A point is kept when the candidate grew by 2 % or a minute passed since the last (the chart's resolution). */
async function keepPoint(
  deps: JudgeDeps,
  rollout: Rollout,
  judged: RolloutJudgement,
  history: JudgementPoint[],
  candidateExecutions: number,
) {
  const now = deps.clock.now();
  const last = history.at(-1);
  const grown = !last || candidateExecutions >= last.n * 1.02 + 1;
  const aged = !last || now.getTime() - Date.parse(last.at) >= 60_000;
  if (!grown && !aged) return;
  if (last && last.n === candidateExecutions) return;
  const point: JudgementPoint = {
    at: now.toISOString(),
    n: candidateExecutions,
    step: rollout.step ?? 0,
    metrics: judged.judgements.map((j) =>
      j.interval && j.difference !== null
        ? {
            difference: j.difference,
            interval: j.interval,
            ...(j.worseBound === null ? {} : { worseBound: j.worseBound }),
          }
        : null,
    ),
  };
  await deps.rollouts.keepJudgementHistory(rollout.pipelineId, rollout.id, [...history, point]);
}

/** Moves the rollout to its next step's share: serving, the pipeline's copy, rollout.stepped. */
async function stepUp(deps: JudgeDeps, rollout: Rollout, reason: string): Promise<Rollout> {
  const steps = rollout.steps ?? [rollout.percent];
  const step = (rollout.step ?? 0) + 1;
  const percent = steps[step];
  if (percent === undefined) throw new ConflictError(`Rollout ${rollout.id} has no step ${step + 1}.`);
  const at = deps.clock.now().toISOString();
  const [pipeline, base, candidate] = await Promise.all([
    deps.pipelines.getPipeline(rollout.pipelineId),
    deps.pipelines.getConfiguration(rollout.pipelineId, rollout.baseConfigurationId),
    deps.pipelines.getConfiguration(rollout.pipelineId, rollout.candidateConfigurationId),
  ]);
  if (!pipeline || !base || !candidate) {
    throw new NotFoundError(`The pipeline or a configuration of rollout ${rollout.id} no longer exists.`);
  }
  const event = newEvent(
    'rollout.stepped',
    {
      teamId: pipeline.teamId,
      pipelineId: rollout.pipelineId,
      runId: rollout.synthesisRunId,
      rolloutId: rollout.id,
      configurationId: rollout.candidateConfigurationId,
      status: 'active',
      percent,
      step,
      reason: `Step ${step + 1} of ${steps.length}: ${percent} % of traffic, because ${reason}`,
      actor: SYSTEM_ACTOR,
    },
    { at, key: `${rollout.id}_${step}` },
  );
  return deps.rollouts.step(rollout, {
    step,
    percent,
    at,
    serving: {
      pipelineId: rollout.pipelineId,
      teamId: pipeline.teamId,
      active: base,
      rollout: { id: rollout.id, percent, candidate },
    },
    events: [event],
  });
}
