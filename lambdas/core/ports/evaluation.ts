/* The port of a run's evaluation: its set of cases, chosen once, and the runners' results. */
import type { EvaluationCaseRef, ExecutionStub } from '../evaluation.ts';
import type { DomainEvent } from '../events.ts';
import type { EvaluationSummary, StoredEvaluationResult } from '../schemas/evaluation.ts';
import type { Execution } from '../schemas/records.ts';

/** The cases chosen for a run's evaluation, once. */
export interface StoredEvaluationSet {
  chosenAt: string;
  cases: EvaluationCaseRef[];
  /** The chain's first run, whose id drew the held-out cases (absent on sets chosen before chains). */
  rootRunId?: string | undefined;
}

/** A run's evaluation set and results (per case and arm), and the run's stored summary. */
export interface EvaluationStore {
  getSet(runId: string): Promise<StoredEvaluationSet | null>;
  /** Stores the set unless one is stored already; answers the set that is stored. */
  saveSetOnce(runId: string, set: StoredEvaluationSet): Promise<StoredEvaluationSet>;
  /**
   * The pipeline's executions that started at `since` or later, read across that time range (a
   * few bounded Queries) without their details: what the set's failed and succeeded cases are
   * chosen from.
   */
  sampleExecutions(pipelineId: string, since: string): Promise<ExecutionStub[]>;
  /** The executions named, read by key; missing ones are left out. */
  loadExecutions(pipelineId: string, refs: Array<{ id: string; startedAt: string }>): Promise<Execution[]>;
  /** Every stored result of the run. */
  listResults(runId: string): Promise<StoredEvaluationResult[]>;
  /**
   * Stores the results (a later one for a case and arm replaces the earlier), then rewrites the
   * run's `evaluation` from every stored result. Two batches at once lose nothing: the last to
   * finish writing sums them all. A run that is no longer generated is a ConflictError.
   */
  recordResults(
    runId: string,
    results: StoredEvaluationResult[],
    summarize: (all: StoredEvaluationResult[]) => EvaluationSummary,
    /** synthesis_run.evaluated for the summary stored as the `sequence`-th, written with it. */
    eventOf: (sequence: number) => DomainEvent,
  ): Promise<EvaluationSummary>;
}
