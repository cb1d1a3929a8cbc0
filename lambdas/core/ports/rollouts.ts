/*
 * Ports of rollouts: ending one, the bounded reads and the kept state of an approval's effect, and
 * the guardrail queue.
 */

import type { DomainEvent } from '../events.ts';
import type { ArmCounts } from '../rollouts/effect.ts';
import type { ArmWindow, EffectState, RecordedExecution, RecordedSignal } from '../rollouts/effect-state.ts';
import type { Activation, ServingState } from '../schemas/pipelines.ts';
import type { Effect, Rollout } from '../schemas/rollouts.ts';

/** How a rollout ends. */
export interface RolloutEnd {
  status: 'promoted' | 'rolled_back';
  at: string;
  /** A user id, or "system" for a guardrail. */
  by: string;
  reason: string | null;
  /** Promote: the candidate's activation (source "rollout"), written with the end. */
  activation: Activation | null;
  /** What serving reads afterwards, written in the same transaction. */
  serving: ServingState;
  /** rollout.promoted (with configuration.activated) or rollout.rolled_back, written with the end. */
  events: DomainEvent[];
}

/** A rollout's move to its next step. */
export interface RolloutStep {
  step: number;
  percent: number;
  at: string;
  serving: ServingState;
  /** rollout.stepped, written with the step. */
  events: DomainEvent[];
}

/** One judgement of a rollout as the chart draws it: per guarded metric, the difference and its interval. */
export interface JudgementPoint {
  at: string;
  /** The candidate's executions so far. */
  n: number;
  step: number;
  /** In the order of the rollout's guards; null while a metric has no interval. */
  metrics: Array<{ difference: number; interval: [number, number]; worseBound?: number } | null>;
}

/** A run's kept effect: the measurement answered, its maintained state, and a version for conditional writes. */
export interface KeptEffect {
  effect: Effect;
  state: EffectState | null;
  version: number;
}

/** Rollouts: a pipeline's latest, one by its key, ending one, the active ones; and configuration versions. */
export interface RolloutStore {
  /** The next configuration version of the pipeline (its atomic counter). */
  nextConfigurationVersion(pipelineId: string): Promise<number>;
  /** The pipeline's active rollout or, when none is active, its latest; null when it never had one. */
  latest(pipelineId: string): Promise<Rollout | null>;
  get(key: { pipelineId: string; startedAt: string; id: string }): Promise<Rollout | null>;
  /**
   * Ends the active rollout (and, promoting, activates its candidate) in one transaction; a
   * rollout no longer active, or ended by another request at the same moment, is a ConflictError.
   */
  end(rollout: Rollout, end: RolloutEnd): Promise<Rollout>;
  /**
   * Moves the active rollout from its current step to the next (its share, on the pipeline item
   * and in serving) with its events, in one transaction; a rollout no longer at that step or no
   * longer active is a ConflictError.
   */
  step(rollout: Rollout, next: RolloutStep): Promise<Rollout>;
  /** Active rollouts of every pipeline, oldest first, at most `limit`. */
  listActive(limit: number): Promise<Rollout[]>;
  /** The activation recorded at `activatedAt` for a run's approval, or null. */
  activationOfRun(pipelineId: string, activatedAt: string, runId: string): Promise<Activation | null>;
}

/** The bounded reads the effect of an approval needs, and its kept state. */
export interface EffectStore {
  /**
   * Executions that ran a configuration recorded after `after` (a recording key or time, exclusive)
   * and before `recordedBefore`, started within the window's start bounds, newest recorded first,
   * at most `limit`.
   */
  executionsRecorded(
    pipelineId: string,
    window: ArmWindow & { after: string },
    limit: number,
  ): Promise<RecordedExecution[]>;
  /** Signals citing an execution recorded after `after` (exclusive), newest recorded first, at most `limit`. */
  citingSignalsRecorded(pipelineId: string, after: string, limit: number): Promise<RecordedSignal[]>;
  /** A rollout's exact counts per arm, kept with the recording (zeros before any). */
  rolloutCounts(pipelineId: string, rolloutId: string): Promise<ArmCounts>;
  /** A rollout's judgements over time, oldest first (at most JUDGEMENT_HISTORY_LIMIT, thinned). */
  judgementHistory(pipelineId: string, rolloutId: string): Promise<JudgementPoint[]>;
  /** Keeps the history with one more point (thinned past its limit). */
  keepJudgementHistory(pipelineId: string, rolloutId: string, points: JudgementPoint[]): Promise<void>;
  /** A run's kept effect: the last measurement and the maintained state it came from (null: none, or unreadable). */
  keptEffect(pipelineId: string, runId: string): Promise<KeptEffect | null>;
  /**
   * Keeps a run's effect and state, conditioned on the version read (null: none was): false when
   * another measurement kept one meanwhile (nothing written). A state too large for one item is
   * not kept (the next measurement starts from scratch).
   */
  keepEffect(
    pipelineId: string,
    kept: Omit<KeptEffect, 'version'>,
    readVersion: number | null,
    expiresAtEpoch: number,
  ): Promise<boolean>;
}

/** Rollouts and the effect's reads: what measuring and judging a rollout needs. */
export type RolloutRepository = RolloutStore & EffectStore;

/** What the guardrail queue carries: judge this pipeline's rollout (if it is still active). */
export interface GuardrailCheck {
  pipelineId: string;
  rolloutId: string;
}

/** Asks for an active rollout to be judged by its guardrails soon (lambdas/handlers/judge-rollouts.ts). */
export interface GuardrailQueue {
  /** The team is the message group: one team's burst shares the queue fairly with the others. */
  send(check: GuardrailCheck, teamId: string): Promise<void>;
}

/**
 * The effect states this execution environment kept or found kept lately, per run (a few, the
 * newest kept): the next measurement of a run reads what was recorded after its marks at once,
 * beside the kept item. An adapter's memory, never the core's.
 */
export interface RecentEffectStates {
  get(pipelineId: string, runId: string): EffectState | undefined;
  remember(pipelineId: string, runId: string, state: EffectState): void;
}
