import { describe, expect, it } from 'vitest';
import { SynthesisFailure } from '../../../../lambdas/core/errors.ts';
import type { EvaluationCaseRef } from '../../../../lambdas/core/evaluation.ts';
import { REFINEMENT_TRIALS } from '../../../../lambdas/core/refinement.ts';
import type { StoredEvaluationResult } from '../../../../lambdas/core/schemas/evaluation.ts';
import type { Execution } from '../../../../lambdas/core/schemas/records.ts';
import type { Change, SynthesisRun } from '../../../../lambdas/core/schemas/runs.ts';
import { readRefinementEvidence } from '../../../../lambdas/core/use-cases/refinement.ts';
import { FakeEvaluationStore, pendingRun, rejection } from './fakes.ts';

const SINCE = '2026-01-10T00:00:00.000Z';

const change = (id: string): Change => ({
  id,
  slotId: 'model',
  description: `change ${id}`,
  rationale: 'r',
  findingIds: [],
  patch: { temperature: 0.2 },
});

const run = (id: string, parentRunId?: string, extra: Partial<SynthesisRun> = {}): SynthesisRun =>
  pendingRun({
    id,
    pipelineId: 'pipe-1',
    baseConfigurationId: 'cfg-1',
    createdAt: '2026-01-20T00:00:00.000Z',
    ...(parentRunId ? { parentRunId } : {}),
    changes: [change(`${id}-c`)],
    ...extra,
  });

const execution = (id: string, fields: Partial<Execution> = {}): Execution => ({
  id,
  pipelineId: 'pipe-1',
  configurationId: 'cfg-1',
  status: 'failed',
  durationMs: 10,
  startedAt: '2026-01-15T00:00:00.000Z',
  ...fields,
});

const result = (
  executionId: string,
  arm: string,
  passed: boolean,
  detail?: string,
): StoredEvaluationResult => ({
  executionId,
  arm,
  passed,
  ...(detail === undefined ? {} : { detail }),
  score: passed ? 1 : 0,
  recordedAt: '2026-01-20T00:00:00.000Z',
});

/** The runs table's GetItem, counting the reads made. */
function runsOf(...stored: SynthesisRun[]) {
  const byId = new Map(stored.map((r) => [r.id, r]));
  const reads: string[] = [];
  return {
    reads,
    async get(id: string) {
      reads.push(id);
      return structuredClone(byId.get(id) ?? null);
    },
  };
}

/** The evaluation store, recording which executions and result lists are read. */
class RecordingEvaluations extends FakeEvaluationStore {
  readonly loaded: Array<{ pipelineId: string; refs: Array<{ id: string; startedAt: string }> }> = [];
  readonly listed: string[] = [];
  override async loadExecutions(pipelineId: string, refs: Array<{ id: string; startedAt: string }>) {
    this.loaded.push({ pipelineId, refs });
    return super.loadExecutions(pipelineId, refs);
  }
  override async listResults(runId: string) {
    this.listed.push(runId);
    return super.listResults(runId);
  }
  store(runId: string, ...results: StoredEvaluationResult[]) {
    for (const r of results) this.results.set(`${runId}#${r.executionId}#${r.arm}`, r);
  }
}

const ref = (executionId: string, fields: Partial<EvaluationCaseRef> = {}): EvaluationCaseRef => ({
  executionId,
  reason: 'failed',
  startedAt: '2026-01-15T00:00:00.000Z',
  ...fields,
});

describe('readRefinementEvidence', () => {
  it('answers null for a run without a parent, reading nothing', async () => {
    const runs = runsOf();
    const evaluations = new RecordingEvaluations();
    expect(await readRefinementEvidence({ runs, evaluations }, run('r1'), SINCE)).toBeNull();
    expect(runs.reads).toEqual([]);
    expect(evaluations.loaded).toEqual([]);
  });

  it('refuses a refinement whose parent is gone, naming the parent', async () => {
    const runs = runsOf();
    const error = await rejection(
      readRefinementEvidence({ runs, evaluations: new RecordingEvaluations() }, run('r2', 'r1'), SINCE),
    );
    expect(error).toBeInstanceOf(SynthesisFailure);
    expect(error.message).toBe('The parent run r1 no longer exists; start a new run without parentRunId.');
    expect(runs.reads).toEqual(['r1']);
  });

  it('refuses a parent of another pipeline as if it were gone', async () => {
    const runs = runsOf(run('r1', undefined, { pipelineId: 'pipe-2' }));
    const evaluations = new RecordingEvaluations();
    evaluations.sets.set('r1', { chosenAt: SINCE, cases: [ref('e1')] });
    const error = await rejection(readRefinementEvidence({ runs, evaluations }, run('r2', 'r1'), SINCE));
    expect(error).toBeInstanceOf(SynthesisFailure);
    expect(error.message).toContain('The parent run r1 no longer exists');
    expect(evaluations.loaded).toEqual([]);
  });

  it('refuses a parent without an evaluation set, saying to evaluate it', async () => {
    const runs = runsOf(run('r1'));
    const error = await rejection(
      readRefinementEvidence({ runs, evaluations: new RecordingEvaluations() }, run('r2', 'r1'), SINCE),
    );
    expect(error).toBeInstanceOf(SynthesisFailure);
    expect(error.message).toBe(
      'The parent run r1 has no evaluation set; evaluate it, then start the refinement again.',
    );
  });

  it('shows the learning cases only: held-out ones and ones before the window are not read', async () => {
    const runs = runsOf(run('r1'));
    const evaluations = new RecordingEvaluations();
    evaluations.sets.set('r1', {
      chosenAt: SINCE,
      cases: [
        ref('e-held', { heldOut: true }),
        ref('e-old', { startedAt: '2026-01-09T23:59:59.999Z' }),
        ref('e-edge', { startedAt: SINCE, reason: 'succeeded' }),
        ref('e-fail', { heldOut: false }),
        ref('e-gone'),
        ref('e-held2', { heldOut: true, startedAt: '2026-01-01T00:00:00.000Z' }),
      ],
    });
    evaluations.executions = [
      execution('e-held', { input: { secret: true } }),
      execution('e-old'),
      execution('e-edge', { status: 'succeeded', startedAt: SINCE }),
      execution('e-fail', { error: 'timed out', input: { text: 'hello' } }),
    ];
    const answer = await readRefinementEvidence({ runs, evaluations }, run('r2', 'r1'), SINCE);
    expect(evaluations.loaded).toEqual([
      {
        pipelineId: 'pipe-1',
        refs: [
          { id: 'e-edge', startedAt: SINCE },
          { id: 'e-fail', startedAt: '2026-01-15T00:00:00.000Z' },
          { id: 'e-gone', startedAt: '2026-01-15T00:00:00.000Z' },
        ],
      },
    ]);
    expect(answer?.heldOutIds).toEqual(new Set(['e-held', 'e-held2']));
    expect(answer?.evidence.heldOutCount).toBe(2);
    // A missing execution is left out; error and input are given only when recorded.
    expect(answer?.evidence.cases).toStrictEqual([
      { executionId: 'e-edge', status: 'succeeded' },
      { executionId: 'e-fail', status: 'failed', error: 'timed out', input: { text: 'hello' } },
    ]);
  });

  it('gives the trials oldest first, with results of learning cases only, by case and arm', async () => {
    const runs = runsOf(run('r1'), run('r2', 'r1', { rootRunId: 'r1' }));
    const evaluations = new RecordingEvaluations();
    evaluations.sets.set('r2', { chosenAt: SINCE, cases: [ref('e1'), ref('e2', { heldOut: true })] });
    evaluations.executions = [execution('e1'), execution('e2')];
    evaluations.store('r1', result('e1', 'base', false, 'wrong'), result('e2', 'base', true));
    evaluations.store(
      'r2',
      result('e1', 'base', false, 'still wrong'),
      result('e1', 'candidate', true),
      result('e2', 'candidate', false),
    );
    const answer = await readRefinementEvidence({ runs, evaluations }, run('r3', 'r2'), SINCE);
    const evidence = answer?.evidence;
    expect(evidence?.parentRunId).toBe('r2');
    expect(evidence?.rootRunId).toBe('r1');
    expect(evidence?.trials.map((trial) => trial.runId)).toEqual(['r1', 'r2']);
    expect(evidence?.trials.map((trial) => trial.changes.map((c) => c.id))).toEqual([['r1-c'], ['r2-c']]);
    const [first, last] = evidence?.trials ?? [];
    expect([...(first?.results.keys() ?? [])]).toEqual(['e1']);
    expect(first?.results.get('e1')).toEqual(
      new Map([['base', { passed: false, detail: 'wrong', score: 0 }]]),
    );
    expect([...(last?.results.keys() ?? [])]).toEqual(['e1']);
    expect(last?.results.get('e1')).toEqual(
      new Map([
        ['base', { passed: false, detail: 'still wrong', score: 0 }],
        ['candidate', { passed: true, detail: undefined, score: 1 }],
      ]),
    );
    expect(evaluations.listed.sort()).toEqual(['r1', 'r2']);
  });

  it(`reads at most ${REFINEMENT_TRIALS} rounds back, one GetItem each`, async () => {
    const chain = [
      run('r0'),
      run('r1', 'r0'),
      run('r2', 'r1'),
      run('r3', 'r2'),
      run('r4', 'r3'),
      run('r5', 'r4'),
    ];
    const runs = runsOf(...chain);
    const evaluations = new RecordingEvaluations();
    evaluations.sets.set('r5', { chosenAt: SINCE, cases: [] });
    const answer = await readRefinementEvidence({ runs, evaluations }, run('r6', 'r5'), SINCE);
    expect(runs.reads).toEqual(['r5', 'r4', 'r3', 'r2']);
    expect(answer?.evidence.trials.map((trial) => trial.runId)).toEqual(['r2', 'r3', 'r4', 'r5']);
    expect(answer?.evidence.cases).toEqual([]);
    expect(answer?.evidence.heldOutCount).toBe(0);
  });

  it('stops at an ancestor that is gone, keeping the rounds found', async () => {
    const runs = runsOf(run('r2', 'r1'));
    const evaluations = new RecordingEvaluations();
    evaluations.sets.set('r2', { chosenAt: SINCE, cases: [] });
    const answer = await readRefinementEvidence({ runs, evaluations }, run('r3', 'r2'), SINCE);
    expect(runs.reads).toEqual(['r2', 'r1']);
    expect(answer?.evidence.trials.map((trial) => trial.runId)).toEqual(['r2']);
  });

  it("names the chain's root: the run's own, else the parent's, else the parent", async () => {
    const evaluations = new RecordingEvaluations();
    evaluations.sets.set('r1', { chosenAt: SINCE, cases: [] });
    const read = (parent: SynthesisRun, child: SynthesisRun) =>
      readRefinementEvidence({ runs: runsOf(parent), evaluations }, child, SINCE);
    expect((await read(run('r1'), run('r2', 'r1')))?.evidence.rootRunId).toBe('r1');
    expect((await read(run('r1', undefined, { rootRunId: 'r0' }), run('r2', 'r1')))?.evidence.rootRunId).toBe(
      'r0',
    );
    expect(
      (await read(run('r1', undefined, { rootRunId: 'r0' }), run('r2', 'r1', { rootRunId: 'rx' })))?.evidence
        .rootRunId,
    ).toBe('rx');
  });
});
