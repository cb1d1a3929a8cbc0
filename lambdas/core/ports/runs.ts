/*
 * Ports of synthesis runs: the run repository and its state changes, the evidence a run keeps,
 * Idempotency-Keys, the team quota and the job queue. Every repository speaks in the records of
 * core/schemas/.
 */
import type { DomainEvent } from '../events.ts';
import type { Page } from '../schemas/common.ts';
import type { Configuration } from '../schemas/pipelines.ts';
import type { Execution, Signal } from '../schemas/records.ts';
import type { SynthesisJob, SynthesisRun } from '../schemas/runs.ts';
import type { PageRequest } from './common.ts';
import type { ApprovalPlan } from './review.ts';
import type { SynthesisUsage } from './synthesis.ts';

export interface RunRepository {
  /** Stores a new run; a run with the same id is a ConflictError. */
  create(run: SynthesisRun): Promise<void>;
  get(id: string): Promise<SynthesisRun | null>;
  /**
   * The run as the API shows it: null also when its pipeline's deletion hid it (one read: the
   * poll stays one GetItem). The one way a deleted pipeline's runs are hidden from every reader.
   */
  getVisible(id: string): Promise<SynthesisRun | null>;
  /** Hides every run of a pipeline being deleted (getVisible answers null); how many it hid. */
  hidePipelineRuns(pipelineId: string, at: string): Promise<number>;
  /**
   * pending → generating, or re-claims a `generating` run whose lease started before `staleBefore`
   * (its worker died). Says what it found when the run is not claimable.
   */
  claim(id: string, startedAt: string, staleBefore: string): Promise<ClaimResult>;
  /**
   * generating → generated with the proposal, and the proposed configuration stored, in one
   * transaction; the configuration's version comes from the pipeline's atomic counter, so runs of
   * one pipeline never contend. A run that changes nothing stores no configuration (`proposed` null)
   * and takes no version. A lost lease (another worker re-claimed the run) is a ConflictError.
   */
  completeGenerated(
    run: SynthesisRun,
    proposed: Omit<Configuration, 'version'> | null,
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
  /**
   * A chain: its first run and every refinement of it, in the order they were created (one GetItem
   * and one BatchGetItem: a chain holds at most MAX_CHAIN_RUNS). Runs hidden by a deletion are left out.
   */
  listChain(rootRunId: string): Promise<SynthesisRun[]>;
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
   * Each copy expires with its record (DynamoDB TTL, from the team's windows in days): a cited
   * record is not kept longer than the record itself.
   */
  save(
    runId: string,
    evidence: { signals: Signal[]; executions: Execution[] },
    retention: { signalDays: number; executionDays: number },
  ): Promise<void>;
  load(runId: string): Promise<{ signals: Signal[]; executions: Execution[] }>;
  /** Removes the run's copies (a run whose pipeline was deleted while it generated keeps none). */
  remove(runId: string): Promise<void>;
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

export interface JobQueue {
  /** Queues a run's job; its team is the message group that fair queueing shares the worker by. */
  send(job: Required<SynthesisJob>): Promise<void>;
}

/** Counts uses of something per time window (the per-team synthesis quota). */
export interface QuotaStore {
  /** Counts one use of `key` in the window; false, counting nothing, when `limit` uses are already counted. */
  consume(key: string, window: { start: string; end: string }, limit: number): Promise<boolean>;
}
