/*
 * OTLP log records' evaluation results into signals: each is checked as POST …/signals would check
 * its signal, staged under its trace beside the spans (so a trace whose spans come later is
 * assembled with it), and every trace whose root has arrived is assembled and recorded again, as a
 * trace request would (docs/opentelemetry.md, "Logs").
 */
import { PayloadTooLargeError } from '../errors.ts';
import { retentionWindow } from '../lifecycle.ts';
import { writeBoundExcess } from '../otlp/check.ts';
import { type EvaluationRecord, evaluationRecordIssue } from '../otlp/logs.ts';
import type { TracePart } from '../ports/traces.ts';
import { assertCanWrite, type Principal } from '../principal.ts';
import { MAX_FUTURE_SKEW_MS } from '../schemas/common.ts';
import type { Configuration } from '../schemas/pipelines.ts';
import {
  type Assembled,
  assemble,
  CONCURRENCY,
  DAY_MS,
  EARLIEST,
  FOREIGN,
  type IngestOutcome,
  type IngestTracesDeps,
  mapLimited,
  recordAll,
  refuse,
  STAGED_DAYS,
  storable,
} from './ingest-traces.ts';
import { loadOwnedPipeline } from './pipelines.ts';

/** Ingests decoded evaluation results for a pipeline of the caller's team; those refused are counted. */
export function makeIngestLogs(deps: IngestTracesDeps) {
  return async (
    principal: Principal,
    pipelineId: string,
    records: readonly EvaluationRecord[],
    outcome: IngestOutcome,
  ) => {
    assertCanWrite(principal);
    const traceIds = [...new Set(records.map((one) => one.traceId))];
    const over = writeBoundExcess(traceIds.length, records.length, 0);
    if (over) throw new PayloadTooLargeError(over);
    const [pipeline, team, recorded] = await Promise.all([
      loadOwnedPipeline(deps.pipelines, principal, pipelineId),
      deps.settings.get(principal.teamId),
      deps.traces.recorded(pipelineId, traceIds),
    ]);
    const now = deps.clock.now();
    const window = retentionWindow(team, now);
    const parts = byTrace(
      records.filter((one) => isStorable(one, now.getTime(), window.signalsSince, outcome)),
    );
    if (parts.length === 0) return outcome;
    // Staged as a part that is not whole: its trace is then always read back whole from the store,
    // so spans that come later are assembled with these results.
    const stagedDays = Math.min(STAGED_DAYS, team.executionRetentionDays);
    await deps.traces.stage(pipelineId, parts, new Date(now.getTime() + stagedDays * DAY_MS));
    const configurations = new Map<string, Promise<Configuration | null>>();
    const assembled = await mapLimited(parts, CONCURRENCY, (part) =>
      assemble(deps, pipeline, part.traceId, configurations),
    );
    const recordsHere = new Map(parts.map((part) => [part.traceId, part.records?.length ?? 0]));
    const traces = storable(
      assembled.filter((trace): trace is Assembled => trace !== undefined),
      recordsHere,
      outcome,
      false,
    );
    const foreign = await recordAll(deps, principal, pipeline, traces, {
      executionDays: team.executionRetentionDays,
      signalsSince: window.signalsSince,
      recorded,
    });
    for (const traceId of foreign) refuse(outcome, recordsHere.get(traceId) ?? 0, FOREIGN);
    return outcome;
  };
}

/** Whether the record's signal would be kept and pass POST …/signals; else it is counted refused. */
function isStorable(record: EvaluationRecord, now: number, signalsSince: string, outcome: IngestOutcome) {
  const reason = issueOf(record, now, signalsSince);
  if (reason !== undefined) refuse(outcome, 1, reason);
  return reason === undefined;
}

function issueOf(record: EvaluationRecord, now: number, signalsSince: string): string | undefined {
  if (record.atMs < EARLIEST || record.atMs > now + MAX_FUTURE_SKEW_MS) {
    return 'log record times must be between 2000-01-01 and 24 h from now';
  }
  if (new Date(Math.floor(record.atMs)).toISOString() < signalsSince) {
    return "evaluation results from before the team's signal retention window are not kept";
  }
  const issue = evaluationRecordIssue(record);
  return issue === undefined ? undefined : `an evaluation result's signal is refused: ${issue}`;
}

/** The records by trace, each a part of no spans. */
function byTrace(records: readonly EvaluationRecord[]): TracePart[] {
  const traces = new Map<string, EvaluationRecord[]>();
  for (const record of records) {
    const list = traces.get(record.traceId);
    if (list) list.push(record);
    else traces.set(record.traceId, [record]);
  }
  return [...traces].map(([traceId, list]) => ({ traceId, spans: [], whole: false, records: list }));
}
