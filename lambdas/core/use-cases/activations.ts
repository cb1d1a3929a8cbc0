/*
 * A pipeline's activations: restoring an earlier configuration (a rollback, or forward again) and
 * the history of what was active when, with the event every activation writes.
 */
import { ConflictError } from '../errors.ts';
import { type Actor, actorOf, type DomainEvent, newEvent } from '../events.ts';
import type { Clock, IdGenerator, PageRequest } from '../ports/common.ts';
import type { ConfigurationHistory, PipelineReads, PipelineRepository } from '../ports/pipelines.ts';
import type { ApprovalRulesStore } from '../ports/review.ts';
import type { RunRepository } from '../ports/runs.ts';
import { assertCanWrite, type Principal } from '../principal.ts';
import type { ActivateBody, Activation } from '../schemas/pipelines.ts';
import { enforceApprovalRules } from './approval-rules.ts';
import { loadConfiguration, loadOwnedPipeline } from './pipelines.ts';

export interface ActivationDeps {
  runs: RunRepository;
  pipelines: PipelineRepository;
  approvalRules: ApprovalRulesStore;
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
      ...(activation.overrideReason ? { overrideReason: activation.overrideReason } : {}),
      actor,
    },
    { at: activation.activatedAt, key: activation.id },
  );
}

/**
 * Activates a configuration by hand (a rollback, or forward again). Only a configuration that was
 * active before may be restored (the activation history says so): anything else becomes active by
 * approving its run, with the review that implies. The pipeline's approval rules apply as they do
 * to approval (API tokens, self-approval, the evaluation of the run it came from), and a candidate
 * a rollout rolled back comes back only with an admin's stated override, recorded.
 */
export function makeActivateConfiguration(deps: ActivationDeps) {
  const { pipelines, clock, ids } = deps;
  return async (
    principal: Principal,
    pipelineId: string,
    configurationId: string,
    { reason, override }: ActivateBody,
  ): Promise<Activation> => {
    const pipeline = await loadOwnedPipeline(pipelines, principal, pipelineId);
    assertCanWrite(principal);
    if (pipeline.rollout) {
      throw new ConflictError(
        `Rollout ${pipeline.rollout.id} is active on this pipeline: promote it or roll it back before activating another configuration.`,
      );
    }
    const [target, current, history] = await Promise.all([
      loadConfiguration(pipelines, pipelineId, configurationId),
      loadConfiguration(pipelines, pipelineId, pipeline.activeConfigurationId),
      pipelines.configurationHistory(pipelineId, configurationId),
    ]);
    if (target.id === current.id) {
      throw new ConflictError(`Configuration ${target.id} (version ${target.version}) is already active.`);
    }
    const run = target.synthesisRunId ? await deps.runs.get(target.synthesisRunId) : null;
    if (!history.wasActive && !history.rolledBack) {
      throw new ConflictError(
        `Configuration ${target.id} (version ${target.version}) was never active, so there is nothing to restore${run ? `: it comes from synthesis run ${run.id} (${run.status}); approve that run (its changes you choose) to make a configuration of it active` : ''}.`,
      );
    }
    const overrideReason = await enforceApprovalRules(
      deps.approvalRules,
      principal,
      { act: 'activate', pipelineId, run, changeIds: target.appliedChangeIds },
      override,
    );
    if (history.rolledBack && !override) {
      throw new ConflictError(
        `Configuration ${target.id} (version ${target.version}) was the candidate of rollout ${history.rolledBack.id}, which was rolled back: only a team admin may bring it back, stating why with "override": {"reason": "…"}.`,
      );
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
      summary: summaryOf(target.version, current.version, history),
      activatedAt: clock.now().toISOString(),
      activatedBy: principal.userId,
      overrideReason,
    };
    await pipelines.activateConfiguration(
      activation,
      activatedEvent(pipeline.teamId, activation, actorOf(principal)),
      { pipelineId, teamId: pipeline.teamId, active: target, rollout: null },
    );
    return activation;
  };
}

/** What the activation did, in words that claim nothing the history does not say. */
function summaryOf(version: number, previous: number, history: ConfigurationHistory): string {
  if (history.wasActive) return `Restored version ${version} (replacing version ${previous}).`;
  return `Activated version ${version} (replacing version ${previous}), the candidate rollout ${history.rolledBack?.id} rolled back, by an admin's override.`;
}

/** The pipeline's activation history, newest first. */
export function makeListActivations({ pipelines }: { pipelines: PipelineReads }) {
  return async (principal: Principal, pipelineId: string, page: PageRequest) => {
    await loadOwnedPipeline(pipelines, principal, pipelineId);
    return pipelines.listActivations(pipelineId, page);
  };
}
