/*
 * Showing and ending a rollout: a pipeline's active (or latest) rollout, and its end by a person's
 * promote or rollback or by a guardrail, in one transaction with its events.
 */
import { ConflictError, NotFoundError } from '../errors.ts';
import { type Actor, actorOf, newEvent } from '../events.ts';
import type { Clock, IdGenerator } from '../ports/common.ts';
import type { PipelineReads } from '../ports/pipelines.ts';
import type { RolloutStore } from '../ports/rollouts.ts';
import { assertCanWrite, type Principal } from '../principal.ts';
import type { Activation, Configuration } from '../schemas/pipelines.ts';
import type { Rollout } from '../schemas/rollouts.ts';
import { loadOwnedPipeline } from './pipelines.ts';

export interface RolloutDeps {
  pipelines: PipelineReads;
  rollouts: RolloutStore;
  clock: Clock;
  ids: IdGenerator;
}

/** The pipeline's active rollout or, when none is active, its latest (404 when it never had one). */
export function makeGetRollout({ pipelines, rollouts }: Pick<RolloutDeps, 'pipelines' | 'rollouts'>) {
  return async (principal: Principal, pipelineId: string): Promise<Rollout> => {
    const pipeline = await loadOwnedPipeline(pipelines, principal, pipelineId);
    const rollout = pipeline.rollout ?? (await rollouts.latest(pipelineId));
    if (!rollout) throw new NotFoundError(`Pipeline ${pipelineId} has had no rollout yet.`);
    return rollout;
  };
}

/** The activation a promotion writes: the candidate replaces the base, source "rollout". */
function promotionOf(
  rollout: Rollout,
  base: Configuration,
  candidate: Configuration,
  at: string,
  by: string,
  reason: string | null,
): Omit<Activation, 'id'> {
  return {
    pipelineId: rollout.pipelineId,
    configurationId: candidate.id,
    version: candidate.version,
    previousConfigurationId: base.id,
    previousVersion: base.version,
    source: 'rollout',
    synthesisRunId: rollout.synthesisRunId,
    reason,
    summary: `Promoted rollout ${rollout.id}: version ${candidate.version} replaces version ${base.version} for all traffic.`,
    activatedAt: at,
    activatedBy: by,
  };
}

/** Ends a rollout (a person's promote or rollback, or a guardrail's), one transaction. */
export async function endRollout(
  { pipelines, rollouts, clock, ids }: Pick<RolloutDeps, 'pipelines' | 'rollouts' | 'clock' | 'ids'>,
  rollout: Rollout,
  status: 'promoted' | 'rolled_back',
  actor: Actor,
  reason: string | null,
): Promise<Rollout> {
  const by = actor.userId;
  const at = clock.now().toISOString();
  const [pipeline, base, candidate] = await Promise.all([
    pipelines.getPipeline(rollout.pipelineId),
    pipelines.getConfiguration(rollout.pipelineId, rollout.baseConfigurationId),
    pipelines.getConfiguration(rollout.pipelineId, rollout.candidateConfigurationId),
  ]);
  if (!pipeline || !base || !candidate) {
    throw new NotFoundError(`The pipeline or a configuration of rollout ${rollout.id} no longer exists.`);
  }
  const activation =
    status === 'promoted'
      ? { ...promotionOf(rollout, base, candidate, at, by, reason), id: ids.newId() }
      : null;
  const serving = {
    pipelineId: rollout.pipelineId,
    teamId: pipeline.teamId,
    active: status === 'promoted' ? candidate : base,
    rollout: null,
  };
  const eventIds = {
    teamId: pipeline.teamId,
    pipelineId: rollout.pipelineId,
    runId: rollout.synthesisRunId,
    rolloutId: rollout.id,
    actor,
  };
  const events = [
    newEvent(
      `rollout.${status}`,
      {
        ...eventIds,
        configurationId:
          status === 'promoted' ? rollout.candidateConfigurationId : rollout.baseConfigurationId,
        status,
      },
      { at, key: rollout.id },
    ),
    ...(activation
      ? [
          newEvent(
            'configuration.activated',
            { ...eventIds, configurationId: activation.configurationId },
            { at, key: activation.id },
          ),
        ]
      : []),
  ];
  return rollouts.end(rollout, { status, at, by, reason, activation, serving, events });
}

/** Promotes or rolls back the pipeline's active rollout; 409 when none is active. */
export function makeEndRollout(
  deps: Pick<RolloutDeps, 'pipelines' | 'rollouts' | 'clock' | 'ids'>,
  status: 'promoted' | 'rolled_back',
) {
  return async (principal: Principal, pipelineId: string, reason: string | undefined): Promise<Rollout> => {
    const pipeline = await loadOwnedPipeline(deps.pipelines, principal, pipelineId);
    assertCanWrite(principal);
    if (!pipeline.rollout) {
      const latest = await deps.rollouts.latest(pipelineId);
      throw new ConflictError(
        latest
          ? `Pipeline ${pipelineId} has no active rollout: rollout ${latest.id} already ended (${latest.status.replace('_', ' ')}).`
          : `Pipeline ${pipelineId} has no active rollout to ${status === 'promoted' ? 'promote' : 'roll back'}.`,
      );
    }
    return endRollout(deps, pipeline.rollout, status, actorOf(principal), reason ?? null);
  };
}
