/* Ports of a review: what an approval writes with the run, and a pipeline's approval rules. */
import type { DomainEvent } from '../events.ts';
import type { Activation, Configuration, ServingState } from '../schemas/pipelines.ts';
import type { StoredApprovalRules } from '../schemas/review.ts';
import type { Rollout } from '../schemas/rollouts.ts';

/**
 * What an approval writes, in one transaction with the run's move to approved: either an
 * activation or a rollout start, conditioned on the pipeline's active configuration still being
 * `activation.previousConfigurationId` / `rollout.baseConfigurationId` and on no active rollout.
 */
export interface ApprovalPlan {
  approvedChangeIds: string[];
  appliedConfigurationId: string;
  /** A configuration made for this approval (part of the changes, or rebased); null: the proposal as is. */
  newConfiguration: Configuration | null;
  activation: Activation | null;
  rollout: Rollout | null;
  /** What serving reads afterwards, written in the same transaction. */
  serving: ServingState;
}

/** A pipeline's approval rules; null when it has none stored (the defaults apply). */
export interface ApprovalRulesStore {
  get(pipelineId: string): Promise<StoredApprovalRules | null>;
  /** Replaces the rules; `event` (approval_rules.updated) is written in the same atomic write. */
  put(rules: StoredApprovalRules, event: DomainEvent): Promise<void>;
}
