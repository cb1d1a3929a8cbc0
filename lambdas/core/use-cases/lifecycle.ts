/*
 * Data lifecycle use cases: a team's retention windows, the retention job, reading
 * a pipeline's records inside the windows, deleting a pipeline and reading its receipt, and the
 * deletion job's steps.
 */

import { ForbiddenError, NotFoundError } from '../errors.ts';
import { actorOf, newEvent } from '../events.ts';
import {
  type DeletionQueue,
  type DeletionReceipt,
  type DeletionStore,
  type ExportStore,
  emptyDeletionCounts,
  type RetentionStore,
  retentionWindow,
  type TeamSettings,
  type TeamSettingsPatch,
  type TeamSettingsStore,
  type WindowedEvidence,
} from '../lifecycle.ts';
import type { Clock, IdGenerator } from '../ports/common.ts';
import type { PipelineReads } from '../ports/pipelines.ts';
import type { RunRepository } from '../ports/runs.ts';
import { assertSameTeam, type Principal } from '../principal.ts';
import type { Pipeline } from '../schemas/pipelines.ts';
import { loadOwnedPipeline } from './pipelines.ts';

/** Only a team's admins change its settings or delete its pipelines. */
export function assertAdmin(principal: Principal, what: string): void {
  if (principal.role !== 'admin') {
    throw new ForbiddenError(`Only a team admin can ${what}; the ${principal.role} role cannot.`);
  }
}

/** The team's retention windows (any member of the team reads them). */
export function makeGetTeamSettings({ settings }: { settings: TeamSettingsStore }) {
  return async (principal: Principal, teamId: string): Promise<TeamSettings> => {
    assertSameTeam(principal, teamId);
    return settings.get(teamId);
  };
}

/** Changes the team's retention windows (admins); a shortened one is applied by the retention job. */
export function makeUpdateTeamSettings({
  settings,
  clock,
  ids,
}: {
  settings: TeamSettingsStore;
  clock: Clock;
  /** Names each team_settings.updated event (a change that repeats needs a fresh id each time). */
  ids: IdGenerator;
}) {
  return async (principal: Principal, teamId: string, patch: TeamSettingsPatch): Promise<TeamSettings> => {
    assertSameTeam(principal, teamId);
    assertAdmin(principal, "change the team's settings");
    const previous = await settings.get(teamId);
    const at = clock.now().toISOString();
    const next: TeamSettings = {
      ...previous,
      ...(patch.signalRetentionDays === undefined ? {} : { signalRetentionDays: patch.signalRetentionDays }),
      ...(patch.executionRetentionDays === undefined
        ? {}
        : { executionRetentionDays: patch.executionRetentionDays }),
      ...(patch.modelBudgetUsdPerMonth === undefined
        ? {}
        : { modelBudgetUsdPerMonth: patch.modelBudgetUsdPerMonth }),
      updatedAt: at,
      updatedBy: principal.userId,
    };
    await settings.put(
      next,
      previous,
      newEvent('team_settings.updated', { teamId, actor: actorOf(principal) }, { at, key: ids.newId() }),
    );
    return next;
  };
}

export interface WindowedEvidenceDeps {
  pipelines: PipelineReads;
  settings: TeamSettingsStore;
  clock: Clock;
}

/**
 * The pipeline's newest signals and executions inside the team's retention windows: the reads
 * every feature that looks at records uses (synthesis, an effect, an evaluation set), so nothing
 * older than a window is read again.
 */
export function makeReadWindowedEvidence({ pipelines, settings, clock }: WindowedEvidenceDeps) {
  return async (
    pipeline: Pick<Pipeline, 'id' | 'teamId'>,
    limits: { signals: number; executions: number },
  ): Promise<WindowedEvidence> => {
    const window = retentionWindow(await settings.get(pipeline.teamId), clock.now());
    const [signals, executions] = await Promise.all([
      limits.signals > 0 ? pipelines.recentSignals(pipeline.id, limits.signals, window.signalsSince) : [],
      limits.executions > 0
        ? pipelines.recentExecutions(pipeline.id, limits.executions, window.executionsSince)
        : [],
    ]);
    return { signals, executions };
  };
}

export interface ApplyRetentionDeps {
  retention: RetentionStore;
  settings: TeamSettingsStore;
  clock: Clock;
  /** Teams looked at per invocation. */
  teamsPerRun?: number;
}

/**
 * The retention job: for each team whose window was shortened, removes the older records of each
 * of its pipelines, checkpointing after each pipeline so that a stopped job resumes there.
 */
export function makeApplyRetention({ retention, settings, clock, teamsPerRun = 10 }: ApplyRetentionDeps) {
  // Stryker disable next-line ArrowFunction: a default returning undefined is as falsy as false (never stops)
  return async (shouldStop: () => boolean = () => false) => {
    let removed = 0;
    let teamsDone = 0;
    for (const team of await retention.dueTeams(teamsPerRun)) {
      const window = retentionWindow(await settings.get(team.teamId), clock.now());
      let cursor = team.pipelineCursor;
      let more = true;
      while (more) {
        const page = await retention.teamPipelines(team.teamId, cursor, 25);
        for (const pipeline of page.pipelines) {
          const result = await retention.removeOlder(pipeline.id, window, shouldStop);
          removed += result.removed;
          if (!result.finished) return { removed, teamsDone, finished: false };
          cursor = pipeline.cursor;
          await retention.checkpoint(team, cursor);
        }
        more = page.more;
      }
      await retention.finish(team);
      teamsDone++;
    }
    return { removed, teamsDone, finished: true };
  };
}

export interface DeletePipelineDeps {
  pipelines: PipelineReads;
  deletions: Pick<DeletionStore, 'start'>;
  queue: DeletionQueue;
  clock: Clock;
  ids: IdGenerator;
  /** Hides the pipeline's runs before the receipt is answered, so a poll of one is a 404 at once. */
  runs: Pick<RunRepository, 'hidePipelineRuns'>;
}

/** Deletes a pipeline (admins): it answers 404 from now on, and a queued job removes everything of it. */
export function makeDeletePipeline({ pipelines, deletions, queue, clock, ids, runs }: DeletePipelineDeps) {
  return async (principal: Principal, pipelineId: string): Promise<DeletionReceipt> => {
    const pipeline = await loadOwnedPipeline(pipelines, principal, pipelineId);
    assertAdmin(principal, 'delete a pipeline');
    const receipt: DeletionReceipt = {
      id: ids.newId(),
      pipelineId: pipeline.id,
      teamId: pipeline.teamId,
      status: 'pending',
      requestedAt: clock.now().toISOString(),
      requestedBy: principal.userId,
      completedAt: null,
      counts: emptyDeletionCounts(),
    };
    // The audit log keeps that the deletion happened and by whom: ids only, never content.
    await deletions.start(
      receipt,
      newEvent(
        'pipeline.deleted',
        { teamId: pipeline.teamId, pipelineId: pipeline.id, status: 'pending', actor: actorOf(principal) },
        { at: receipt.requestedAt, key: receipt.id },
      ),
    );
    // The pipeline is already gone for every reader; if the queue refused the job, the next
    // sweep of pending deletions (or a retry of this message) carries it on.
    await queue.send({ deletionId: receipt.id });
    // Its runs are hidden on the runs themselves (a poll reads only its run) before the receipt
    // is answered; the job is queued first, so a fault here still leaves them to be removed.
    await runs.hidePipelineRuns(pipeline.id, receipt.requestedAt);
    return receipt;
  };
}

/** A deletion's receipt, for the team that requested it. */
export function makeGetDeletion({ deletions }: { deletions: Pick<DeletionStore, 'get'> }) {
  return async (principal: Principal, deletionId: string): Promise<DeletionReceipt> => {
    const receipt = await deletions.get(deletionId);
    if (!receipt) throw new NotFoundError(`Deletion ${deletionId} does not exist.`);
    assertSameTeam(principal, receipt.teamId);
    return receipt;
  };
}

/**
 * The deletion job: bounded steps until `shouldStop` (the function's time running out), then
 * `continued` when there is more to do (the caller queues the job again).
 */
export function makeRunDeletion({
  deletions,
  clock,
}: {
  deletions: Pick<DeletionStore, 'step'>;
  clock: Clock;
}) {
  return async (deletionId: string, shouldStop: () => boolean) => {
    for (;;) {
      const { done, receipt } = await deletions.step(deletionId, clock.now().toISOString());
      if (done) return { outcome: 'completed' as const, receipt };
      if (shouldStop()) return { outcome: 'continued' as const, receipt };
    }
  };
}

/** Lambda answers at most 6 MB: a page stays under 5 MB, leaving room for the rest of the response. */
export const EXPORT_PAGE_BYTES = 5 * 1024 * 1024;

export interface ExportDeps {
  pipelines: PipelineReads;
  exports: ExportStore;
  settings: TeamSettingsStore;
  clock: Clock;
  pageBytes?: number;
}

/** One page of the export of a pipeline of the caller's team (404 once it is deleted). */
export function makeExportPipeline({
  pipelines,
  exports,
  settings,
  clock,
  pageBytes = EXPORT_PAGE_BYTES,
}: ExportDeps) {
  return async (principal: Principal, pipelineId: string, cursor: string | undefined) => {
    const pipeline = await loadOwnedPipeline(pipelines, principal, pipelineId);
    const window = retentionWindow(await settings.get(pipeline.teamId), clock.now());
    return exports.page(pipeline.id, cursor, window, pageBytes);
  };
}
