/** The run's status rules: which statuses each move starts from (the store's write conditions), and a new run. */
import { describe, expect, it } from 'vitest';
import { newPendingRun, statusesAllowedBefore } from '../../../lambdas/core/run-state.ts';
import { type RunStatus, synthesisRunSchema } from '../../../lambdas/core/schemas/runs.ts';

describe('the run state table', () => {
  it.each<[RunStatus, RunStatus[]]>([
    // a worker claims a pending run, or re-claims one whose worker died
    ['generating', ['pending', 'generating']],
    // only the attempt that generated may complete
    ['generated', ['generating']],
    // an attempt released for a retry goes back to pending
    ['pending', ['generating']],
    // a reviewer decides on a generated run only
    ['approved', ['generated']],
    ['rejected', ['generated']],
    // a run fails before it has a result, never after
    ['failed', ['pending', 'generating']],
  ])('lets a run become %s only from %j', (to, from) => {
    expect(statusesAllowedBefore(to)).toEqual(from);
  });

  it('never moves an approved, rejected or failed run', () => {
    const targets: RunStatus[] = ['pending', 'generating', 'generated', 'approved', 'rejected', 'failed'];
    const fromFinished = targets.flatMap((to) =>
      statusesAllowedBefore(to).filter((from) => ['approved', 'rejected', 'failed'].includes(from)),
    );
    expect(fromFinished).toEqual([]);
  });
});

describe('newPendingRun', () => {
  const fields = {
    id: 'V1StGXR8_Z5jdHi6B-myT',
    pipelineId: 'pipe-1',
    teamId: 'team-1',
    synthesisHandler: 'heuristic-v1',
    baseConfigurationId: 'config-1',
    jobId: 'job-1',
    createdAt: '2025-03-01T00:00:00.000Z',
    triggeredBy: 'user-1',
  };

  it('starts a run pending with every result field empty, as the API shows it', () => {
    const run = newPendingRun(fields);
    expect(run).toEqual({
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
      approvedChangeIds: null,
      appliedConfigurationId: null,
      rolloutId: null,
      parentRunId: null,
      rootRunId: null,
      estimatedCostUsd: null,
      costUsd: null,
    });
    expect(synthesisRunSchema.parse(run)).toEqual(run);
  });
});
