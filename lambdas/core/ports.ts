/*
 * The ports the use cases need: store/, sqs/ and wiring/ implement them, tests fake them. Every
 * repository speaks in the records of core/schemas.ts.
 */

import type { SpentUsage } from './errors.ts';
import type { EvaluationCaseRef, ExecutionStub } from './evaluation.ts';
import type { DomainEvent } from './events.ts';
import type { ArmWindow, EffectState, RecordedExecution, RecordedSignal } from './rollouts/effect-state.ts';
import type { Page } from './schemas/common.ts';
import type { EvaluationSummary, StoredEvaluationResult } from './schemas/evaluation.ts';
import type { Activation, Configuration, Pipeline, ServingState, Slot } from './schemas/pipelines.ts';
import type { Execution, Signal } from './schemas/records.ts';
import type { StoredApprovalRules } from './schemas/review.ts';
import type { Effect, Rollout } from './schemas/rollouts.ts';
import type {
  Change,
  Confidence,
  Diagnosis,
  StructuredWarning,
  SynthesisJob,
  SynthesisRun,
} from './schemas/runs.ts';

export interface Clock {
  now(): Date;
}

export interface IdGenerator {
  newId(): string;
}

export interface PageRequest {
  limit: number;
  cursor?: string | undefined;
}

export interface RunRepository {
  /** Stores a new run; a run with the same id is a ConflictError. */
  create(run: SynthesisRun): Promise<void>;
  get(id: string): Promise<SynthesisRun | null>;
  /**
   * The run as the API shows it: null also when its pipeline's deletion hid it (one read: the
   * poll stays one GetItem). Without it, `get` serves.
   */
  getVisible?(id: string): Promise<SynthesisRun | null>;
  /** Hides every run of a pipeline being deleted (getVisible answers null); how many it hid. */
  hidePipelineRuns?(pipelineId: string, at: string): Promise<number>;
  /**
   * pending → generating, or re-claims a `generating` run whose lease started before `staleBefore`
   * (its worker died). Says what it found when the run is not claimable.
   */
  claim(id: string, startedAt: string, staleBefore: string): Promise<ClaimResult>;
  /**
   * generating → generated with the proposal, and the proposed configuration stored, in one
   * transaction; the configuration's version comes from the pipeline's atomic counter, so runs of
   * one pipeline never contend. A lost lease (another worker re-claimed the run) is a ConflictError.
   */
  completeGenerated(
    run: SynthesisRun,
    proposed: Omit<Configuration, 'version'>,
    leaseStartedAt: string,
    /** synthesis_run.generated, written in the same transaction. */
    event: DomainEvent,
  ): Promise<SynthesisRun>;
  /**
   * generating → pending with `retryReason`: releases this attempt's lease (only if it still holds
   * it) so that the retry, seconds later, claims the run at once.
   */
  releaseForRetry(id: string, reason: string, leaseStartedAt: string): Promise<void>;
  /** Runs in `status` created before `createdBefore`, oldest first: what the sweeper looks at. */
  listStale(status: 'pending' | 'generating', createdBefore: string, limit: number): Promise<SynthesisRun[]>;
  /** Marks the run failed if it is in one of `from`; returns the failed run, or null if it was not. */
  fail(
    id: string,
    errorMessage: string,
    at: string,
    from: SynthesisRun['status'][],
    /** What a model call that ended in failure cost, when one was made. */
    usage: SynthesisUsage | undefined,
    /** synthesis_run.failed, written only if the run is failed now (same transaction). */
    event: DomainEvent,
  ): Promise<SynthesisRun | null>;
  /** A pipeline's runs, newest first, optionally only those in one status. */
  listByPipeline(
    pipelineId: string,
    page: PageRequest,
    filter?: { status?: SynthesisRun['status'] | undefined },
  ): Promise<Page<SynthesisRun>>;
  /**
   * generated → approved and the pipeline's active configuration base → proposed, with the
   * activation recorded, in one transaction. A run no longer `generated` or a pipeline whose active
   * configuration is no longer the run's base is a ConflictError, and nothing changes.
   */
  approve(
    run: SynthesisRun,
    decision: { at: string; by: string; overrideReason?: string | null },
    plan: ApprovalPlan,
    /** synthesis_run.approved, and configuration.activated or rollout.started, written in the same transaction. */
    events: DomainEvent[],
  ): Promise<SynthesisRun>;
  /** generated → rejected; any other status is a ConflictError naming it. Writes `event` with it. */
  reject(
    run: SynthesisRun,
    decision: { at: string; by: string; reason: string | null },
    event: DomainEvent,
  ): Promise<SynthesisRun>;
}

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
  serving?: ServingState;
}

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
  serving?: ServingState;
  /** rollout.promoted (with configuration.activated) or rollout.rolled_back, written with the end. */
  events?: DomainEvent[];
}

/** A run's kept effect: the measurement answered, its maintained state, and a version for conditional writes. */
export interface KeptEffect {
  effect: Effect;
  state: EffectState | null;
  version: number;
}

/** Rollouts, and the bounded reads the effect of an approval needs. */
export interface RolloutRepository {
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
  /** Active rollouts of every pipeline, oldest first, at most `limit`. */
  listActive(limit: number): Promise<Rollout[]>;
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
  /** The activation recorded at `activatedAt` for a run's approval, or null. */
  activationOfRun(pipelineId: string, activatedAt: string, runId: string): Promise<Activation | null>;
}

/** What a claim found. */
export type ClaimResult =
  | { outcome: 'claimed'; run: SynthesisRun }
  /** Generating under a live lease of another invocation (`generationStartedAt` + the lease length). */
  | { outcome: 'leased'; run: SynthesisRun }
  /** Already generated, failed, approved or rejected: nothing left to do. */
  | { outcome: 'finished'; run: SynthesisRun }
  | { outcome: 'missing' };

/** The records a run's findings cite, kept as they were when the run read them. */
export interface EvidenceStore {
  /**
   * With `retention` (the team's windows, in days), each copy expires with its record (DynamoDB
   * TTL): a cited record is not kept longer than the record itself.
   */
  save(
    runId: string,
    evidence: { signals: Signal[]; executions: Execution[] },
    retention?: { signalDays: number; executionDays: number },
  ): Promise<void>;
  load(runId: string): Promise<{ signals: Signal[]; executions: Execution[] }>;
  /** Removes the run's copies (a run whose pipeline was deleted while it generated keeps none). */
  remove?(runId: string): Promise<void>;
}

export interface IdempotencyRecord {
  requestHash: string;
  runId: string;
  expiresAt: string;
  /** The pipeline the request names: its deletion removes the key too. */
  pipelineId?: string;
}

/** Idempotency keys of POST …/synthesize, scoped to a team. */
export interface IdempotencyStore {
  find(scope: string, key: string): Promise<IdempotencyRecord | null>;
  /** Claims the key unless a live record holds it; false when another request got there first. */
  reserve(scope: string, key: string, record: IdempotencyRecord, now: string): Promise<boolean>;
  /** Keeps the key for `expiresAt` once its run exists (a reservation alone lapses within seconds). */
  confirm(scope: string, key: string, runId: string, expiresAt: string): Promise<void>;
  release(scope: string, key: string): Promise<void>;
}

export interface PipelineRepository {
  /** Stores the pipeline and its first configuration together. */
  createPipeline(pipeline: Pipeline, configuration: Configuration): Promise<void>;
  /** What serving needs, in one read; null for a pipeline stored before it was kept. */
  getServingState?(pipelineId: string): Promise<ServingState | null>;
  getPipeline(id: string): Promise<Pipeline | null>;
  listPipelines(teamId: string, page: PageRequest): Promise<Page<Pipeline>>;
  getConfiguration(pipelineId: string, configurationId: string): Promise<Configuration | null>;
  /**
   * All or nothing: an id names one signal of a pipeline, so a signal whose id is already recorded
   * there (with any time) is a ConflictError naming it, and nothing of the batch is stored.
   */
  recordSignals(signals: Signal[], retentionDays?: number): Promise<void>;
  /** As recordSignals: an execution id names one execution of its pipeline. */
  recordExecutions(executions: Execution[], retentionDays?: number): Promise<void>;
  /**
   * The newest `limit` signals, newest first: one bounded Query, whatever the history size. With
   * `since` (the retention window's lower bound, core/lifecycle.ts) nothing older is read at all.
   */
  recentSignals(pipelineId: string, limit: number, since?: string): Promise<Signal[]>;
  recentExecutions(pipelineId: string, limit: number, since?: string): Promise<Execution[]>;
  /**
   * Makes `activation.configurationId` active, on the condition that the active one is still
   * `activation.previousConfigurationId`; records the activation. A ConflictError otherwise.
   */
  activateConfiguration(activation: Activation, event: DomainEvent, serving?: ServingState): Promise<void>;
  /** The pipeline's activations, newest first. */
  listActivations(pipelineId: string, page: PageRequest): Promise<Page<Activation>>;
}

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

export interface JobQueue {
  /** Queues a run's job; its team is the message group that fair queueing shares the worker by. */
  send(job: Required<SynthesisJob>): Promise<void>;
}

/** What a synthesis handler sees: the base configuration and bounded windows of evidence. */
export interface SynthesisContext {
  pipeline: Pipeline;
  baseConfiguration: Configuration;
  /** Newest first, at most SIGNAL_WINDOW. */
  signals: Signal[];
  /** Newest first, at most EXECUTION_WINDOW. */
  executions: Execution[];
  /** When the base configuration became active (its activation), if it was activated after creation. */
  activeSince?: string | null;
  /** The configuration the base replaced, when known: which settings the last activation changed. */
  previousConfiguration?: Configuration | null;
}

/** What generating a run cost: the model, its tokens over all requests, the requests made. */
export type SynthesisUsage = SpentUsage;

/** A finished proposal: references already mapped and checked by code, never by the model. */
export interface SynthesisProposal {
  diagnosis: Diagnosis;
  changes: Change[];
  structuredWarnings: StructuredWarning[];
  confidence: Confidence;
  analyzedSignalIds: string[];
  analyzedExecutionIds: string[];
  proposedSlots: Slot[];
  usage?: SynthesisUsage;
}

export interface SynthesisEngine {
  readonly name: string;
  generate(context: SynthesisContext): Promise<SynthesisProposal>;
}

export const SIGNAL_WINDOW = 200;
export const EXECUTION_WINDOW = 200;

/** Counts uses of something per time window (the per-team synthesis quota). */
export interface QuotaStore {
  /** Counts one use of `key` in the window; false, counting nothing, when `limit` uses are already counted. */
  consume(key: string, window: { start: string; end: string }, limit: number): Promise<boolean>;
}

/** The cases chosen for a run's evaluation, once. */
export interface StoredEvaluationSet {
  chosenAt: string;
  cases: EvaluationCaseRef[];
}

/** A run's evaluation set and results (per case and arm), and the run's stored summary. */
export interface EvaluationStore {
  getSet(runId: string): Promise<StoredEvaluationSet | null>;
  /** Stores the set unless one is stored already; answers the set that is stored. */
  saveSetOnce(runId: string, set: StoredEvaluationSet): Promise<StoredEvaluationSet>;
  /**
   * The pipeline's executions read across its whole time range (a few bounded Queries), without
   * their details: what the set's failed and succeeded cases are chosen from.
   */
  /** Executions spread over the history that started at `since` or later (all when absent). */
  sampleExecutions(pipelineId: string, since?: string): Promise<ExecutionStub[]>;
  /** The executions named, read by key; missing ones are left out. */
  loadExecutions(pipelineId: string, refs: Array<{ id: string; startedAt: string }>): Promise<Execution[]>;
  /**
   * Stores the results (a later one for a case and arm replaces the earlier), then rewrites the
   * run's `evaluation` from every stored result. Two batches at once lose nothing: the last to
   * finish writing sums them all. A run that is no longer generated is a ConflictError.
   */
  /** Every stored result of the run. */
  listResults(runId: string): Promise<StoredEvaluationResult[]>;
  recordResults(
    runId: string,
    results: StoredEvaluationResult[],
    summarize: (all: StoredEvaluationResult[]) => EvaluationSummary,
    /** synthesis_run.evaluated for the summary stored as the `sequence`-th, written with it. */
    eventOf?: (sequence: number) => DomainEvent,
  ): Promise<EvaluationSummary>;
}

/** A pipeline's approval rules; null when it has none stored (the defaults apply). */
export interface ApprovalRulesStore {
  get(pipelineId: string): Promise<StoredApprovalRules | null>;
  /** Replaces the rules; `event` (approval_rules.updated) is written in the same atomic write. */
  put(rules: StoredApprovalRules, event?: DomainEvent): Promise<void>;
}
