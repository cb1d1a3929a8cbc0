import { beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError, ValidationError } from '../../../../lambdas/core/errors.ts';
import type { DomainEvent } from '../../../../lambdas/core/events.ts';
import { retentionWindow } from '../../../../lambdas/core/lifecycle.ts';
import type {
  EvaluationSummary,
  StoredEvaluationResult,
} from '../../../../lambdas/core/schemas/evaluation.ts';
import type { Configuration, Pipeline } from '../../../../lambdas/core/schemas/pipelines.ts';
import type { Execution } from '../../../../lambdas/core/schemas/records.ts';
import type { Change, SynthesisRun } from '../../../../lambdas/core/schemas/runs.ts';
import {
  makeGetEvaluationSet,
  makeRecordEvaluations,
} from '../../../../lambdas/core/use-cases/evaluation.ts';
import {
  FakeEvaluationStore,
  makeWorld,
  pendingRun,
  principal,
  rejection,
  SLOTS,
  seedPipeline,
  type World,
} from './fakes.ts';

/** The evaluation store, recording the executions read and the event each stored summary is written with. */
class RecordingEvaluations extends FakeEvaluationStore {
  readonly loaded: string[][] = [];
  readonly events: DomainEvent[] = [];
  override async loadExecutions(pipelineId: string, refs: Array<{ id: string; startedAt: string }>) {
    this.loaded.push(refs.map((ref) => ref.id));
    return super.loadExecutions(pipelineId, refs);
  }
  override async recordResults(
    runId: string,
    results: StoredEvaluationResult[],
    summarize: (all: StoredEvaluationResult[]) => EvaluationSummary,
    eventOf?: (sequence: number) => DomainEvent,
  ) {
    if (eventOf) this.events.push(eventOf(this.events.length + 1));
    return super.recordResults(runId, results, summarize);
  }
}

const ada = principal();
const T_SET = '2025-06-02T09:00:00.000Z';
/** Run ids as the store holds them (21-character nanoids). */
const ROOT0 = 'root0'.padEnd(21, '0');
const ROOT9 = 'root9'.padEnd(21, '0');
const NO_SET = 'noset'.padEnd(21, '0');
const CHANGES: Change[] = [
  {
    id: 'c1',
    slotId: 'model',
    description: 'd',
    rationale: 'r',
    findingIds: [],
    patch: { temperature: 0.2 },
  },
];

let world: World;
let pipeline: Pipeline;
let base: Configuration;
let evaluations: RecordingEvaluations;
let since: string;
beforeEach(async () => {
  world = makeWorld('2025-06-02T10:00:00.000Z');
  ({ pipeline, configuration: base } = await seedPipeline(world));
  evaluations = new RecordingEvaluations();
  since = retentionWindow(await world.settings.get('team-a'), world.clock.now()).executionsSince;
});
const deps = () => ({ ...world, evaluations });

/** An execution started `minutes` after the retention window's start (before it when negative). */
function execution(id: string, minutes: number, fields: Partial<Execution> = {}): Execution {
  return {
    id,
    pipelineId: pipeline.id,
    configurationId: base.id,
    status: 'failed',
    durationMs: 10,
    startedAt: new Date(Date.parse(since) + minutes * 60_000).toISOString(),
    ...fields,
  };
}

function seedRun(fields: Partial<SynthesisRun> = {}): SynthesisRun {
  const id = world.ids.newId();
  const proposed = world.pipelines.putConfiguration({
    id: world.ids.newId(),
    pipelineId: pipeline.id,
    slots: SLOTS,
    source: 'synthesis',
    synthesisRunId: id,
    createdAt: world.clock.now().toISOString(),
    createdBy: 'user-ada',
  });
  const run = pendingRun({
    id,
    pipelineId: pipeline.id,
    baseConfigurationId: base.id,
    createdAt: world.clock.now().toISOString(),
    status: 'generated',
    proposedConfigurationId: proposed.id,
    changes: CHANGES,
    ...fields,
  });
  world.runs.seed(run);
  return run;
}

const stored = (executionId: string, arm: string, passed: boolean): StoredEvaluationResult => ({
  executionId,
  arm,
  passed,
  recordedAt: '2025-06-02T09:00:00.000Z',
});

describe('reading the evaluation set', () => {
  it('shows each case as recorded, its results by arm, and leaves out what is gone or outside the window', async () => {
    const run = seedRun();
    const cited = execution('cited', 0, { error: 'boom', input: { q: 1 } });
    const citedOld = execution('cited-old', -1);
    await world.evidence.save(run.id, { signals: [], executions: [cited, citedOld] });
    evaluations.executions = [
      cited,
      citedOld,
      execution('kept', 0, { status: 'succeeded' }),
      execution('held', 6),
      execution('old', -5),
    ];
    evaluations.sets.set(run.id, {
      chosenAt: '2025-06-02T09:00:00.000Z',
      rootRunId: 'root-1',
      cases: [
        { executionId: 'cited', reason: 'cited', startedAt: cited.startedAt, heldOut: false },
        { executionId: 'cited-old', reason: 'cited', startedAt: citedOld.startedAt },
        { executionId: 'kept', reason: 'succeeded', startedAt: execution('kept', 0).startedAt },
        { executionId: 'held', reason: 'failed', startedAt: execution('held', 6).startedAt, heldOut: true },
        { executionId: 'old', reason: 'failed', startedAt: execution('old', -5).startedAt },
        { executionId: 'gone', reason: 'failed', startedAt: execution('gone', 7).startedAt },
      ],
    });
    evaluations.results.set('a', stored('kept', 'base', false));
    evaluations.results.set('b', { ...stored('kept', 'candidate', true), detail: 'ok' });
    evaluations.results.set('c', stored('kept', 'change:c1', true));
    // The fake keys results by run: put them under this run's key.
    for (const [key, value] of [...evaluations.results]) {
      evaluations.results.delete(key);
      evaluations.results.set(`${run.id}#${value.executionId}#${value.arm}`, value);
    }

    const set = await makeGetEvaluationSet(deps())(ada, run.id);
    expect(evaluations.loaded).toEqual([['kept', 'held', 'gone']]);
    expect(set.chainRootRunId).toBe('root-1');
    expect(set.chosenAt).toBe('2025-06-02T09:00:00.000Z');
    expect(set.cases).toStrictEqual([
      {
        executionId: 'cited',
        reason: 'cited',
        status: 'failed',
        startedAt: since,
        heldOut: false,
        error: 'boom',
        input: { q: 1 },
      },
      {
        executionId: 'kept',
        reason: 'succeeded',
        status: 'succeeded',
        startedAt: execution('kept', 0).startedAt,
        results: {
          base: stored('kept', 'base', false),
          candidate: { ...stored('kept', 'candidate', true), detail: 'ok' },
          changes: { c1: stored('kept', 'change:c1', true) },
        },
      },
      {
        executionId: 'held',
        reason: 'failed',
        status: 'failed',
        startedAt: execution('held', 6).startedAt,
        heldOut: true,
      },
    ]);
  });

  it("names the run itself as the chain's root of a set chosen before chains", async () => {
    const run = seedRun();
    evaluations.sets.set(run.id, { chosenAt: '2025-06-02T09:00:00.000Z', cases: [] });
    expect((await makeGetEvaluationSet(deps())(ada, run.id)).chainRootRunId).toBe(run.id);
  });

  it('is a 404 naming the run when its base or its proposal is gone', async () => {
    for (const which of ['base', 'proposal'] as const) {
      const run = seedRun();
      const gone = which === 'base' ? base.id : run.proposedConfigurationId;
      world.pipelines.configurations.delete(`${pipeline.id}#${gone}`);
      const error = await rejection(makeGetEvaluationSet(deps())(ada, run.id));
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error.message).toBe(`A configuration of run ${run.id} no longer exists.`);
      world.pipelines.seedConfiguration(base);
    }
  });

  it('is a 409 saying so for a run that found nothing to change, choosing no set', async () => {
    const run = seedRun({ proposedConfigurationId: null, changes: [] });
    const error = await rejection(makeGetEvaluationSet(deps())(ada, run.id));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toContain('so there is nothing to evaluate;');
    expect(evaluations.sets.size).toBe(0);
  });

  it('is a 409 naming the status of a run no longer generated, choosing no set', async () => {
    for (const status of ['approved', 'pending'] as const) {
      const run = seedRun({ status, ...(status === 'pending' ? { proposedConfigurationId: null } : {}) });
      const error = await rejection(makeGetEvaluationSet(deps())(ada, run.id));
      expect(error).toBeInstanceOf(ConflictError);
      expect(error.message).toBe(
        `The run is ${status}; an evaluation set is chosen only for a generated run.`,
      );
    }
    expect(evaluations.sets.size).toBe(0);
  });

  it('is a 409 for a stored set of a run that has no proposal', async () => {
    const run = seedRun({ status: 'failed', proposedConfigurationId: null });
    evaluations.sets.set(run.id, { chosenAt: '2025-06-02T09:00:00.000Z', cases: [] });
    const error = await rejection(makeGetEvaluationSet(deps())(ada, run.id));
    expect(error.message).toBe('The run is failed; an evaluation set is chosen only for a generated run.');
  });

  it("gives a refinement its parent's cases, keeping the chain's root", async () => {
    const parent = seedRun();
    evaluations.executions = [execution('p1', 1), execution('sampled', 2)];
    const parentCases = [
      { executionId: 'p1', reason: 'failed' as const, startedAt: execution('p1', 1).startedAt },
    ];
    evaluations.sets.set(parent.id, { chosenAt: '2025-06-01T00:00:00.000Z', cases: parentCases });
    const child = seedRun({ parentRunId: parent.id, rootRunId: parent.id });
    const set = await makeGetEvaluationSet(deps())(ada, child.id);
    expect(set.cases.map((c) => c.executionId)).toEqual(['p1']);
    expect(set.chosenAt).toBe('2025-06-01T00:00:00.000Z');
    expect(set.chainRootRunId).toBe(parent.id);
    expect(evaluations.sets.get(child.id)).toEqual({
      chosenAt: '2025-06-01T00:00:00.000Z',
      cases: parentCases,
      rootRunId: parent.id,
    });

    evaluations.sets.set(ROOT0, {
      chosenAt: '2025-06-01T00:00:00.000Z',
      cases: parentCases,
      rootRunId: ROOT0,
    });
    const grandchild = seedRun({ parentRunId: ROOT0 });
    expect((await makeGetEvaluationSet(deps())(ada, grandchild.id)).chainRootRunId).toBe(ROOT0);
  });

  it("chooses a new set held out by the chain's root when the parent has none", async () => {
    const run = seedRun({ parentRunId: NO_SET, rootRunId: ROOT9 });
    evaluations.executions = [execution('x', 1)];
    const set = await makeGetEvaluationSet(deps())(ada, run.id);
    expect(set.chainRootRunId).toBe(ROOT9);
    expect(evaluations.sets.get(run.id)?.rootRunId).toBe(ROOT9);
  });
});

describe('recording results (what is refused and what is written)', () => {
  async function runWithSet(heldOut?: boolean) {
    const run = seedRun();
    const at = execution('a', 1).startedAt;
    evaluations.sets.set(run.id, {
      chosenAt: at,
      cases: [
        {
          executionId: 'a',
          reason: 'failed',
          startedAt: at,
          ...(heldOut === undefined ? {} : { heldOut: false }),
        },
        { executionId: 'b', reason: 'failed', startedAt: at, ...(heldOut === undefined ? {} : { heldOut }) },
      ],
    });
    return run;
  }

  it('writes synthesis_run.evaluated with each stored summary, numbered by the summary', async () => {
    const run = await runWithSet();
    await makeRecordEvaluations(deps())(ada, run.id, [{ executionId: 'a', arm: 'base', passed: true }]);
    expect(evaluations.events).toEqual([
      {
        id: `evt_${run.id}_1_synthesis_run_evaluated`,
        type: 'synthesis_run.evaluated',
        timestamp: world.clock.now().toISOString(),
        data: {
          teamId: 'team-a',
          pipelineId: pipeline.id,
          runId: run.id,
          status: 'generated',
          actor: expect.anything(),
        },
      },
    ]);
  });

  it('sums the change arms and the held-out cases of a set that marks them', async () => {
    const run = await runWithSet(true);
    const summary = await makeRecordEvaluations(deps())(ada, run.id, [
      { executionId: 'a', arm: 'base', passed: false },
      { executionId: 'a', arm: 'candidate', passed: true },
      { executionId: 'a', arm: 'change:c1', passed: true },
      { executionId: 'b', arm: 'base', passed: false },
      { executionId: 'b', arm: 'candidate', passed: true },
    ]);
    expect(summary.changes?.map((outcome) => outcome.changeId)).toEqual(['c1']);
    expect(summary.heldOut).not.toBeNull();
    expect(summary.heldOut).toMatchObject({ cases: 1 });
    const old = await runWithSet();
    const unmarked = await makeRecordEvaluations(deps())(ada, old.id, [
      { executionId: 'a', arm: 'base', passed: true },
    ]);
    expect(unmarked.heldOut).toBeNull();
  });

  it('refuses a run no longer generated, or without a set, with messages saying what to do', async () => {
    const record = makeRecordEvaluations(deps());
    const approved = seedRun({ status: 'approved' });
    expect(
      (await rejection(record(ada, approved.id, [{ executionId: 'a', arm: 'base', passed: true }]))).message,
    ).toBe('The run is approved; results are accepted only for a generated run.');
    const nothing = seedRun({ proposedConfigurationId: null, changes: [] });
    expect(
      (await rejection(record(ada, nothing.id, [{ executionId: 'a', arm: 'base', passed: true }]))).message,
    ).toContain('so there is nothing to evaluate;');
    const noSet = seedRun();
    expect(
      (await rejection(record(ada, noSet.id, [{ executionId: 'a', arm: 'base', passed: true }]))).message,
    ).toBe(
      'The run has no evaluation set yet: read GET /synthesis-runs/{id}/evaluation-set first and replay its cases.',
    );
    expect(evaluations.results.size).toBe(0);
  });

  it('is a 400 naming the executions outside the set, each at its path, storing nothing', async () => {
    const run = await runWithSet();
    const error = await rejection(
      makeRecordEvaluations(deps())(ada, run.id, [
        { executionId: 'a', arm: 'base', passed: true },
        { executionId: 'zzz', arm: 'base', passed: true },
        { executionId: 'zzz', arm: 'candidate', passed: true },
      ]),
    );
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.message).toBe(
      "These executions are not cases of the run's evaluation set: zzz. Nothing was stored.",
    );
    expect((error as ValidationError).details).toEqual([
      { path: 'results.1.executionId', message: 'is not a case of the evaluation set' },
      { path: 'results.2.executionId', message: 'is not a case of the evaluation set' },
    ]);
    expect(evaluations.results.size).toBe(0);
  });

  it('is a 400 naming the arms of no change of the run, storing nothing', async () => {
    const run = await runWithSet();
    const error = await rejection(
      makeRecordEvaluations(deps())(ada, run.id, [
        { executionId: 'a', arm: 'change:c1', passed: true },
        { executionId: 'a', arm: 'change:c9', passed: true },
        { executionId: 'b', arm: 'change:c9', passed: true },
      ]),
    );
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.message).toBe(
      'These arms name no change of the run (its changes are c1): change:c9. Nothing was stored.',
    );
    expect((error as ValidationError).details).toEqual([
      { path: 'results.1.arm', message: 'names no change of the run' },
      { path: 'results.2.arm', message: 'names no change of the run' },
    ]);
    expect(evaluations.results.size).toBe(0);
  });
  it('lists every execution, arm and change of a refusal, comma-separated', async () => {
    const run = seedRun({ changes: [...CHANGES, { ...(CHANGES[0] as Change), id: 'c2' }] });
    evaluations.sets.set(run.id, {
      chosenAt: T_SET,
      cases: [{ executionId: 'a', reason: 'failed', startedAt: T_SET }],
    });
    const record = makeRecordEvaluations(deps());
    const outside = await rejection(
      record(ada, run.id, [
        { executionId: 'x', arm: 'base', passed: true },
        { executionId: 'y', arm: 'base', passed: true },
      ]),
    );
    expect(outside.message).toBe(
      "These executions are not cases of the run's evaluation set: x, y. Nothing was stored.",
    );
    const arms = await rejection(
      record(ada, run.id, [
        { executionId: 'a', arm: 'change:c8', passed: true },
        { executionId: 'a', arm: 'change:c9', passed: true },
      ]),
    );
    expect(arms.message).toBe(
      'These arms name no change of the run (its changes are c1, c2): change:c8, change:c9. Nothing was stored.',
    );
    const bare = seedRun({ changes: [] });
    evaluations.sets.set(bare.id, {
      chosenAt: T_SET,
      cases: [{ executionId: 'a', reason: 'failed', startedAt: T_SET }],
    });
    expect(
      (await rejection(record(ada, bare.id, [{ executionId: 'a', arm: 'change:c1', passed: true }]))).message,
    ).toBe('These arms name no change of the run (its changes are none): change:c1. Nothing was stored.');
  });

  it('sums the held-out cases of a set where only some cases carry the mark', async () => {
    const run = seedRun();
    evaluations.sets.set(run.id, {
      chosenAt: T_SET,
      cases: [
        { executionId: 'a', reason: 'failed', startedAt: T_SET },
        { executionId: 'b', reason: 'failed', startedAt: T_SET, heldOut: true },
      ],
    });
    const summary = await makeRecordEvaluations(deps())(ada, run.id, [
      { executionId: 'a', arm: 'base', passed: true },
    ]);
    expect(summary.heldOut).not.toBeNull();
  });
});
