/*
 * Reading back what a pipeline recorded (through the API or from its traces): its executions
 * newest first, one execution with the signals citing it, its signals; nothing outside the
 * team's retention windows.
 */
import { NotFoundError, ValidationError } from '../errors.ts';
import { retentionWindow, type TeamSettingsStore } from '../lifecycle.ts';
import type { Clock, PageRequest } from '../ports/common.ts';
import type { PipelineReads } from '../ports/pipelines.ts';
import type { ExecutionFilter, RecordReads, SignalFilter } from '../ports/record-reads.ts';
import type { Principal } from '../principal.ts';
import type { Execution, Signal } from '../schemas/records.ts';
import { loadOwnedPipeline } from './pipelines.ts';

export interface RecordReadDeps {
  pipelines: PipelineReads;
  settings: TeamSettingsStore;
  reads: RecordReads;
  clock: Clock;
}

/** The signals shown with an execution: those citing it recorded within this long of its start. */
export const CITING_WINDOW_MS = 7 * 86_400_000;
/** At most this many of them. */
export const CITING_SIGNALS = 100;

async function windowFor(deps: RecordReadDeps, principal: Principal, pipelineId: string) {
  const pipeline = await loadOwnedPipeline(deps.pipelines, principal, pipelineId);
  return retentionWindow(await deps.settings.get(pipeline.teamId), deps.clock.now());
}

/** The pipeline's executions, newest first, by status and configuration. */
export function makeListExecutions(deps: RecordReadDeps) {
  return async (
    principal: Principal,
    pipelineId: string,
    filter: Omit<ExecutionFilter, 'since'>,
    page: PageRequest,
  ) => {
    const window = await windowFor(deps, principal, pipelineId);
    return deps.reads.listExecutions(pipelineId, { ...filter, since: window.executionsSince }, page);
  };
}

/** One execution (its slots and source) and the signals citing it, bounded. */
export function makeGetExecution(deps: RecordReadDeps) {
  return async (
    principal: Principal,
    pipelineId: string,
    executionId: string,
  ): Promise<{ execution: Execution & { source: 'api' | 'otlp' }; signals: Signal[] }> => {
    const window = await windowFor(deps, principal, pipelineId);
    const execution = await deps.reads.getExecution(pipelineId, executionId, window.executionsSince);
    if (!execution)
      throw new NotFoundError(`Execution ${executionId} of pipeline ${pipelineId} does not exist.`);
    const since = execution.startedAt > window.signalsSince ? execution.startedAt : window.signalsSince;
    const until = new Date(Date.parse(execution.startedAt) + CITING_WINDOW_MS).toISOString();
    const signals = await deps.reads.listSignals(
      pipelineId,
      { since, until, executionId },
      { limit: CITING_SIGNALS },
    );
    return { execution: { ...execution, source: execution.source ?? 'api' }, signals: signals.items };
  };
}

/** Which signals a listing asks for: the store's filters and a time window of its own. */
export type SignalListing = Omit<SignalFilter, 'since' | 'until'> & {
  /** At or after (occurredAt); the retention window's start when earlier or absent. */
  occurredFrom?: string | undefined;
  /** At or before (occurredAt). */
  occurredUntil?: string | undefined;
};

/** The pipeline's signals, newest first, by kind, slot, severity and time. */
export function makeListSignals(deps: RecordReadDeps) {
  return async (principal: Principal, pipelineId: string, listing: SignalListing, page: PageRequest) => {
    const { occurredFrom: from, occurredUntil: to, ...filter } = listing;
    // The keys hold times as toISOString writes them (milliseconds): "…00Z" would sort after "…00.000Z".
    const occurredFrom = from && new Date(from).toISOString();
    const occurredUntil = to && new Date(to).toISOString();
    if (occurredFrom && occurredUntil && occurredFrom > occurredUntil)
      throw new ValidationError(`since (${from}) is after until (${to}).`);
    const window = await windowFor(deps, principal, pipelineId);
    const since = occurredFrom && occurredFrom > window.signalsSince ? occurredFrom : window.signalsSince;
    // A window that ends before retention's start holds nothing: answered without a read (DynamoDB
    // refuses a key range whose end is before its start).
    if (occurredUntil && occurredUntil < since) return { items: [], nextCursor: null };
    return deps.reads.listSignals(
      pipelineId,
      { ...filter, since, ...(occurredUntil ? { until: occurredUntil } : {}) },
      page,
    );
  };
}
