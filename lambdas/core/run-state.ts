/*
 * The run's status rules, in one table: every status write of the run store is conditioned on it
 * (store/run-table.ts moveCondition), and a new run starts from newPendingRun.
 */
import { ConflictError } from './errors.ts';
import { type RunStatus, runStatusSchema, type SynthesisRun } from './schemas/runs.ts';

/**
 * The run state machine. `generating → generating` is a re-claim of a run whose worker died
 * (its lease ran out); `generating → pending` releases an attempt that hit a transient fault, so
 * its retry seconds later can claim it; approved, rejected and failed runs never move.
 */
const TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  pending: ['generating', 'failed'],
  generating: ['pending', 'generating', 'generated', 'failed'],
  generated: ['approved', 'rejected'],
  approved: [],
  rejected: [],
  failed: [],
};

/** The statuses a run may be in for a move to `to` to be legal: the store's write condition. */
export function statusesAllowedBefore(to: RunStatus): RunStatus[] {
  return runStatusSchema.options.filter((from) => TRANSITIONS[from].includes(to));
}

export type NewRunFields = Pick<
  SynthesisRun,
  | 'id'
  | 'pipelineId'
  | 'teamId'
  | 'synthesisHandler'
  | 'baseConfigurationId'
  | 'jobId'
  | 'createdAt'
  | 'triggeredBy'
> & {
  parentRunId?: string | null;
  rootRunId?: string | null;
  estimatedCostUsd?: number | null;
};

/** A run as it starts: `pending`, with every result field empty. */
export function newPendingRun({
  parentRunId = null,
  rootRunId = null,
  estimatedCostUsd = null,
  ...fields
}: NewRunFields): SynthesisRun {
  return {
    ...fields,
    parentRunId,
    rootRunId,
    estimatedCostUsd,
    costUsd: null,
    status: 'pending',
    proposedConfigurationId: null,
    explanation: '',
    warnings: [],
    diagnosis: null,
    changes: [],
    structuredWarnings: [],
    confidence: null,
    analyzedSignalIds: [],
    analyzedExecutionIds: [],
    errorMessage: null,
    generationStartedAt: null,
    generationCompletedAt: null,
    approvedAt: null,
    approvedBy: null,
    rejectedAt: null,
    rejectedBy: null,
    rejectionReason: null,
    retryReason: null,
    usage: null,
    approvedChangeIds: null,
    appliedConfigurationId: null,
    rolloutId: null,
  };
}

/**
 * The 409 for acting on a proposal that a generated run does not have: it found nothing to change
 * (no change kept, `proposedConfigurationId` null), so there is nothing to approve, evaluate, roll
 * out or compare, and nothing is written. Undefined for a run with a proposal.
 */
export function nothingToChange(run: SynthesisRun, action: string): ConflictError | undefined {
  if (run.status !== 'generated' || run.proposedConfigurationId !== null) return undefined;
  return new ConflictError(
    `Run ${run.id} found nothing to change in the configuration (it proposes no change), so there is nothing ${action}; nothing was written. ` +
      'Reject it to close it, or start a new run once the pipeline has recorded new signals.',
  );
}
