/*
 * Data lifecycle: a team's retention windows, the receipt of a pipeline's deletion,
 * their schemas and the ports their stores implement, and the window arithmetic every read of
 * signals and executions shares.
 */

import * as z from 'zod/mini';
import { ValidationError } from './errors.ts';
import type { DomainEvent } from './events.ts';
import { idSchema, timestampSchema } from './schemas/common.ts';
import type { Execution, Signal } from './schemas/records.ts';

export const RETENTION_DAYS = { min: 1, max: 3650, default: 90 } as const;
const DAY_MS = 86_400_000;

// In a function marked pure: the property reads and the message built from them would otherwise
// keep it in every bundle importing this module.
const retentionDaysSchema = /* @__PURE__ */ (() =>
  z
    .int()
    .check(
      z.gte(
        RETENTION_DAYS.min,
        `must be a whole number of days from ${RETENTION_DAYS.min} to ${RETENTION_DAYS.max}`,
      ),
      z.lte(
        RETENTION_DAYS.max,
        `must be a whole number of days from ${RETENTION_DAYS.min} to ${RETENTION_DAYS.max}`,
      ),
    ))();

/** The most a team's model budget may be set to, in USD a month. */
export const MAX_MODEL_BUDGET_USD = 1_000_000;

/** A month's model budget in USD: 0 (no model runs) up to MAX_MODEL_BUDGET_USD, or null for none. */
const modelBudgetSchema = /* @__PURE__ */ z.nullable(
  /* @__PURE__ */ z
    .number()
    .check(
      /* @__PURE__ */ z.gte(0, 'must be an amount in USD from 0 to 1000000, or null for no budget'),
      /* @__PURE__ */ z.lte(
        MAX_MODEL_BUDGET_USD,
        'must be an amount in USD from 0 to 1000000, or null for no budget',
      ),
    ),
);

export const teamSettingsSchema = /* @__PURE__ */ z.object({
  teamId: idSchema,
  signalRetentionDays: retentionDaysSchema,
  executionRetentionDays: retentionDaysSchema,
  /** What the team's synthesis runs may spend on the model per calendar month (UTC), in USD; null: no cap. */
  modelBudgetUsdPerMonth: /* @__PURE__ */ z._default(modelBudgetSchema, null),
  updatedAt: /* @__PURE__ */ z.nullable(timestampSchema),
  updatedBy: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
});
export type TeamSettings = z.infer<typeof teamSettingsSchema>;

export const updateTeamSettingsBodySchema = /* @__PURE__ */ z.strictObject({
  signalRetentionDays: /* @__PURE__ */ z.optional(retentionDaysSchema),
  executionRetentionDays: /* @__PURE__ */ z.optional(retentionDaysSchema),
  modelBudgetUsdPerMonth: /* @__PURE__ */ z.optional(modelBudgetSchema),
});
export type TeamSettingsPatch = z.infer<typeof updateTeamSettingsBodySchema>;

/** A team that never set its windows keeps records the default 90 days. */
export function defaultTeamSettings(teamId: string): TeamSettings {
  return {
    teamId,
    signalRetentionDays: RETENTION_DAYS.default,
    executionRetentionDays: RETENTION_DAYS.default,
    modelBudgetUsdPerMonth: null,
    updatedAt: null,
    updatedBy: null,
  };
}

/** The oldest record time still inside each window at `now`: the lower bound of every read. */
export interface RetentionWindow {
  signalsSince: string;
  executionsSince: string;
}

export function retentionWindow(settings: TeamSettings, now: Date): RetentionWindow {
  const since = (days: number) => new Date(now.getTime() - days * DAY_MS).toISOString();
  return {
    signalsSince: since(settings.signalRetentionDays),
    executionsSince: since(settings.executionRetentionDays),
  };
}

/** When a record of `recordTime` leaves a window of `days`, in epoch seconds (DynamoDB TTL). */
export function expiryEpoch(recordTime: string, days: number): number {
  return Math.ceil((Date.parse(recordTime) + days * DAY_MS) / 1000);
}

/**
 * A record already outside its window is refused (400 naming the window): it would never be read.
 * `times` are the records' own times (occurredAt / startedAt).
 */
export function assertInsideWindow(
  times: readonly { id: string; at: string }[],
  since: string,
  window: { what: 'signal' | 'execution'; days: number; field: string },
): void {
  const outside = times.filter((record) => record.at < since);
  if (outside.length === 0) return;
  throw new ValidationError(
    `These ${window.what}s are older than the team's ${window.what} retention window of ${window.days} days ` +
      `(${window.field} before ${since}) and would never be read: ${outside.map((record) => record.id).join(', ')}. ` +
      'Send newer records, or ask a team admin to lengthen the window (PATCH /teams/{teamId}/settings).',
    { details: { retentionDays: window.days, oldestAllowed: since } },
  );
}

export interface TeamSettingsStore {
  /** The team's settings, the defaults when it never set them. */
  get(teamId: string): Promise<TeamSettings>;
  /**
   * Stores the settings; when a window is shorter than `previous`, in the same transaction, marks
   * the team due for the retention job (which removes the records now outside it).
   */
  put(settings: TeamSettings, previous: TeamSettings, event: DomainEvent): Promise<void>;
}

/* ---- the retention job ---- */

export interface DueTeam {
  teamId: string;
  requestedAt: string;
  /** The gsi1 sort key of the last pipeline done, when the job stopped midway. */
  pipelineCursor: string | null;
}

export interface RetentionStore {
  dueTeams(limit: number): Promise<DueTeam[]>;
  /** One page of the team's pipelines after `cursor`, each with its own cursor. */
  teamPipelines(
    teamId: string,
    cursor: string | null,
    limit: number,
  ): Promise<{ pipelines: Array<{ id: string; cursor: string }>; more: boolean }>;
  /**
   * Removes the pipeline's signals and executions older than the window, and their id markers;
   * returns how many records it removed, or stops (`finished: false`) when `shouldStop` says so.
   */
  removeOlder(
    pipelineId: string,
    window: RetentionWindow,
    shouldStop: () => boolean,
  ): Promise<{ removed: number; finished: boolean }>;
  checkpoint(team: DueTeam, pipelineCursor: string): Promise<void>;
  /** The team is done, unless the window was shortened again meanwhile (then it stays due). */
  finish(team: DueTeam): Promise<void>;
}

/* ---- deleting a pipeline ---- */

export const deletionCountsSchema = /* @__PURE__ */ z.object({
  configurations: /* @__PURE__ */ z.int(),
  activations: /* @__PURE__ */ z.int(),
  rollouts: /* @__PURE__ */ z.int(),
  signals: /* @__PURE__ */ z.int(),
  executions: /* @__PURE__ */ z.int(),
  runs: /* @__PURE__ */ z.int(),
});
export type DeletionCounts = z.infer<typeof deletionCountsSchema>;

export const emptyDeletionCounts = (): DeletionCounts => ({
  configurations: 0,
  activations: 0,
  rollouts: 0,
  signals: 0,
  executions: 0,
  runs: 0,
});

/** The receipt of DELETE /pipelines/{pipelineId}, as GET /deletions/{id} shows it. */
export const deletionReceiptSchema = /* @__PURE__ */ z.object({
  id: idSchema,
  pipelineId: idSchema,
  teamId: idSchema,
  status: /* @__PURE__ */ z.enum(['pending', 'completed']),
  requestedAt: timestampSchema,
  requestedBy: /* @__PURE__ */ z.string(),
  completedAt: /* @__PURE__ */ z.nullable(timestampSchema),
  counts: deletionCountsSchema,
});
export type DeletionReceipt = z.infer<typeof deletionReceiptSchema>;

/** The job message that drives a deletion, step after step. */
export const deletionJobSchema = /* @__PURE__ */ z.strictObject({ deletionId: idSchema });
export type DeletionJob = z.infer<typeof deletionJobSchema>;

export interface DeletionStore {
  /**
   * Marks the pipeline deleted (from then on every read of it answers nothing) and stores the
   * pending receipt, in one transaction; a pipeline already deleted is a ConflictError.
   */
  /** Hides the pipeline and stores the receipt; `event` (pipeline.deleted) is written with them. */
  start(receipt: DeletionReceipt, event: DomainEvent): Promise<void>;
  get(deletionId: string): Promise<DeletionReceipt | null>;
  /** Ids of deletions still pending that were requested before `before` (a stalled job's). */
  pendingSince(before: string, limit: number): Promise<string[]>;
  /**
   * Removes one bounded batch of what is left; `done` once everything is removed and the receipt
   * is completed (at `at`). The counts are exact even when a step dies halfway.
   */
  step(deletionId: string, at: string): Promise<{ done: boolean; receipt: DeletionReceipt | null }>;
}

export interface DeletionQueue {
  send(job: DeletionJob): Promise<void>;
}

/* ---- export ---- */

/** One page of a pipeline's export: NDJSON lines, and the cursor of the next page (null at the end). */
export interface ExportPage {
  body: string;
  records: number;
  nextCursor: string | null;
}

export interface ExportStore {
  /** The page after `cursor`, at most `maxBytes`; records outside `window` are never read. */
  page(
    pipelineId: string,
    cursor: string | undefined,
    window: RetentionWindow,
    maxBytes: number,
  ): Promise<ExportPage>;
}

/** The records of a pipeline still inside the team's windows, newest first: the reads other features use. */
export interface WindowedEvidence {
  signals: Signal[];
  executions: Execution[];
}
