/* The port of monitors (store/monitors.ts): a pipeline's monitors, every monitor for the judge, and the judge's writes. */
import type { DomainEvent } from '../events.ts';
import type { Page } from '../schemas/common.ts';
import type { MonitorRecord, MonitorState } from '../schemas/monitors.ts';
import type { PageRequest } from './common.ts';

/** The fields a PATCH may change, with its time. */
export type MonitorChanges = Partial<
  Pick<
    MonitorRecord,
    'name' | 'metric' | 'kind' | 'comparator' | 'threshold' | 'windowMinutes' | 'minExecutions'
  >
> & { updatedAt: string };

/** One judgement of a monitor: its state, since when, and the value it saw. */
export interface Judgement {
  state: MonitorState;
  since: string;
  lastValue: number | null;
  judgedAt: string;
}

export interface MonitorRepository {
  /** Stores a new monitor; the pipeline's `maxPerPipeline`-th + 1 is a ValidationError naming the cap. */
  create(monitor: MonitorRecord, maxPerPipeline: number): Promise<void>;
  /** A pipeline's monitors, newest first (their ids sort by creation), a page at a time. */
  list(pipelineId: string, page: PageRequest): Promise<Page<MonitorRecord>>;
  get(pipelineId: string, monitorId: string): Promise<MonitorRecord | null>;
  /** Changes the definition and answers the monitor as stored; a missing one is a NotFoundError. */
  update(pipelineId: string, monitorId: string, changes: MonitorChanges): Promise<MonitorRecord>;
  /** Deletes it; a missing one is a NotFoundError. */
  remove(pipelineId: string, monitorId: string): Promise<void>;
  /** Every monitor of every pipeline, a page of the index at a time (cursor null: the start; answered null: the end). */
  listAll(cursor: string | null, limit: number): Promise<{ items: MonitorRecord[]; cursor: string | null }>;
  /**
   * Writes a judgement if the monitor is still at `stateSeq` (no other judge changed its state
   * since it was read, and it still exists); a judgement of another state than `state` moves
   * stateSeq on one, and `event` is written in the same transaction. 'stale' when the condition failed.
   */
  recordJudgement(
    monitor: Pick<MonitorRecord, 'pipelineId' | 'id' | 'stateSeq' | 'state'>,
    judgement: Judgement,
    event: DomainEvent | null,
  ): Promise<'written' | 'stale'>;
}
