/* The reviewer's reads and refusal: a pipeline's runs, a run's settings diff, and rejecting a run. */
import { ConflictError } from '../errors.ts';
import { actorOf, runEvent } from '../events.ts';
import type { Clock, PageRequest } from '../ports/common.ts';
import type { PipelineReads } from '../ports/pipelines.ts';
import type { RunRepository } from '../ports/runs.ts';
import { assertCanWrite, type Principal } from '../principal.ts';
import { nothingToChange } from '../run-state.ts';
import type { Configuration, Slot } from '../schemas/pipelines.ts';
import type { RunStatus, SynthesisRun } from '../schemas/runs.ts';
import { loadConfiguration, loadOwnedPipeline } from './pipelines.ts';
import { makeGetSynthesisRun } from './synthesis.ts';

export interface ReviewDeps {
  runs: RunRepository;
  pipelines: PipelineReads;
  clock: Clock;
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
    const nothing = nothingToChange(run, 'to compare');
    if (nothing) throw nothing;
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
