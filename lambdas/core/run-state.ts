import { ConflictError } from './errors.ts';
import type { RunStatus, SynthesisRun } from './schemas.ts';

/**
 * The run state machine. `generating → generating` is a re-claim of a run whose worker died
 * (its lease ran out); `generating → pending` releases an attempt that hit a transient fault, so
 * its retry seconds later can claim it; terminal states never move.
 */
const TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  pending: ['generating', 'failed'],
  generating: ['pending', 'generating', 'generated', 'failed'],
  generated: ['approved', 'rejected'],
  approved: [],
  rejected: [],
  failed: [],
};

export const TERMINAL_STATUSES: readonly RunStatus[] = ['approved', 'rejected', 'failed'];

export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** The statuses a run may be in for a move to `to` to be legal: the store's write condition. */
export function statusesAllowedBefore(to: RunStatus): RunStatus[] {
  return (Object.keys(TRANSITIONS) as RunStatus[]).filter((from) => TRANSITIONS[from].includes(to));
}

export function assertTransition(from: RunStatus, to: RunStatus): void {
  if (!canTransition(from, to)) {
    throw new ConflictError(`The run is ${from}; it cannot become ${to}.`);
  }
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
>;

/** A run as it starts: `pending`, with every result field empty. */
export function newPendingRun(fields: NewRunFields): SynthesisRun {
  return {
    ...fields,
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
  };
}
