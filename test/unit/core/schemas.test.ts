/** Stored runs written before findings cited executions still parse, with empty execution evidence. */
import { describe, expect, it } from 'vitest';
import { newPendingRun } from '../../../lambdas/core/run-state.ts';
import { synthesisRunSchema } from '../../../lambdas/core/schemas/runs.ts';

describe('synthesisRunSchema', () => {
  it('reads a run stored before executionIds and analyzedExecutionIds existed', () => {
    const current = newPendingRun({
      id: 'V1StGXR8_Z5jdHi6B-myT',
      pipelineId: 'pipe-1',
      teamId: 'team-1',
      synthesisHandler: 'heuristic-v1',
      baseConfigurationId: 'config-1',
      jobId: 'job-1',
      createdAt: '2025-03-01T00:00:00.000Z',
      triggeredBy: 'user-1',
    });
    const { analyzedExecutionIds: _dropped, ...stored } = {
      ...current,
      status: 'generated',
      diagnosis: { summary: 's', findings: [{ id: '1', description: 'd', signalIds: ['sig-1'] }] },
    };

    const run = synthesisRunSchema.parse(stored);

    expect(run.analyzedExecutionIds).toEqual([]);
    expect(run.diagnosis?.findings).toEqual([
      { id: '1', description: 'd', signalIds: ['sig-1'], executionIds: [] },
    ]);
  });
});
