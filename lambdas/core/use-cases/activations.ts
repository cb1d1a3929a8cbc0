/*
 * A pipeline's activations: restoring an earlier configuration (a rollback, or forward again) and
 * the history of what was active when, with the event every activation writes.
 */
import { ConflictError } from '../errors.ts';
import { type Actor, actorOf, type DomainEvent, newEvent } from '../events.ts';
import type { Clock, IdGenerator, PageRequest } from '../ports/common.ts';
import type { PipelineRepository } from '../ports/pipelines.ts';
import type { RunRepository } from '../ports/runs.ts';
import { assertCanWrite, type Principal } from '../principal.ts';
import type { Activation } from '../schemas/pipelines.ts';
import { loadConfiguration, loadOwnedPipeline } from './pipelines.ts';

export interface ActivationDeps {
  runs: RunRepository;
  pipelines: PipelineRepository;
  clock: Clock;
  ids: IdGenerator;
}

/** configuration.activated for `activation`, in the pipeline's team. */
export function activatedEvent(teamId: string, activation: Activation, actor: Actor): DomainEvent {
  return newEvent(
    'configuration.activated',
    {
      teamId,
      pipelineId: activation.pipelineId,
      configurationId: activation.configurationId,
      ...(activation.synthesisRunId ? { runId: activation.synthesisRunId } : {}),
      actor,
    },
    { at: activation.activatedAt, key: activation.id },
  );
}

/**
 * Activates an earlier configuration (a rollback, or forward again). Only a configuration that was
 * active before may be restored: a manual one (active from its creation) or the proposal of an
 * approved run. A proposal nobody approved is a 409: approving its run is how it becomes active,
 * with the review that implies.
 */
export function makeActivateConfiguration({ runs, pipelines, clock, ids }: ActivationDeps) {
  return async (
    principal: Principal,
    pipelineId: string,
    configurationId: string,
    reason: string | undefined,
  ): Promise<Activation> => {
    const pipeline = await loadOwnedPipeline(pipelines, principal, pipelineId);
    assertCanWrite(principal);
    if (pipeline.rollout) {
      throw new ConflictError(
        `Rollout ${pipeline.rollout.id} is active on this pipeline: promote it or roll it back before activating another configuration.`,
      );
    }
    const [target, current] = await Promise.all([
      loadConfiguration(pipelines, pipelineId, configurationId),
      loadConfiguration(pipelines, pipelineId, pipeline.activeConfigurationId),
    ]);
    if (target.id === current.id) {
      throw new ConflictError(`Configuration ${target.id} (version ${target.version}) is already active.`);
    }
    if (target.source === 'synthesis') {
      const run = target.synthesisRunId ? await runs.get(target.synthesisRunId) : null;
      if (run?.status !== 'approved') {
        throw new ConflictError(
          `Configuration ${target.id} (version ${target.version}) is a proposal that was never approved${run ? ` (run ${run.id} is ${run.status})` : ''}: approve the run instead.`,
        );
      }
    }
    const activation: Activation = {
      id: ids.newId(),
      pipelineId,
      configurationId: target.id,
      version: target.version,
      previousConfigurationId: current.id,
      previousVersion: current.version,
      source: 'rollback',
      synthesisRunId: null,
      reason: reason ?? null,
      summary: `Restored version ${target.version} (replacing version ${current.version}).`,
      activatedAt: clock.now().toISOString(),
      activatedBy: principal.userId,
    };
    await pipelines.activateConfiguration(
      activation,
      activatedEvent(pipeline.teamId, activation, actorOf(principal)),
      { pipelineId, teamId: pipeline.teamId, active: target, rollout: null },
    );
    return activation;
  };
}

/** The pipeline's activation history, newest first. */
export function makeListActivations({ pipelines }: Pick<ActivationDeps, 'pipelines'>) {
  return async (principal: Principal, pipelineId: string, page: PageRequest) => {
    await loadOwnedPipeline(pipelines, principal, pipelineId);
    return pipelines.listActivations(pipelineId, page);
  };
}
