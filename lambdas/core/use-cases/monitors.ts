/*
 * A pipeline's monitors: create, list, read, change and delete (admins and members write, viewers
 * read). The judge (monitor-judge.ts) sets their state.
 */
import { NotFoundError, ValidationError } from '../errors.ts';
import type { Clock, IdGenerator, PageRequest } from '../ports/common.ts';
import type { MonitorChanges, MonitorRepository } from '../ports/monitors.ts';
import type { PipelineReads } from '../ports/pipelines.ts';
import { assertCanWrite, type Principal } from '../principal.ts';
import type { Page } from '../schemas/common.ts';
import {
  type CreateMonitorBody,
  definitionProblem,
  MAX_MONITORS_PER_PIPELINE,
  type Monitor,
  type MonitorRecord,
  type UpdateMonitorBody,
} from '../schemas/monitors.ts';
import { loadOwnedPipeline } from './pipelines.ts';

export interface MonitorDeps {
  pipelines: PipelineReads;
  monitors: MonitorRepository;
  clock: Clock;
  ids: IdGenerator;
}

/** The monitor as the API shows it (its team and state counter stay inside). */
export function toMonitor({ teamId: _team, stateSeq: _seq, ...monitor }: MonitorRecord): Monitor {
  return monitor;
}

function assertDefinition(definition: Parameters<typeof definitionProblem>[0]): void {
  const problem = definitionProblem(definition);
  if (problem) throw new ValidationError(problem);
}

async function ownMonitor(deps: Pick<MonitorDeps, 'monitors'>, pipelineId: string, monitorId: string) {
  const monitor = await deps.monitors.get(pipelineId, monitorId);
  if (!monitor) throw new NotFoundError(`Monitor ${monitorId} of pipeline ${pipelineId} does not exist.`);
  return monitor;
}

/** Creates a monitor of a pipeline of the caller's team: no_data until its first judgement. */
export function makeCreateMonitor(deps: MonitorDeps) {
  return async (principal: Principal, pipelineId: string, body: CreateMonitorBody): Promise<Monitor> => {
    assertCanWrite(principal);
    const pipeline = await loadOwnedPipeline(deps.pipelines, principal, pipelineId);
    const kind = body.kind ?? null;
    assertDefinition({ metric: body.metric, kind, threshold: body.threshold });
    const now = deps.clock.now().toISOString();
    const record: MonitorRecord = {
      // Time-ordered ids: a pipeline's monitors list newest first.
      id: `${Date.parse(now).toString(36).padStart(9, '0')}${deps.ids.newId()}`,
      pipelineId,
      teamId: pipeline.teamId,
      name: body.name,
      metric: body.metric,
      kind,
      comparator: body.comparator,
      threshold: body.threshold,
      windowMinutes: body.windowMinutes,
      minExecutions: body.minExecutions ?? 1,
      state: 'no_data',
      since: now,
      lastValue: null,
      judgedAt: null,
      createdAt: now,
      createdBy: principal.userId,
      updatedAt: now,
      stateSeq: 0,
    };
    await deps.monitors.create(record, MAX_MONITORS_PER_PIPELINE);
    return toMonitor(record);
  };
}

/** A pipeline's monitors with their state, newest first. */
export function makeListMonitors(deps: Pick<MonitorDeps, 'pipelines' | 'monitors'>) {
  return async (principal: Principal, pipelineId: string, page: PageRequest): Promise<Page<Monitor>> => {
    await loadOwnedPipeline(deps.pipelines, principal, pipelineId);
    const found = await deps.monitors.list(pipelineId, page);
    return { items: found.items.map(toMonitor), nextCursor: found.nextCursor };
  };
}

/** One monitor with its state. */
export function makeGetMonitor(deps: Pick<MonitorDeps, 'pipelines' | 'monitors'>) {
  return async (principal: Principal, pipelineId: string, monitorId: string): Promise<Monitor> => {
    await loadOwnedPipeline(deps.pipelines, principal, pipelineId);
    return toMonitor(await ownMonitor(deps, pipelineId, monitorId));
  };
}

/** Changes a monitor's definition; its state stays until the next judgement (within a minute). */
export function makeUpdateMonitor(deps: Pick<MonitorDeps, 'pipelines' | 'monitors' | 'clock'>) {
  return async (
    principal: Principal,
    pipelineId: string,
    monitorId: string,
    body: UpdateMonitorBody,
  ): Promise<Monitor> => {
    assertCanWrite(principal);
    await loadOwnedPipeline(deps.pipelines, principal, pipelineId);
    const current = await ownMonitor(deps, pipelineId, monitorId);
    const changes: MonitorChanges = { updatedAt: deps.clock.now().toISOString() };
    for (const field of [
      'name',
      'metric',
      'comparator',
      'threshold',
      'windowMinutes',
      'minExecutions',
    ] as const) {
      if (body[field] !== undefined) Object.assign(changes, { [field]: body[field] });
    }
    if (body.kind !== undefined) changes.kind = body.kind;
    assertDefinition({
      metric: changes.metric ?? current.metric,
      kind: changes.kind !== undefined ? changes.kind : current.kind,
      threshold: changes.threshold ?? current.threshold,
    });
    return toMonitor(await deps.monitors.update(pipelineId, monitorId, changes));
  };
}

/** Deletes a monitor: it is judged no more. */
export function makeDeleteMonitor(deps: Pick<MonitorDeps, 'pipelines' | 'monitors'>) {
  return async (principal: Principal, pipelineId: string, monitorId: string): Promise<void> => {
    assertCanWrite(principal);
    await loadOwnedPipeline(deps.pipelines, principal, pipelineId);
    await deps.monitors.remove(pipelineId, monitorId);
  };
}
