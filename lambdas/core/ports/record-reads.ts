/*
 * The port of reading a pipeline's executions and signals back (the listings): newest first, from
 * the retention window's lower bound, filtered, a page at a time (the store merges the records'
 * shards; a page's cursor holds where every shard is read).
 */
import type { Page } from '../schemas/common.ts';
import type { Execution, Signal } from '../schemas/records.ts';
import type { PageRequest } from './common.ts';

/** Which records: nothing older than `since` (the window), and the listed fields equal. */
export interface ExecutionFilter {
  since: string;
  status?: Execution['status'] | undefined;
  configurationId?: string | undefined;
}

export interface SignalFilter {
  since: string;
  /** Nothing newer than this (a bounded read around one execution). */
  until?: string | undefined;
  kind?: string | undefined;
  slotId?: string | undefined;
  severity?: string | undefined;
  executionId?: string | undefined;
}

export interface RecordReads {
  listExecutions(pipelineId: string, filter: ExecutionFilter, page: PageRequest): Promise<Page<Execution>>;
  /** One execution by its id (null when there is none inside the window). */
  getExecution(pipelineId: string, executionId: string, since: string): Promise<Execution | null>;
  listSignals(pipelineId: string, filter: SignalFilter, page: PageRequest): Promise<Page<Signal>>;
}
