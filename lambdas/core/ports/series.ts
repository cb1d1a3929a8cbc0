/*
 * The port of a pipeline's series (store/series.ts): buckets of counters kept with the recording,
 * read back for the metrics answer and merged over a window for a monitor.
 */
import type { DomainEvent } from '../events.ts';
import type { Bucket, Step } from '../series.ts';

export interface SeriesRead {
  pipelineId: string;
  /** Milliseconds, aligned to the step's start; the buckets starting in [from, to). */
  from: number;
  to: number;
  step: Step;
  /** One series per configuration (executions only; signals name no configuration) besides the whole. */
  byConfiguration: boolean;
  /** The team's retention (days): how long the packs a read writes are kept. */
  retentionDays: number;
}

/** What a read cost, for the bench and the tests (bounded whatever the traffic). */
export interface SeriesReadStats {
  queries: number;
  itemsRead: number;
  /** The read capacity units DynamoDB reported for them (strongly consistent: 4 KB an item or page). */
  readUnits?: number;
}

export interface SeriesReads {
  /** The pipeline's buckets (every bucket of the range, empty ones as zeros), and per configuration when asked. */
  read(
    request: SeriesRead,
    stats?: SeriesReadStats,
  ): Promise<{ all: Bucket[]; byConfiguration: Map<string, Bucket[]> }>;
  /**
   * The minutes starting in [from, to) merged into one bucket (a monitor's trailing window): exact
   * counts and means, percentiles from the merged histograms.
   */
  window(pipelineId: string, from: number, to: number, retentionDays?: number): Promise<Bucket>;
}

/** The pipeline's events of the annotated types in [from, to), oldest first (store/events.ts). */
export interface PipelineMoments {
  list(teamId: string, pipelineId: string, from: string, to: string, limit: number): Promise<DomainEvent[]>;
}
