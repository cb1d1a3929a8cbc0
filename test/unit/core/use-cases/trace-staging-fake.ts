/* The trace staging as the store keeps it, for the OTLP ingest's use-case tests (traces and logs). */
import type { EvaluationRecord } from '../../../../lambdas/core/otlp/logs.ts';
import type { TraceSpan } from '../../../../lambdas/core/otlp/spans.ts';
import type { StagedTrace, TracePart, TraceStaging } from '../../../../lambdas/core/ports/traces.ts';
import type { World } from './fakes.ts';

/** The staging as the store keeps it: spans by trace (each once, the last sent), the partial traces. */
export class FakeTraceStaging implements TraceStaging {
  readonly spans = new Map<string, Map<string, TraceSpan>>();
  readonly evaluations = new Map<string, Map<string, EvaluationRecord>>();
  readonly partialTraces = new Set<string>();
  readonly stagings: Array<{ parts: TracePart[]; expiresAt: string }> = [];
  readonly reads: string[] = [];

  constructor(private readonly records: World['pipelines']) {}

  async stage(pipelineId: string, parts: readonly TracePart[], expiresAt: Date): Promise<void> {
    this.stagings.push({ parts: structuredClone([...parts]), expiresAt: expiresAt.toISOString() });
    for (const part of parts) {
      const key = `${pipelineId}#${part.traceId}`;
      const stored = this.spans.get(key) ?? new Map<string, TraceSpan>();
      for (const span of part.spans) stored.set(span.spanId, structuredClone(span));
      this.spans.set(key, stored);
      const records = this.evaluations.get(key) ?? new Map<string, EvaluationRecord>();
      for (const record of part.records ?? []) records.set(record.id, structuredClone(record));
      this.evaluations.set(key, records);
      if (!part.whole) this.partialTraces.add(key);
    }
  }
  async partial(pipelineId: string, traceIds: readonly string[]): Promise<Set<string>> {
    return new Set(traceIds.filter((id) => this.partialTraces.has(`${pipelineId}#${id}`)));
  }
  async recorded(pipelineId: string, traceIds: readonly string[]): Promise<Set<string>> {
    const ids = new Set(
      [...this.records.executions.values()].filter((e) => e.pipelineId === pipelineId).map((e) => e.id),
    );
    return new Set(traceIds.filter((id) => ids.has(id)));
  }
  async stagedOf(pipelineId: string, traceId: string): Promise<StagedTrace> {
    this.reads.push(traceId);
    const key = `${pipelineId}#${traceId}`;
    return {
      spans: [...(this.spans.get(key)?.values() ?? [])],
      records: [...(this.evaluations.get(key)?.values() ?? [])],
    };
  }
}
