/* The reviewer's use cases: approve or reject a generated run, list runs, activate or roll back
   a configuration, list activations and show a run's settings diff. */
import { ConflictError, NotFoundError } from '../errors.ts';
import { type Actor, actorOf, type DomainEvent, newEvent, runEvent } from '../events.ts';
import type { Clock, IdGenerator, PageRequest, PipelineRepository, RunRepository } from '../ports.ts';
import { assertCanWrite, type Principal } from '../principal.ts';
import type { Activation, Configuration, RunStatus, Slot, SynthesisRun } from '../schemas.ts';
import { loadOwnedPipeline } from './pipelines.ts';
import { makeGetSynthesisRun } from './synthesis.ts';

export interface ReviewDeps {
  runs: RunRepository;
  pipelines: PipelineRepository;
  clock: Clock;
  ids: IdGenerator;
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

/** Approves a generated run: the proposal becomes the pipeline's active configuration, atomically. */
export function makeApproveRun({ runs, pipelines, clock, ids }: ReviewDeps) {
  const getRun = makeGetSynthesisRun({ runs });
  return async (principal: Principal, runId: string): Promise<SynthesisRun> => {
    const run = await getRun(principal, runId);
    assertCanWrite(principal);
    // Stryker disable next-line ConditionalExpression: runs.approve refuses a run that is not generated with the same 409 naming its status; the check spares the reads
    if (run.status !== 'generated' || !run.proposedConfigurationId) {
      throw new ConflictError(`The run is ${run.status}; only a generated run can be approved.`);
    }
    const [base, proposed] = await Promise.all([
      loadConfiguration(pipelines, run.pipelineId, run.baseConfigurationId),
      loadConfiguration(pipelines, run.pipelineId, run.proposedConfigurationId),
    ]);
    const at = clock.now().toISOString();
    const activation: Activation = {
      id: ids.newId(),
      pipelineId: run.pipelineId,
      configurationId: proposed.id,
      version: proposed.version,
      previousConfigurationId: base.id,
      previousVersion: base.version,
      source: 'approval',
      synthesisRunId: run.id,
      reason: null,
      summary: `Approved synthesis run ${run.id}: version ${proposed.version} replaces version ${base.version}.`,
      activatedAt: at,
      activatedBy: principal.userId,
    };
    const actor = actorOf(principal);
    return runs.approve(run, { at, by: principal.userId }, activation, [
      runEvent(run, 'approved', at, actor, { configurationId: proposed.id }),
      activatedEvent(run.teamId, activation, actor),
    ]);
  };
}

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
export function makeActivateConfiguration({ runs, pipelines, clock, ids }: ReviewDeps) {
  return async (
    principal: Principal,
    pipelineId: string,
    configurationId: string,
    reason: string | undefined,
  ): Promise<Activation> => {
    const pipeline = await loadOwnedPipeline(pipelines, principal, pipelineId);
    assertCanWrite(principal);
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
