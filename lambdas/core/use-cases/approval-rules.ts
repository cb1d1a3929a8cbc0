/* A pipeline's approval rules: reading and changing them (admins), and enforcing them on approve. */
import { failingRules, judgedRegressions } from '../approval-rules.ts';
import { ConflictError, ForbiddenError } from '../errors.ts';
import { actorOf, newEvent } from '../events.ts';
import type { Clock, IdGenerator } from '../ports/common.ts';
import type { PipelineReads } from '../ports/pipelines.ts';
import type { ApprovalRulesStore } from '../ports/review.ts';
import type { Principal } from '../principal.ts';
import {
  APPROVAL_RULE_DEFAULTS,
  type ApprovalRules,
  type ApproveBody,
  type StoredApprovalRules,
} from '../schemas/review.ts';
import type { SynthesisRun } from '../schemas/runs.ts';
import { loadOwnedPipeline } from './pipelines.ts';

export interface ApprovalRulesDeps {
  pipelines: PipelineReads;
  approvalRules: ApprovalRulesStore;
  clock: Clock;
  /** Names each approval_rules.updated event (a change that repeats needs a fresh id each time). */
  ids: IdGenerator;
}

/** The rules in force for a pipeline: the stored ones, else the defaults. */
async function rulesInForce(store: ApprovalRulesStore, pipelineId: string): Promise<StoredApprovalRules> {
  return (
    (await store.get(pipelineId)) ?? {
      ...APPROVAL_RULE_DEFAULTS,
      pipelineId,
      updatedAt: null,
      updatedBy: null,
    }
  );
}

/** The pipeline's approval rules (its team's members may read them). */
export function makeGetApprovalRules({
  pipelines,
  approvalRules,
}: Pick<ApprovalRulesDeps, 'pipelines' | 'approvalRules'>) {
  return async (principal: Principal, pipelineId: string): Promise<StoredApprovalRules> => {
    await loadOwnedPipeline(pipelines, principal, pipelineId);
    return rulesInForce(approvalRules, pipelineId);
  };
}

/**
 * Replaces the pipeline's approval rules; admins only, and only from a person's session: the rules
 * say what a token may do (`allowApiTokens`), so a token must not be able to loosen them.
 */
export function makePutApprovalRules({ pipelines, approvalRules, clock, ids }: ApprovalRulesDeps) {
  return async (
    principal: Principal,
    pipelineId: string,
    rules: ApprovalRules,
  ): Promise<StoredApprovalRules> => {
    await loadOwnedPipeline(pipelines, principal, pipelineId);
    if (principal.role !== 'admin') {
      throw new ForbiddenError("Only a team admin may change a pipeline's approval rules.");
    }
    if (principal.method !== 'session') {
      throw new ForbiddenError(
        "A pipeline's approval rules are changed by a person, not with an API token: sign in (the review application or `pipeline-synthesis login`) and change them from that session.",
      );
    }
    const updatedAt = clock.now().toISOString();
    const stored: StoredApprovalRules = { ...rules, pipelineId, updatedAt, updatedBy: principal.userId };
    await approvalRules.put(
      stored,
      newEvent(
        'approval_rules.updated',
        { teamId: principal.teamId, pipelineId, actor: actorOf(principal) },
        { at: updatedAt, key: ids.newId() },
      ),
    );
    return stored;
  };
}

/** What the rules judge: the caller's act on a pipeline, and the run its configuration comes from. */
export interface RuledAct {
  act: 'approve' | 'activate';
  pipelineId: string;
  /** The run approved, or the run the configuration activated came from; null for a manual one. */
  run: SynthesisRun | null;
  /** The run's changes approved (or applied by the configuration activated); undefined: all. */
  changeIds?: readonly string[] | undefined;
}

/** What a person is told must be done by a person, by act. */
const PERSON_MUST: Record<RuledAct['act'], string> = {
  approve: 'approve',
  activate: 'change its active configuration',
};

/**
 * Refuses an approval or an activation the pipeline's rules forbid: 403 for an API token where a
 * person must act, 403 for an override by a non-admin, 409 naming every failing rule in
 * `details.rules` (the run's rules: none for a manual configuration). Answers the override reason
 * to store (null without one).
 */
export async function enforceApprovalRules(
  store: ApprovalRulesStore,
  principal: Principal,
  { act, pipelineId, run, changeIds }: RuledAct,
  override: ApproveBody['override'],
): Promise<string | null> {
  const rules = await rulesInForce(store, pipelineId);
  if (!rules.allowApiTokens && principal.method === 'api-token') {
    throw new ForbiddenError(
      `This pipeline's approval rules require a person to ${PERSON_MUST[act]}: sign in (the review application or \`pipeline-synthesis login\`) instead of using an API token.`,
    );
  }
  if (override && principal.role !== 'admin') {
    throw new ForbiddenError('Only a team admin may override the approval rules.');
  }
  const attempt = run
    ? {
        evaluation: run.evaluation,
        runChangeIds: run.changes.map((change) => change.id),
        chosenChangeIds: changeIds,
        triggeredBy: run.triggeredBy,
        approverUserId: principal.userId,
        overridden: override !== undefined,
      }
    : null;
  const failing = attempt ? failingRules(rules, attempt) : [];
  if (failing.length > 0) {
    const refused =
      act === 'approve'
        ? 'this approval'
        : `activating a configuration of run ${run?.id} (an admin may pass the evaluation rules with "override": {"reason"})`;
    throw new ConflictError(
      `The pipeline's approval rules refuse ${refused}: ${failing.map((failure) => failure.message).join(' ')}`,
      {
        details: {
          rules: failing.map((failure) => failure.rule),
          failures: failing,
          regressions: attempt ? judgedRegressions(attempt) : null,
        },
      },
    );
  }
  return override?.reason ?? null;
}
