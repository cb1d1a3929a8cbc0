/*
 * The ports the use cases need: store/, sqs/ and wiring/ implement them, tests fake them. Every
 * repository speaks in the records of core/schemas.ts.
 */
import type { SpentUsage } from './errors.ts';
import type { DomainEvent } from './events.ts';
import type {
  Activation,
  Change,
  Confidence,
  Configuration,
  Diagnosis,
  Execution,
  Page,
  Pipeline,
  Signal,
  Slot,
  StructuredWarning,
  SynthesisJob,
  SynthesisRun,
} from './schemas.ts';

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
    decision: { at: string; by: string },
    activation: Activation,
    /** synthesis_run.approved and configuration.activated, written in the same transaction. */
    events: DomainEvent[],
  ): Promise<SynthesisRun>;
  /** generated → rejected; any other status is a ConflictError naming it. Writes `event` with it. */
  reject(
    run: SynthesisRun,
    decision: { at: string; by: string; reason: string | null },
    event: DomainEvent,
  ): Promise<SynthesisRun>;
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
  save(runId: string, evidence: { signals: Signal[]; executions: Execution[] }): Promise<void>;
  load(runId: string): Promise<{ signals: Signal[]; executions: Execution[] }>;
}

export interface IdempotencyRecord {
  requestHash: string;
  runId: string;
  expiresAt: string;
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
  getPipeline(id: string): Promise<Pipeline | null>;
  listPipelines(teamId: string, page: PageRequest): Promise<Page<Pipeline>>;
  getConfiguration(pipelineId: string, configurationId: string): Promise<Configuration | null>;
  /**
   * All or nothing: an id names one signal of a pipeline, so a signal whose id is already recorded
   * there (with any time) is a ConflictError naming it, and nothing of the batch is stored.
   */
  recordSignals(signals: Signal[]): Promise<void>;
  /** As recordSignals: an execution id names one execution of its pipeline. */
  recordExecutions(executions: Execution[]): Promise<void>;
  /** The newest `limit` signals, newest first: one bounded Query, whatever the history size. */
  recentSignals(pipelineId: string, limit: number): Promise<Signal[]>;
  recentExecutions(pipelineId: string, limit: number): Promise<Execution[]>;
  /**
   * Makes `activation.configurationId` active, on the condition that the active one is still
   * `activation.previousConfigurationId`; records the activation. A ConflictError otherwise.
   */
  activateConfiguration(activation: Activation, event: DomainEvent): Promise<void>;
  /** The pipeline's activations, newest first. */
  listActivations(pipelineId: string, page: PageRequest): Promise<Page<Activation>>;
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
