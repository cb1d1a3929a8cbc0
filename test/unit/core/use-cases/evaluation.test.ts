import { beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, ForbiddenError, ValidationError } from '../../../../lambdas/core/errors.ts';
import type { Configuration, Pipeline } from '../../../../lambdas/core/schemas/pipelines.ts';
import type { Execution } from '../../../../lambdas/core/schemas/records.ts';
import { APPROVAL_RULE_DEFAULTS } from '../../../../lambdas/core/schemas/review.ts';
import type { SynthesisRun } from '../../../../lambdas/core/schemas/runs.ts';
import { makeApproveRun } from '../../../../lambdas/core/use-cases/approval.ts';
import {
  enforceApprovalRules,
  makeGetApprovalRules,
  makePutApprovalRules,
} from '../../../../lambdas/core/use-cases/approval-rules.ts';
import {
  makeGetEvaluationSet,
  makeRecordEvaluations,
} from '../../../../lambdas/core/use-cases/evaluation.ts';
import {
  type FakeApprovalRulesStore,
  type FakeEvaluationStore,
  makeWorld,
  pendingRun,
  principal,
  rejection,
  SLOTS,
  seedPipeline,
  type World,
} from './fakes.ts';

let world: World;
let pipeline: Pipeline;
let base: Configuration;
let evaluations: FakeEvaluationStore;
let rulesStore: FakeApprovalRulesStore;
beforeEach(async () => {
  world = makeWorld('2025-06-02T10:00:00.000Z');
  ({ pipeline, configuration: base } = await seedPipeline(world));
  evaluations = world.evaluations;
  rulesStore = world.approvalRules;
});

const ada = principal();
const admin = principal({ userId: 'user-root', principalId: 'user-root', role: 'admin', method: 'session' });
const viewer = principal({ userId: 'user-vic', principalId: 'user-vic', role: 'viewer' });

function execution(id: string, status: Execution['status'], minute: number): Execution {
  return {
    id,
    pipelineId: pipeline.id,
    configurationId: base.id,
    status,
    durationMs: 10,
    startedAt: new Date(Date.UTC(2025, 5, 1, 0, minute)).toISOString(),
    input: { q: id },
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
    ...fields,
  });
  world.runs.seed(run);
  return run;
}

const deps = () => ({ ...world, evaluations });

describe('the evaluation set', () => {
  it('is chosen once from the cited executions and the sample, then the same for every reader', async () => {
    const run = seedRun();
    const cited = execution('cited', 'failed', 50);
    await world.evidence.save(run.id, { signals: [], executions: [cited] });
    evaluations.executions = [execution('old-fail', 'failed', 1), execution('ok', 'succeeded', 2)];
    const getSet = makeGetEvaluationSet(deps());

    const first = await getSet(ada, run.id);
    evaluations.executions.push(execution('late', 'failed', 60));
    const second = await getSet(viewer, run.id);

    expect(first.cases.map((c) => [c.executionId, c.reason])).toEqual([
      ['cited', 'cited'],
      ['old-fail', 'failed'],
      ['ok', 'succeeded'],
    ]);
    expect(second.cases).toEqual(first.cases);
    expect(first.cases[0]?.input).toEqual({ q: 'cited' });
    expect(first.baseConfiguration.id).toBe(base.id);
    expect(first.candidateConfiguration.id).toBe(run.proposedConfigurationId);
  });

  it('is a 409 for a run that is not generated and has none', async () => {
    const run = seedRun({ status: 'pending', proposedConfigurationId: null });
    expect(await rejection(makeGetEvaluationSet(deps())(ada, run.id))).toBeInstanceOf(ConflictError);
  });
});

describe('recording results', () => {
  async function runWithSet() {
    const run = seedRun();
    evaluations.executions = [execution('a', 'failed', 1), execution('b', 'succeeded', 2)];
    await makeGetEvaluationSet(deps())(ada, run.id);
    return run;
  }

  it('answers the summary of every result so far', async () => {
    const run = await runWithSet();
    const record = makeRecordEvaluations(deps());
    await record(ada, run.id, [{ executionId: 'a', arm: 'base', passed: false }]);
    const summary = await record(ada, run.id, [
      { executionId: 'a', arm: 'candidate', passed: true },
      { executionId: 'b', arm: 'base', passed: true },
    ]);
    expect(summary).toMatchObject({ cases: 2, evaluated: 1, fixed: ['a'], regressed: [] });
  });

  it('refuses an execution outside the set, a viewer, a run not generated, or a run without a set, storing nothing', async () => {
    const run = await runWithSet();
    const record = makeRecordEvaluations(deps());
    const outside = await rejection(
      record(ada, run.id, [
        { executionId: 'a', arm: 'base', passed: true },
        { executionId: 'zzz', arm: 'base', passed: true },
      ]),
    );
    expect(outside).toBeInstanceOf(ValidationError);
    expect(outside.message).toContain('zzz');
    expect(
      await rejection(record(viewer, run.id, [{ executionId: 'a', arm: 'base', passed: true }])),
    ).toBeInstanceOf(ForbiddenError);
    const approved = seedRun({ status: 'approved' });
    expect(
      await rejection(record(ada, approved.id, [{ executionId: 'a', arm: 'base', passed: true }])),
    ).toBeInstanceOf(ConflictError);
    const noSet = seedRun();
    expect(
      await rejection(record(ada, noSet.id, [{ executionId: 'a', arm: 'base', passed: true }])),
    ).toBeInstanceOf(ConflictError);
    expect(evaluations.results.size).toBe(0);
  });
});

describe('approval rules', () => {
  const rulesDeps = () => ({
    pipelines: world.pipelines,
    approvalRules: rulesStore,
    clock: world.clock,
    ids: world.ids,
  });

  it('read as the defaults until an admin puts others; a member may not', async () => {
    expect(await makeGetApprovalRules(rulesDeps())(viewer, pipeline.id)).toEqual({
      ...APPROVAL_RULE_DEFAULTS,
      pipelineId: pipeline.id,
      updatedAt: null,
      updatedBy: null,
    });
    const strict = { ...APPROVAL_RULE_DEFAULTS, requireEvaluation: true };
    expect(await rejection(makePutApprovalRules(rulesDeps())(ada, pipeline.id, strict))).toBeInstanceOf(
      ForbiddenError,
    );
    expect(await makePutApprovalRules(rulesDeps())(admin, pipeline.id, strict)).toMatchObject({
      requireEvaluation: true,
      updatedBy: 'user-root',
      updatedAt: '2025-06-02T10:00:00.000Z',
    });
    expect((await makeGetApprovalRules(rulesDeps())(ada, pipeline.id)).requireEvaluation).toBe(true);
  });

  it('refuse an API token where a person must approve, and an override from a non-admin', async () => {
    const run = { act: 'approve' as const, pipelineId: pipeline.id, run: seedRun() };
    rulesStore.rules.set(pipeline.id, {
      ...APPROVAL_RULE_DEFAULTS,
      allowApiTokens: false,
      pipelineId: pipeline.id,
      updatedAt: null,
      updatedBy: null,
    });
    expect(await rejection(enforceApprovalRules(rulesStore, ada, run, undefined))).toBeInstanceOf(
      ForbiddenError,
    );
    const member = { ...ada, method: 'session' as const };
    expect(await enforceApprovalRules(rulesStore, member, run, undefined)).toBeNull();
    expect(await rejection(enforceApprovalRules(rulesStore, member, run, { reason: 'x' }))).toBeInstanceOf(
      ForbiddenError,
    );
  });

  it('make approve a 409 naming the failing rules, changing nothing; an admin override approves and is kept', async () => {
    const run = seedRun({ triggeredBy: 'user-ada' });
    rulesStore.rules.set(pipeline.id, {
      ...APPROVAL_RULE_DEFAULTS,
      requireEvaluation: true,
      forbidSelfApproval: true,
      pipelineId: pipeline.id,
      updatedAt: null,
      updatedBy: null,
    });
    let decided: { overrideReason?: string | null } | undefined;
    const runs = Object.assign(Object.create(world.runs), {
      approve: (r: SynthesisRun, decision: { overrideReason?: string | null }, a: never) => {
        decided = decision;
        return world.runs.approve(r, decision as never, a);
      },
    });
    const approve = makeApproveRun({ ...world, runs, approvalRules: rulesStore });

    const refused = await rejection(approve(ada, run.id));
    expect(refused).toBeInstanceOf(ConflictError);
    expect((refused as ConflictError).details).toMatchObject({
      rules: ['requireEvaluation', 'forbidSelfApproval'],
    });
    expect((await world.runs.get(run.id))?.status).toBe('generated');

    const approved = await approve(admin, run.id, { override: { reason: 'checked by hand' } });
    expect(approved.status).toBe('approved');
    expect(decided?.overrideReason).toBe('checked by hand');
  });
});
