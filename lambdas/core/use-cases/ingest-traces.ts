/*
 * OTLP traces into executions and signals: the spans are staged under their trace, then every
 * trace whose root has arrived is (re)assembled from all its stored spans and recorded through the
 * same use cases as POST …/executions and POST …/signals (docs/opentelemetry.md, "Assembly").
 */

import { ConflictError, PayloadTooLargeError } from '../errors.ts';
import { retentionWindow, type TeamSettingsStore } from '../lifecycle.ts';
import { type AssembledTrace, assembleTrace, configurationIdOf, rootOf, slotsOf } from '../otlp/assemble.ts';
import { checkRecords, signalsOfSpan, writeBoundExcess } from '../otlp/check.ts';
import { type EvaluationRecord, evaluationSignalsOf } from '../otlp/logs.ts';
import type { TraceSpan } from '../otlp/spans.ts';
import type { Clock } from '../ports/common.ts';
import type { PipelineReads } from '../ports/pipelines.ts';
import type { ReviseExecution, TracePart, TraceStaging } from '../ports/traces.ts';
import { assertCanWrite, type Principal } from '../principal.ts';
import { BATCH_SIZE, MAX_FUTURE_SKEW_MS } from '../schemas/common.ts';
import type { Configuration, Pipeline } from '../schemas/pipelines.ts';
import type { Execution, ExecutionInput, Signal, SignalInput } from '../schemas/records.ts';
import { loadOwnedPipeline } from './pipelines.ts';

type RecordExecutions = (
  principal: Principal,
  pipelineId: string,
  inputs: Array<ExecutionInput & Pick<Execution, 'source'>>,
) => Promise<Execution[]>;
type RecordSignals = (principal: Principal, pipelineId: string, inputs: SignalInput[]) => Promise<Signal[]>;

export interface IngestTracesDeps {
  pipelines: PipelineReads;
  settings: TeamSettingsStore;
  traces: TraceStaging;
  clock: Clock;
  /** makeRecordExecutions / makeRecordSignals: what the JSON endpoints record through. */
  recordExecutions: RecordExecutions;
  recordSignals: RecordSignals;
  reviseExecution: ReviseExecution;
  /** Recorded text is redacted like the rest (secrets in a replay input). */
  redact: (text: string) => string;
}

/** What the request's answer says: how many spans were refused, and why. */
export interface IngestOutcome {
  rejected: number;
  reasons: Set<string>;
}

/** The spans a request carried, and their size as read (the bytes of JSON that would be staged). */
export interface SpansRequest {
  spans: TraceSpan[];
  bytes: number;
}

/** How long staged spans wait for the rest of their trace (within the team's window). */
export const STAGED_DAYS = 7;
export const DAY_MS = 86_400_000;
export const EARLIEST = Date.parse('2000-01-01T00:00:00Z');
/** Traces read and assembled at the same time. */
export const CONCURRENCY = 16;

/** Ingests decoded spans for a pipeline of the caller's team; the spans it refuses are counted. */
export function makeIngestTraces(deps: IngestTracesDeps) {
  return async (
    principal: Principal,
    pipelineId: string,
    { spans, bytes }: SpansRequest,
    outcome: IngestOutcome,
  ) => {
    assertCanWrite(principal);
    assertWithinWriteBounds(spans, bytes);
    // The trace marks are read beside the pipeline and the team's settings, for every trace whole in
    // this request (before the times are checked: a superset of those assembled). This request's
    // staging never writes them: it marks only the parts that are not whole. A mark read for a
    // pipeline of another team is never used: loadOwnedPipeline refuses first.
    // Which of the request's traces are executions already is read with them: a batch of only new
    // ones records its executions and signals at once (recordAll).
    const traceIds = [...new Set(spans.map((span) => span.traceId))];
    const [pipeline, team, partial, recorded] = await Promise.all([
      loadOwnedPipeline(deps.pipelines, principal, pipelineId),
      deps.settings.get(principal.teamId),
      deps.traces.partial(
        pipelineId,
        byTrace(spans)
          .filter((part) => part.whole)
          .map((part) => part.traceId),
      ),
      deps.traces.recorded(pipelineId, traceIds),
    ]);
    const now = deps.clock.now();
    const window = retentionWindow(team, now);
    const kept = spans.filter((span) =>
      insideTimes(span, now.getTime(), Date.parse(window.executionsSince), outcome),
    );
    const parts = byTrace(kept);
    if (parts.length === 0) return outcome;
    const stagedDays = Math.min(STAGED_DAYS, team.executionRetentionDays);
    const staging = deps.traces.stage(pipelineId, parts, new Date(now.getTime() + stagedDays * DAY_MS));
    const configurations = new Map<string, Promise<Configuration | null>>();
    // A whole part of a trace nothing partial was staged for is the trace: assembled from the
    // request while its spans are staged. The others are read back once this request's part is in.
    const direct = (part: TracePart) => part.whole && !partial.has(part.traceId);
    const assembleAll = (traces: Array<string | TracePart>) =>
      mapLimited(traces, CONCURRENCY, (trace) => assemble(deps, pipeline, trace, configurations));
    const [fromRequest] = await Promise.all([assembleAll(parts.filter(direct)), staging]);
    const fromStore = await assembleAll(parts.filter((part) => !direct(part)).map((part) => part.traceId));
    const assembled = [...fromRequest, ...fromStore].filter(
      (trace): trace is Assembled => trace !== undefined,
    );
    const spansHere = new Map(parts.map((part) => [part.traceId, part.spans.length]));
    const traces = storable(assembled, spansHere, outcome);
    const foreign = await recordAll(deps, principal, pipeline, traces, {
      executionDays: team.executionRetentionDays,
      signalsSince: window.signalsSince,
      recorded,
    });
    for (const traceId of foreign) {
      refuse(outcome, spansHere.get(traceId) ?? 0, FOREIGN);
    }
    return outcome;
  };
}

export const FOREIGN =
  'a trace id that is the id of an execution recorded through POST …/executions is not read';

export const refuse = (outcome: IngestOutcome, spans: number, reason: string) => {
  if (spans === 0) return;
  outcome.rejected += spans;
  outcome.reasons.add(reason);
};

/**
 * What one request may store (WRITE_BOUNDS), before anything is written: its traces, the signals
 * its spans may give (evaluation events, failed spans) and the bytes staged; past one, a 413.
 */
function assertWithinWriteBounds(spans: readonly TraceSpan[], bytes: number): void {
  const signals = spans.reduce((sum, span) => sum + signalsOfSpan(span), 0);
  const over = writeBoundExcess(new Set(spans.map((span) => span.traceId)).size, signals, bytes);
  if (over) throw new PayloadTooLargeError(over);
}

/**
 * The traces whose records pass POST …/executions' and POST …/signals' schemas; a trace whose
 * execution does not is refused with this request's spans of it, a signal that does not is dropped,
 * each counted with its reason (a dropped signal only when `countSignals`: a log request answers
 * for its own records, which were checked before they were staged).
 */
export function storable(
  traces: Assembled[],
  spansHere: Map<string, number>,
  outcome: IngestOutcome,
  countSignals = true,
): Assembled[] {
  const kept: Assembled[] = [];
  for (const trace of traces) {
    const checked = checkRecords(trace);
    if (checked.issue !== undefined) {
      refuse(
        outcome,
        spansHere.get(trace.execution.id) ?? 0,
        `a trace's execution is refused: ${checked.issue}`,
      );
      continue;
    }
    if (countSignals) {
      for (const reason of checked.refused) refuse(outcome, 1, `a span's signal is refused: ${reason}`);
    }
    kept.push({ ...trace, signals: checked.signals });
  }
  return kept;
}

function insideTimes(span: TraceSpan, now: number, since: number, outcome: IngestOutcome): boolean {
  if (span.startMs < EARLIEST || span.endMs > now + MAX_FUTURE_SKEW_MS) {
    outcome.rejected++;
    outcome.reasons.add('span times must be between 2000-01-01 and 24 h from now');
    return false;
  }
  if (span.events.some((event) => event.atMs < EARLIEST || event.atMs > now + MAX_FUTURE_SKEW_MS)) {
    outcome.rejected++;
    outcome.reasons.add('span event times must be between 2000-01-01 and 24 h from now');
    return false;
  }
  if (span.startMs < since) {
    outcome.rejected++;
    outcome.reasons.add("spans that start before the team's execution retention window are not kept");
    return false;
  }
  return true;
}

function byTrace(spans: readonly TraceSpan[]): TracePart[] {
  const traces = new Map<string, TraceSpan[]>();
  for (const span of spans) {
    const list = traces.get(span.traceId);
    if (list) list.push(span);
    else traces.set(span.traceId, [span]);
  }
  return [...traces].map(([traceId, list]) => ({ traceId, spans: list, whole: isWhole(list) }));
}

/** A root, and every other span's parent among the spans (a tree with nothing missing above). */
function isWhole(spans: readonly TraceSpan[]): boolean {
  const ids = new Set(spans.map((span) => span.spanId));
  return (
    rootOf(spans) !== undefined &&
    spans.every((span) => span.parentSpanId === undefined || ids.has(span.parentSpanId))
  );
}

export type Assembled = AssembledTrace & { spanCount: number };

/**
 * The trace's records from every span (and evaluation result) stored so far; undefined while its
 * root has not arrived.
 */
export async function assemble(
  deps: IngestTracesDeps,
  pipeline: Pipeline,
  trace: string | TracePart,
  configurations: Map<string, Promise<Configuration | null>>,
): Promise<Assembled | undefined> {
  const traceId = typeof trace === 'string' ? trace : trace.traceId;
  const { spans, records } =
    typeof trace === 'string'
      ? await deps.traces.stagedOf(pipeline.id, trace)
      : { spans: uniqueSpans(trace.spans), records: [] as EvaluationRecord[] };
  const root = rootOf(spans);
  if (!root) return undefined;
  const named = configurationIdOf(spans, pipeline.id);
  const configuration =
    (named && (await configurationOf(deps, pipeline.id, named, configurations))) ||
    (await configurationOf(deps, pipeline.id, pipeline.activeConfigurationId, configurations));
  if (!configuration) return undefined;
  const assembled = assembleTrace(spans, root, {
    traceId,
    pipelineId: pipeline.id,
    configuration,
    redact: deps.redact,
  });
  // Evaluation results sent as log records give their signals as the span events do.
  const bySlot = slotsOf(spans, configuration.slots);
  const logged = evaluationSignalsOf(records, spans, (span) => bySlot.get(span));
  return { ...assembled, signals: [...assembled.signals, ...logged], spanCount: spans.length };
}

/** Each span once (by id, the last sent), as the staging reads them back. */
function uniqueSpans(spans: readonly TraceSpan[]): TraceSpan[] {
  return [...new Map(spans.map((span) => [span.spanId, span])).values()];
}

/** A configuration of the pipeline, read once a request; null when the trace names none that exists. */
function configurationOf(
  deps: IngestTracesDeps,
  pipelineId: string,
  id: string,
  cache: Map<string, Promise<Configuration | null>>,
): Promise<Configuration | null> {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) return Promise.resolve(null);
  let read = cache.get(id);
  if (!read) {
    read = deps.pipelines.getConfiguration(pipelineId, id);
    cache.set(id, read);
  }
  return read;
}

/**
 * Records the traces' executions (new ones in batches, as POST …/executions does; an execution
 * already recorded is revised when more spans gave it), then each batch's signals. A record already
 * there is no error: spans are sent again. The ids of traces whose id belongs to an execution
 * recorded through the API are answered: those traces record nothing, signals included. A batch
 * whose traces were no execution when the request began, outside a rollout, writes its signals
 * beside its executions (docs/decisions.md, "OTLP ingest: a new trace's signals beside its execution").
 */
export async function recordAll(
  deps: IngestTracesDeps,
  principal: Principal,
  pipeline: Pipeline,
  traces: Assembled[],
  limits: { executionDays: number; signalsSince: string; recorded: ReadonlySet<string> },
): Promise<string[]> {
  const input = (trace: Assembled) => ({
    ...trace.execution,
    spanCount: trace.spanCount,
    source: 'otlp' as const,
  });
  const signalsOf = (kept: Assembled[]) =>
    kept.flatMap((trace) => trace.signals).filter((signal) => signal.occurredAt >= limits.signalsSince);
  const foreign: string[] = [];
  for (let at = 0; at < traces.length; at += BATCH_SIZE) {
    const batch = traces.slice(at, at + BATCH_SIZE);
    const fresh = !pipeline.rollout && batch.every((trace) => !limits.recorded.has(trace.execution.id));
    const executions = deps.recordExecutions(principal, pipeline.id, batch.map(input));
    const beside = fresh ? recordSignals(deps, principal, pipeline.id, signalsOf(batch)) : undefined;
    const [recording, signalled] = await Promise.allSettled([executions, beside]);
    if (signalled.status === 'rejected') throw signalled.reason;
    let ours = batch;
    if (recording.status === 'rejected') {
      if (!(recording.reason instanceof ConflictError)) throw recording.reason;
      // Some are recorded already: each on its own, then revised if this request read more spans.
      const owned = await mapLimited(batch, CONCURRENCY, (trace) =>
        recordOrRevise(deps, principal, pipeline, input(trace), limits.executionDays),
      );
      ours = batch.filter((_, index) => owned[index]);
      foreign.push(...batch.filter((_, index) => !owned[index]).map((trace) => trace.execution.id));
    }
    // Otherwise signals after their executions: only a trace's own execution is cited. Their ids come
    // from the spans, so a signal sent again is refused as one already recorded (a retry), never
    // stored twice.
    if (!fresh) await recordSignals(deps, principal, pipeline.id, signalsOf(ours));
  }
  return foreign;
}

/** Signals in batches; a batch holding one already recorded goes one by one, the recorded ones left. */
async function recordSignals(
  deps: IngestTracesDeps,
  principal: Principal,
  pipelineId: string,
  signals: SignalInput[],
): Promise<void> {
  for (let at = 0; at < signals.length; at += BATCH_SIZE) {
    const batch = signals.slice(at, at + BATCH_SIZE);
    try {
      await deps.recordSignals(principal, pipelineId, batch);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      await mapLimited(batch, CONCURRENCY, (signal) =>
        deps.recordSignals(principal, pipelineId, [signal]).catch((refused: unknown) => {
          if (!(refused instanceof ConflictError)) throw refused;
        }),
      );
    }
  }
}

/**
 * Records one execution, or revises it when it is recorded already (more spans may have come);
 * false when the id is an execution's that no trace recorded.
 */
async function recordOrRevise(
  deps: IngestTracesDeps,
  principal: Principal,
  pipeline: Pipeline,
  execution: ExecutionInput & {
    id: string;
    configurationId: string;
    startedAt: string;
    spanCount: number;
    source: 'otlp';
  },
  retentionDays: number,
): Promise<boolean> {
  try {
    await deps.recordExecutions(principal, pipeline.id, [execution]);
    return true;
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
  }
  const revised = await deps.reviseExecution(
    { ...execution, pipelineId: pipeline.id },
    retentionDays,
    pipeline.rollout ?? null,
  );
  return revised !== 'foreign';
}

/** `work` over `items`, at most `limit` at a time, results in order. */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
