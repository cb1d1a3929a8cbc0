/*
 * The port of the spans (and evaluation results of OTLP logs) staged under their trace until (and
 * after) the trace becomes an execution.
 */
import type { EvaluationRecord } from '../otlp/logs.ts';
import type { TraceSpan } from '../otlp/spans.ts';
import type { Execution } from '../schemas/records.ts';
import type { Rollout } from '../schemas/rollouts.ts';

/** The spans of one trace that one request brought. */
export interface TracePart {
  traceId: string;
  spans: TraceSpan[];
  /** The part holds its trace's root and every span's parent: the trace whole, unless spans came before. */
  whole: boolean;
  /** Evaluation results (OTLP log records) of the trace, staged beside its spans (a part of no spans). */
  records?: EvaluationRecord[];
}

/** What is staged of one trace: each span once (by span id), each evaluation result once (by id). */
export interface StagedTrace {
  spans: TraceSpan[];
  records: EvaluationRecord[];
}

export interface TraceStaging {
  /**
   * Stores each part under its trace (partitioned by the trace id, never by the pipeline alone),
   * kept until `expiresAt`. Storing the same spans again changes nothing a reader sees.
   */
  stage(pipelineId: string, parts: readonly TracePart[], expiresAt: Date): Promise<void>;
  /**
   * Of these traces, those with spans staged from a part that was not whole (read after staging,
   * consistently): a whole part of any other is its trace entire, assembled without reading it.
   */
  partial(pipelineId: string, traceIds: readonly string[]): Promise<Set<string>>;
  /**
   * Of these traces, those whose id is an execution's already recorded in the pipeline (through a
   * trace or POST …/executions), read consistently: the others' executions are new.
   */
  recorded(pipelineId: string, traceIds: readonly string[]): Promise<Set<string>>;
  /** Every span and evaluation result stored for the trace so far, each once. */
  stagedOf(pipelineId: string, traceId: string): Promise<StagedTrace>;
}

/**
 * Replacing an execution assembled from a trace by the one assembled from more of its spans: the
 * execution (same id, same pipeline) is replaced only when `spanCount` is above the count it was
 * assembled from, so a request that read fewer spans never overwrites one that read more:
 * `revised` when replaced, `kept` when the stored one read as many, `foreign` when the stored
 * execution of that id was not assembled from a trace (recorded through POST …/executions), which a
 * trace never changes. Kept beside the repository's recording (same table, same keys, same TTL).
 */
export type ReviseExecution = (
  execution: Execution & { spanCount: number },
  retentionDays: number,
  /** The pipeline's rollout: a revision changing an arm or a status moves its counts with it. */
  rollout: Pick<
    Rollout,
    'id' | 'baseConfigurationId' | 'candidateConfigurationId' | 'startedAt' | 'guardrails' | 'step'
  > | null,
) => Promise<'revised' | 'kept' | 'foreign'>;
