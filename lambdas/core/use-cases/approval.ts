/*
 * Approving a generated run, all of its changes or some, as it is or rebased onto the configuration
 * active now: the applied configuration becomes active, or starts a rollout, in one transaction
 * with the run's move to approved, once the pipeline's approval rules allow it.
 */

import { ConflictError } from '../errors.ts';
import { type Actor, actorOf, newEvent, runEvent } from '../events.ts';
import type { Clock, IdGenerator } from '../ports/common.ts';
import type { PipelineReads } from '../ports/pipelines.ts';
import type { ApprovalPlan, ApprovalRulesStore } from '../ports/review.ts';
import type { RolloutStore } from '../ports/rollouts.ts';
import type { RunRepository } from '../ports/runs.ts';
import { assertCanWrite, type Principal } from '../principal.ts';
import { DEFAULT_GUARDRAILS } from '../rollouts/guards.ts';
import { nothingToChange } from '../run-state.ts';
import type { Activation, Configuration, Pipeline } from '../schemas/pipelines.ts';
import type { ApproveBody } from '../schemas/review.ts';
import type { Rollout } from '../schemas/rollouts.ts';
import type { Change, SynthesisRun } from '../schemas/runs.ts';
import { activatedEvent } from './activations.ts';
import { enforceApprovalRules } from './approval-rules.ts';
import { loadConfiguration, loadOwnedPipeline } from './pipelines.ts';
import { applyChanges, chooseChanges, describeConflict, rebaseConflicts } from './rebase.ts';
import { makeGetSynthesisRun } from './synthesis.ts';

export interface ApproveDeps {
  runs: RunRepository;
  pipelines: PipelineReads;
  /** Configuration versions: an approval that applies some changes, or rebases, makes a new one. */
  rollouts: Pick<RolloutStore, 'nextConfigurationVersion'>;
  clock: Clock;
  ids: IdGenerator;
  /** The pipelines' approval rules; approve enforces them. */
  approvalRules: ApprovalRulesStore;
}

/** A rollout's minimum executions per arm before it is judged, when the approval names none. */
export const DEFAULT_ROLLOUT_MIN_EXECUTIONS = 200;

/**
 * Approves a generated run, all of its changes or some: the applied configuration becomes active,
 * or (with `rollout`) starts a rollout; with `rebase`, onto the configuration active now. One
 * transaction, conditioned on the active configuration not having moved and no rollout running.
 */
export function makeApproveRun(deps: ApproveDeps) {
  const { runs, pipelines, approvalRules } = deps;
  const getRun = makeGetSynthesisRun({ runs });
  return async (principal: Principal, runId: string, body: ApproveBody = {}): Promise<SynthesisRun> => {
    const run = await getRun(principal, runId);
    assertCanWrite(principal);
    const nothing = nothingToChange(run, 'to approve or roll out');
    if (nothing) throw nothing;
    // Stryker disable next-line ConditionalExpression,LogicalOperator: runs.approve refuses a run that is not generated with the same 409 naming its status; the check spares the reads
    if (run.status !== 'generated' || !run.proposedConfigurationId) {
      throw new ConflictError(`The run is ${run.status}; only a generated run can be approved.`);
    }
    const chosen = chooseChanges(run, body.changeIds);
    // The pipeline's approval rules, checked before anything is written (a new version included).
    const overrideReason = await enforceApprovalRules(
      approvalRules,
      principal,
      { act: 'approve', pipelineId: run.pipelineId, run, changeIds: chosen.map((change) => change.id) },
      body.override,
    );
    const [pipeline, base, proposed] = await Promise.all([
      loadOwnedPipeline(pipelines, principal, run.pipelineId),
      loadConfiguration(pipelines, run.pipelineId, run.baseConfigurationId),
      loadConfiguration(pipelines, run.pipelineId, run.proposedConfigurationId),
    ]);
    const onto = await configurationToApplyOnto(pipelines, {
      run,
      pipeline,
      base,
      chosen,
      rebase: body.rebase,
    });
    const at = deps.clock.now().toISOString();
    const approval = { run, principal, chosen, onto, at };
    const newConfiguration = await newConfigurationOf(deps, approval);
    const plan = planOf(deps, approval, {
      pipeline,
      applied: newConfiguration ?? proposed,
      body,
      overrideReason,
    });
    return runs.approve(
      run,
      { at, by: principal.userId, overrideReason },
      { ...plan, newConfiguration },
      approvalEvents(approval, plan),
    );
  };
}

/**
 * The configuration the chosen changes apply to: the run's base while it is still active, else
 * (with `rebase`) the active one, when no setting a change touches moved there since the base.
 */
async function configurationToApplyOnto(
  pipelines: PipelineReads,
  {
    run,
    pipeline,
    base,
    chosen,
    rebase,
  }: {
    run: SynthesisRun;
    pipeline: Pipeline;
    base: Configuration;
    chosen: Change[];
    rebase: boolean | undefined;
  },
): Promise<Configuration> {
  if (pipeline.rollout) {
    throw new ConflictError(
      `Rollout ${pipeline.rollout.id} is active on this pipeline: promote it or roll it back before approving another run.`,
    );
  }
  if (pipeline.activeConfigurationId === base.id) return base;
  if (!rebase) {
    throw new ConflictError(
      `The pipeline's active configuration is no longer ${base.id}, the base of this run; nothing was changed. ` +
        'Approve with "rebase": true to apply the chosen changes on top of the active configuration, or start a new synthesis run.',
    );
  }
  const onto = await loadConfiguration(pipelines, run.pipelineId, pipeline.activeConfigurationId);
  const conflicts = rebaseConflicts(base, onto, chosen);
  if (conflicts.length > 0) {
    throw new ConflictError(
      `The changes cannot be rebased onto version ${onto.version}: ${conflicts.map(describeConflict).join('; ')}. Nothing was changed.`,
      { details: { conflicts } },
    );
  }
  return onto;
}

/** What an approval decided: the run, who approves, the chosen changes, what they apply to, when. */
interface Approval {
  run: SynthesisRun;
  principal: Principal;
  chosen: Change[];
  onto: Configuration;
  at: string;
}

/** The configuration an approval makes: none when it applies the proposal as it is (every change, no rebase). */
async function newConfigurationOf(
  { rollouts, ids }: ApproveDeps,
  { run, principal, chosen, onto, at }: Approval,
): Promise<Configuration | null> {
  if (onto.id === run.baseConfigurationId && chosen.length === run.changes.length) return null;
  return {
    id: ids.newId(),
    pipelineId: run.pipelineId,
    version: await rollouts.nextConfigurationVersion(run.pipelineId),
    slots: applyChanges(onto.slots, chosen),
    source: 'synthesis',
    synthesisRunId: run.id,
    appliedChangeIds: chosen.map((change) => change.id),
    createdAt: at,
    createdBy: principal.userId,
  };
}

/** What the approval writes besides the new configuration: a rollout start or an activation, and serving. */
function planOf(
  { ids }: ApproveDeps,
  { run, principal, chosen, onto, at }: Approval,
  {
    pipeline,
    applied,
    body,
    overrideReason,
  }: { pipeline: Pipeline; applied: Configuration; body: ApproveBody; overrideReason: string | null },
): Omit<ApprovalPlan, 'newConfiguration'> {
  const rollout: Rollout | null = body.rollout
    ? {
        id: ids.newId(),
        pipelineId: run.pipelineId,
        synthesisRunId: run.id,
        baseConfigurationId: onto.id,
        candidateConfigurationId: applied.id,
        percent: body.rollout.percent,
        // Kept on every new rollout (the default when none is given): its counters keep moments.
        guardrails: body.rollout.guardrails ?? DEFAULT_GUARDRAILS,
        ...(body.rollout.steps ? { steps: body.rollout.steps, step: 0, stepStartedAt: at } : {}),
        minExecutions: body.rollout.minExecutions ?? DEFAULT_ROLLOUT_MIN_EXECUTIONS,
        autoPromote: body.rollout.autoPromote ?? false,
        autoRollback: body.rollout.autoRollback ?? true,
        status: 'active',
        startedAt: at,
        startedBy: principal.userId,
        endedAt: null,
        endedBy: null,
        endReason: null,
      }
    : null;
  const activation: Activation | null = rollout
    ? null
    : {
        id: ids.newId(),
        pipelineId: run.pipelineId,
        configurationId: applied.id,
        version: applied.version,
        previousConfigurationId: onto.id,
        previousVersion: onto.version,
        source: 'approval',
        synthesisRunId: run.id,
        reason: null,
        summary: `Approved synthesis run ${run.id}: version ${applied.version} replaces version ${onto.version}.`,
        activatedAt: at,
        activatedBy: principal.userId,
        overrideReason,
      };
  return {
    approvedChangeIds: chosen.map((change) => change.id),
    appliedConfigurationId: applied.id,
    activation,
    rollout,
    serving: {
      pipelineId: run.pipelineId,
      teamId: pipeline.teamId,
      active: rollout ? onto : applied,
      rollout: rollout ? { id: rollout.id, percent: rollout.percent, candidate: applied } : null,
    },
  };
}

/** synthesis_run.approved, and configuration.activated or rollout.started, written with the approval. */
function approvalEvents(
  { run, principal, at }: Approval,
  { activation, rollout, appliedConfigurationId }: Omit<ApprovalPlan, 'newConfiguration'>,
) {
  const actor: Actor = actorOf(principal);
  return [
    runEvent(run, 'approved', at, actor, { configurationId: appliedConfigurationId }),
    activation
      ? activatedEvent(run.teamId, activation, actor)
      : newEvent(
          'rollout.started',
          {
            teamId: run.teamId,
            pipelineId: run.pipelineId,
            runId: run.id,
            rolloutId: rollout?.id,
            configurationId: appliedConfigurationId,
            status: 'active',
            // The candidate's first share, for people (a chart's annotation, a Slack message).
            percent: rollout?.percent,
            actor,
          },
          { at, key: rollout?.id ?? run.id },
        ),
  ];
}
