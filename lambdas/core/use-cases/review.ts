/* The reviewer's use cases: approve or reject a generated run, list runs, activate or roll back
   a configuration, list activations and show a run's settings diff. */
import { applyMergePatch } from '../../synthesis/merge-patch.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import { type Actor, actorOf, type DomainEvent, newEvent, runEvent } from '../events.ts';
import type { Clock, IdGenerator, PageRequest } from '../ports/common.ts';
import type { PipelineRepository } from '../ports/pipelines.ts';
import type { ApprovalRulesStore } from '../ports/review.ts';
import type { RolloutRepository } from '../ports/rollouts.ts';
import type { RunRepository } from '../ports/runs.ts';
import { assertCanWrite, type Principal } from '../principal.ts';
import type { Activation, Configuration, Slot } from '../schemas/pipelines.ts';
import type { ApproveBody } from '../schemas/review.ts';
import type { Rollout } from '../schemas/rollouts.ts';
import type { Change, RunStatus, SynthesisRun } from '../schemas/runs.ts';
import { enforceApprovalRules } from './approval-rules.ts';
import { loadOwnedPipeline } from './pipelines.ts';
import { makeGetSynthesisRun } from './synthesis.ts';

export interface ReviewDeps {
  runs: RunRepository;
  pipelines: PipelineRepository;
  clock: Clock;
  ids: IdGenerator;
  /** The pipelines' approval rules; approve enforces them. */
  approvalRules: ApprovalRulesStore;
}

/** configuration.activated for `activation`, in the pipeline's team. */
function activatedEvent(teamId: string, activation: Activation, actor: Actor): DomainEvent {
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

async function loadConfiguration(pipelines: PipelineRepository, pipelineId: string, configurationId: string) {
  const configuration = await pipelines.getConfiguration(pipelineId, configurationId);
  if (!configuration) {
    throw new NotFoundError(`Configuration ${configurationId} of pipeline ${pipelineId} does not exist.`);
  }
  return configuration;
}

/** What approving needs besides the review deps: configuration versions and the rollout store. */
export interface ApproveDeps extends ReviewDeps {
  rollouts: Pick<RolloutRepository, 'nextConfigurationVersion'>;
}

/** The run's changes named by `changeIds` (all when absent), in the run's order; a 400 for an unknown id. */
export function chooseChanges(run: SynthesisRun, changeIds: string[] | undefined): Change[] {
  if (changeIds === undefined) return run.changes;
  const known = new Set(run.changes.map((change) => change.id));
  const unknown = changeIds.filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new ValidationError(
      `The run has no change ${unknown.join(', ')}; its changes are ${[...known].join(', ') || 'none'}.`,
      { details: [{ path: ['changeIds'], message: `unknown change ids: ${unknown.join(', ')}` }] },
    );
  }
  const chosen = new Set(changeIds);
  return run.changes.filter((change) => chosen.has(change.id));
}

/** A settings key a rebase cannot carry over: it moved elsewhere in the active configuration. */
export interface RebaseConflict {
  slotId: string;
  key: string;
  base: unknown;
  active: unknown;
  proposed: unknown;
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** The chosen changes' patches applied, in the run's order, to a configuration's slots. */
export function applyChanges(slots: Slot[], changes: Change[]): Slot[] {
  return slots.map((slot) => {
    let settings = slot.settings;
    for (const change of changes) {
      if (change.slotId === slot.id) settings = applyMergePatch(settings, change.patch) as Slot['settings'];
    }
    return { ...slot, settings };
  });
}

/**
 * The keys a rebase onto `active` would overwrite although they moved since `base`: for every
 * top-level key a chosen patch sets, the active value must equal the base's or already the
 * proposed one, and the slot must still exist.
 */
export function rebaseConflicts(
  base: Configuration,
  active: Configuration,
  changes: Change[],
): RebaseConflict[] {
  const proposedSlots = new Map(applyChanges(base.slots, changes).map((slot) => [slot.id, slot]));
  const baseSlots = new Map(base.slots.map((slot) => [slot.id, slot]));
  const activeSlots = new Map(active.slots.map((slot) => [slot.id, slot]));
  const seen = new Set<string>();
  const conflicts: RebaseConflict[] = [];
  for (const change of changes) {
    for (const key of Object.keys(change.patch)) {
      const where = `${change.slotId}\u0000${key}`;
      if (seen.has(where)) continue;
      seen.add(where);
      const was = baseSlots.get(change.slotId)?.settings[key] ?? null;
      const proposed = proposedSlots.get(change.slotId)?.settings[key] ?? null;
      const activeSlot = activeSlots.get(change.slotId);
      const now = activeSlot?.settings[key] ?? null;
      if (activeSlot && (sameValue(now, was) || sameValue(now, proposed))) continue;
      conflicts.push({ slotId: change.slotId, key, base: was, active: activeSlot ? now : null, proposed });
    }
  }
  return conflicts;
}

function describeConflict(conflict: RebaseConflict): string {
  const show = (value: unknown) => JSON.stringify(value);
  return `${conflict.slotId}.${conflict.key} was ${show(conflict.base)} in the run's base, is ${show(conflict.active)} now and would become ${show(conflict.proposed)}`;
}

/**
 * Approves a generated run, all of its changes or some: the applied configuration becomes active,
 * or (with `rollout`) starts a rollout; with `rebase`, onto the configuration active now. One
 * transaction, conditioned on the active configuration not having moved and no rollout running.
 */
export function makeApproveRun({ runs, pipelines, rollouts, clock, ids, approvalRules }: ApproveDeps) {
  const getRun = makeGetSynthesisRun({ runs });
  return async (principal: Principal, runId: string, body: ApproveBody = {}): Promise<SynthesisRun> => {
    const run = await getRun(principal, runId);
    assertCanWrite(principal);
    // Stryker disable next-line ConditionalExpression: runs.approve refuses a run that is not generated with the same 409 naming its status; the check spares the reads
    if (run.status !== 'generated' || !run.proposedConfigurationId) {
      throw new ConflictError(`The run is ${run.status}; only a generated run can be approved.`);
    }
    const chosen = chooseChanges(run, body.changeIds);
    // The pipeline's approval rules, checked before anything is written (a new version included).
    const overrideReason = await enforceApprovalRules(approvalRules, principal, run, body.override);
    const [pipeline, base, proposed] = await Promise.all([
      loadOwnedPipeline(pipelines, principal, run.pipelineId),
      loadConfiguration(pipelines, run.pipelineId, run.baseConfigurationId),
      loadConfiguration(pipelines, run.pipelineId, run.proposedConfigurationId),
    ]);
    if (pipeline.rollout) {
      throw new ConflictError(
        `Rollout ${pipeline.rollout.id} is active on this pipeline: promote it or roll it back before approving another run.`,
      );
    }
    let onto = base;
    if (pipeline.activeConfigurationId !== base.id) {
      if (!body.rebase) {
        throw new ConflictError(
          `The pipeline's active configuration is no longer ${base.id}, the base of this run; nothing was changed. ` +
            'Approve with "rebase": true to apply the chosen changes on top of the active configuration, or start a new synthesis run.',
        );
      }
      onto = await loadConfiguration(pipelines, run.pipelineId, pipeline.activeConfigurationId);
      const conflicts = rebaseConflicts(base, onto, chosen);
      if (conflicts.length > 0) {
        throw new ConflictError(
          `The changes cannot be rebased onto version ${onto.version}: ${conflicts.map(describeConflict).join('; ')}. Nothing was changed.`,
          { details: { conflicts } },
        );
      }
    }
    const at = clock.now().toISOString();
    const asProposed = onto.id === base.id && chosen.length === run.changes.length;
    const newConfiguration: Configuration | null = asProposed
      ? null
      : {
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
    const applied = newConfiguration ?? proposed;
    const rollout: Rollout | null = body.rollout
      ? {
          id: ids.newId(),
          pipelineId: run.pipelineId,
          synthesisRunId: run.id,
          baseConfigurationId: onto.id,
          candidateConfigurationId: applied.id,
          percent: body.rollout.percent,
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
        };
    const actor = actorOf(principal);
    const events = [
      runEvent(run, 'approved', at, actor, { configurationId: applied.id }),
      activation
        ? activatedEvent(run.teamId, activation, actor)
        : newEvent(
            'rollout.started',
            {
              teamId: run.teamId,
              pipelineId: run.pipelineId,
              runId: run.id,
              rolloutId: rollout?.id,
              configurationId: applied.id,
              status: 'active',
              actor,
            },
            { at, key: rollout?.id ?? run.id },
          ),
    ];
    return runs.approve(
      run,
      { at, by: principal.userId, overrideReason },
      {
        approvedChangeIds: chosen.map((change) => change.id),
        appliedConfigurationId: applied.id,
        newConfiguration,
        activation,
        rollout,
        serving: {
          pipelineId: run.pipelineId,
          teamId: pipeline.teamId,
          active: rollout ? onto : applied,
          rollout: rollout ? { id: rollout.id, percent: rollout.percent, candidate: applied } : null,
        },
      },
      events,
    );
  };
}

/** A rollout's minimum executions per arm before it is judged, when the approval names none. */
export const DEFAULT_ROLLOUT_MIN_EXECUTIONS = 200;

/** Rejects a generated run, keeping the reviewer's reason. */
export function makeRejectRun({ runs, clock }: Pick<ReviewDeps, 'runs' | 'clock'>) {
  const getRun = makeGetSynthesisRun({ runs });
  return async (principal: Principal, runId: string, reason: string | undefined): Promise<SynthesisRun> => {
    const run = await getRun(principal, runId);
    assertCanWrite(principal);
    // Stryker disable next-line ConditionalExpression,BlockStatement: runs.reject refuses a run that is not generated with the same 409 naming its status
    if (run.status !== 'generated') {
      throw new ConflictError(`The run is ${run.status}; only a generated run can be rejected.`);
    }
    const at = clock.now().toISOString();
    return runs.reject(
      run,
      { at, by: principal.userId, reason: reason ?? null },
      runEvent(run, 'rejected', at, actorOf(principal)),
    );
  };
}

/** A pipeline's runs, newest first, optionally filtered by status. */
export function makeListRuns({ runs, pipelines }: Pick<ReviewDeps, 'runs' | 'pipelines'>) {
  return async (principal: Principal, pipelineId: string, page: PageRequest, status?: RunStatus) => {
    await loadOwnedPipeline(pipelines, principal, pipelineId);
    return runs.listByPipeline(pipelineId, page, { status });
  };
}

/** Rolls a pipeline back (or forward) to one of its configurations, recording who, when and why. */
/**
 * Activates an earlier configuration (a rollback, or forward again). Only a configuration that was
 * active before may be restored: a manual one (active from its creation) or the proposal of an
 * approved run. A proposal nobody approved is a 409: approving its run is how it becomes active,
 * with the review that implies.
 */
export function makeActivateConfiguration({
  runs,
  pipelines,
  clock,
  ids,
}: Pick<ReviewDeps, 'runs' | 'pipelines' | 'clock' | 'ids'>) {
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
export function makeListActivations({ pipelines }: Pick<ReviewDeps, 'pipelines'>) {
  return async (principal: Principal, pipelineId: string, page: PageRequest) => {
    await loadOwnedPipeline(pipelines, principal, pipelineId);
    return pipelines.listActivations(pipelineId, page);
  };
}

export interface SlotDiff {
  slotId: string;
  name: string;
  kind: string;
  status: 'changed' | 'unchanged' | 'added' | 'removed';
  /** Settings keys whose value differs, with both values (`null` for absent). */
  settings: Array<{ key: string; before: unknown; after: unknown }>;
  changeIds: string[];
}

export interface RunDiff {
  runId: string;
  base: Pick<Configuration, 'id' | 'version'>;
  proposed: Pick<Configuration, 'id' | 'version'>;
  slots: SlotDiff[];
}

function settingsDiff(before: Slot['settings'], after: Slot['settings']) {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys.flatMap((key) => {
    const was = before[key] ?? null;
    const now = after[key] ?? null;
    return JSON.stringify(was) === JSON.stringify(now) ? [] : [{ key, before: was, after: now }];
  });
}

/** Base and proposed configurations of a generated run, compared slot by slot. */
export function makeDiffRun({ runs, pipelines }: Pick<ReviewDeps, 'runs' | 'pipelines'>) {
  const getRun = makeGetSynthesisRun({ runs });
  return async (principal: Principal, runId: string): Promise<RunDiff> => {
    const run = await getRun(principal, runId);
    if (!run.proposedConfigurationId) {
      throw new ConflictError(`The run is ${run.status}; it has no proposal to compare yet.`);
    }
    const [base, proposed] = await Promise.all([
      loadConfiguration(pipelines, run.pipelineId, run.baseConfigurationId),
      loadConfiguration(pipelines, run.pipelineId, run.proposedConfigurationId),
    ]);
    const proposedById = new Map(proposed.slots.map((slot) => [slot.id, slot]));
    const baseIds = new Set(base.slots.map((slot) => slot.id));
    const changeIdsOf = (slotId: string) =>
      run.changes.filter((change) => change.slotId === slotId).map((change) => change.id);
    const slots: SlotDiff[] = base.slots.map((slot) => {
      const after = proposedById.get(slot.id);
      if (!after)
        return { ...describe(slot), status: 'removed', settings: [], changeIds: changeIdsOf(slot.id) };
      const settings = settingsDiff(slot.settings, after.settings);
      return {
        ...describe(slot),
        status: settings.length > 0 ? 'changed' : 'unchanged',
        settings,
        changeIds: changeIdsOf(slot.id),
      };
    });
    for (const slot of proposed.slots) {
      if (!baseIds.has(slot.id)) {
        slots.push({ ...describe(slot), status: 'added', settings: [], changeIds: changeIdsOf(slot.id) });
      }
    }
    return {
      runId: run.id,
      base: { id: base.id, version: base.version },
      proposed: { id: proposed.id, version: proposed.version },
      slots,
    };
  };
}

function describe(slot: Slot) {
  return { slotId: slot.id, name: slot.name, kind: slot.kind };
}
