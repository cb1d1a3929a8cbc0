import { beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, ForbiddenError } from '../../../../lambdas/core/errors.ts';
import { actorOf } from '../../../../lambdas/core/events.ts';
import type { Pipeline } from '../../../../lambdas/core/schemas/pipelines.ts';
import { APPROVAL_RULE_DEFAULTS } from '../../../../lambdas/core/schemas/review.ts';
import {
  enforceApprovalRules,
  makePutApprovalRules,
} from '../../../../lambdas/core/use-cases/approval-rules.ts';
import { makeWorld, pendingRun, principal, rejection, seedPipeline, type World } from './fakes.ts';

const T0 = '2025-06-02T10:00:00.000Z';
const member = principal({ method: 'session' });
const admin = principal({ userId: 'user-root', principalId: 'user-root', role: 'admin', method: 'session' });
const adminToken = principal({ userId: 'user-root', principalId: 'user-root', role: 'admin' });

let world: World;
let pipeline: Pipeline;
beforeEach(async () => {
  world = makeWorld(T0);
  ({ pipeline } = await seedPipeline(world));
});

describe('changing approval rules', () => {
  it('is for admins, from a session; each refusal says why and stores nothing', async () => {
    const put = makePutApprovalRules(world);
    const notAdmin = await rejection(put(member, pipeline.id, APPROVAL_RULE_DEFAULTS));
    expect(notAdmin).toBeInstanceOf(ForbiddenError);
    expect(notAdmin.message).toBe("Only a team admin may change a pipeline's approval rules.");
    const token = await rejection(put(adminToken, pipeline.id, APPROVAL_RULE_DEFAULTS));
    expect(token).toBeInstanceOf(ForbiddenError);
    expect(token.message).toBe(
      "A pipeline's approval rules are changed by a person, not with an API token: sign in (the review application or `pipeline-synthesis login`) and change them from that session.",
    );
    expect(world.approvalRules.rules.size).toBe(0);
    expect(world.approvalRules.events).toEqual([]);
  });

  it('stores who changed them and when, with approval_rules.updated', async () => {
    const rules = { ...APPROVAL_RULE_DEFAULTS, forbidSelfApproval: true };
    const stored = await makePutApprovalRules(world)(admin, pipeline.id, rules);
    expect(stored).toEqual({ ...rules, pipelineId: pipeline.id, updatedAt: T0, updatedBy: 'user-root' });
    expect(world.approvalRules.events).toEqual([
      {
        id: expect.stringMatching(/_approval_rules_updated$/),
        type: 'approval_rules.updated',
        timestamp: T0,
        data: { teamId: 'team-a', pipelineId: pipeline.id, actor: actorOf(admin) },
      },
    ]);
  });
});

describe('enforcing approval rules', () => {
  beforeEach(async () => {
    await makePutApprovalRules(world)(admin, pipeline.id, {
      ...APPROVAL_RULE_DEFAULTS,
      forbidSelfApproval: true,
    });
  });
  const run = () =>
    pendingRun({
      id: 'run-1',
      pipelineId: pipeline.id,
      baseConfigurationId: 'cfg',
      createdAt: T0,
      triggeredBy: 'user-ada',
    });

  it('refuses an override from a non-admin, saying who may override', async () => {
    const error = await rejection(
      enforceApprovalRules(
        world.approvalRules,
        member,
        { act: 'approve', pipelineId: pipeline.id, run: null },
        {
          reason: 'x',
        },
      ),
    );
    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error.message).toBe('Only a team admin may override the approval rules.');
  });

  it('names the act refused and each failing rule', async () => {
    const approve = await rejection(
      enforceApprovalRules(
        world.approvalRules,
        member,
        { act: 'approve', pipelineId: pipeline.id, run: run() },
        undefined,
      ),
    );
    expect(approve).toBeInstanceOf(ConflictError);
    expect(approve.message).toMatch(/^The pipeline's approval rules refuse this approval: \S/);
    const activate = await rejection(
      enforceApprovalRules(
        world.approvalRules,
        member,
        { act: 'activate', pipelineId: pipeline.id, run: run() },
        undefined,
      ),
    );
    expect(activate.message).toMatch(
      /^The pipeline's approval rules refuse activating a configuration of run run-1 \(an admin may pass the evaluation rules with "override": \{"reason"\}\): \S/,
    );
    const failure = approve.message.slice(approve.message.indexOf(': ') + 2);
    expect(activate.message.endsWith(failure)).toBe(true);
    expect(failure.length).toBeGreaterThan(10);
  });

  it('names every failing rule, in the order of the rules, and lists them in its details', async () => {
    await makePutApprovalRules(world)(admin, pipeline.id, {
      ...APPROVAL_RULE_DEFAULTS,
      requireEvaluation: true,
      forbidSelfApproval: true,
    });
    const error = await rejection(
      enforceApprovalRules(
        world.approvalRules,
        member,
        { act: 'approve', pipelineId: pipeline.id, run: run() },
        undefined,
      ),
    );
    expect(error.message).toBe(
      "The pipeline's approval rules refuse this approval: " +
        'The pipeline requires an evaluation: replay the evaluation set (pipeline-synthesis evaluate) before approving. ' +
        'The pipeline forbids approving a run you started: another person must approve it.',
    );
    expect(error).toMatchObject({ details: { rules: ['requireEvaluation', 'forbidSelfApproval'] } });
  });

  it('answers the override reason of an admin, else null', async () => {
    const act = { act: 'activate' as const, pipelineId: pipeline.id, run: null };
    expect(await enforceApprovalRules(world.approvalRules, admin, act, { reason: 'hotfix' })).toBe('hotfix');
    expect(await enforceApprovalRules(world.approvalRules, admin, act, undefined)).toBeNull();
  });
});
