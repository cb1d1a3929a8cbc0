/**
 * In-memory fakes of the monitors' ports for the unit tests: a monitor repository that keeps the
 * DynamoDB adapter's conditions (the cap, the judge's write conditioned on stateSeq, an event only
 * with its change) and a series that buckets executions and signals exactly as the recording does
 * (core/series.ts deltas, merged over the minutes of a window).
 */
import { NotFoundError, ValidationError } from '../../../../lambdas/core/errors.ts';
import type { DomainEvent } from '../../../../lambdas/core/events.ts';
import type { PageRequest } from '../../../../lambdas/core/ports/common.ts';
import type {
  Judgement,
  MonitorChanges,
  MonitorRepository,
} from '../../../../lambdas/core/ports/monitors.ts';
import type { SeriesReads } from '../../../../lambdas/core/ports/series.ts';
import { type MonitorRecord, monitorRecordSchema } from '../../../../lambdas/core/schemas/monitors.ts';
import type { Execution, Signal } from '../../../../lambdas/core/schemas/records.ts';
import {
  type Bucket,
  bucketOf,
  type Counters,
  executionDeltas,
  type SeriesDelta,
  signalDeltas,
} from '../../../../lambdas/core/series.ts';

export class FakeMonitorRepository implements MonitorRepository {
  readonly monitors = new Map<string, MonitorRecord>();
  readonly events: DomainEvent[] = [];
  /** Runs right before a judgement's write: a test lets another judge in there. */
  beforeWrite: (() => Promise<void>) | undefined;

  private key = (pipelineId: string, monitorId: string) => `${pipelineId}/${monitorId}`;

  async create(monitor: MonitorRecord, maxPerPipeline: number): Promise<void> {
    const count = [...this.monitors.values()].filter((each) => each.pipelineId === monitor.pipelineId).length;
    if (count >= maxPerPipeline)
      throw new ValidationError(`A pipeline has at most ${maxPerPipeline} monitors; delete one first.`);
    this.monitors.set(
      this.key(monitor.pipelineId, monitor.id),
      monitorRecordSchema.parse(structuredClone(monitor)),
    );
  }

  async list(pipelineId: string, page: PageRequest) {
    const mine = [...this.monitors.values()]
      .filter((monitor) => monitor.pipelineId === pipelineId)
      .sort((a, b) => b.id.localeCompare(a.id));
    const start = page.cursor ? Number(page.cursor) : 0;
    const items = mine.slice(start, start + page.limit).map((monitor) => structuredClone(monitor));
    return { items, nextCursor: start + page.limit < mine.length ? String(start + page.limit) : null };
  }

  async get(pipelineId: string, monitorId: string) {
    const found = this.monitors.get(this.key(pipelineId, monitorId));
    return found ? structuredClone(found) : null;
  }

  async update(pipelineId: string, monitorId: string, changes: MonitorChanges) {
    const found = this.monitors.get(this.key(pipelineId, monitorId));
    if (!found) throw new NotFoundError(`Monitor ${monitorId} does not exist.`);
    const updated = monitorRecordSchema.parse({ ...found, ...changes });
    this.monitors.set(this.key(pipelineId, monitorId), updated);
    return structuredClone(updated);
  }

  async remove(pipelineId: string, monitorId: string) {
    if (!this.monitors.delete(this.key(pipelineId, monitorId)))
      throw new NotFoundError(`Monitor ${monitorId} does not exist.`);
  }

  async listAll(cursor: string | null, limit: number) {
    const all = [...this.monitors.values()];
    const start = cursor ? Number(cursor) : 0;
    return {
      items: all.slice(start, start + limit).map((monitor) => structuredClone(monitor)),
      cursor: start + limit < all.length ? String(start + limit) : null,
    };
  }

  async recordJudgement(
    monitor: Pick<MonitorRecord, 'pipelineId' | 'id' | 'stateSeq' | 'state'>,
    judgement: Judgement,
    event: DomainEvent | null,
  ): Promise<'written' | 'stale'> {
    await this.beforeWrite?.();
    const key = this.key(monitor.pipelineId, monitor.id);
    const stored = this.monitors.get(key);
    if (!stored || stored.stateSeq !== monitor.stateSeq) return 'stale';
    const changed = judgement.state !== monitor.state;
    this.monitors.set(key, { ...stored, ...judgement, stateSeq: stored.stateSeq + (changed ? 1 : 0) });
    if (event) this.events.push(structuredClone(event));
    return 'written';
  }
}

/** A pipeline's minute buckets, kept as the recording keeps them, merged over a window. */
export class FakeSeries implements Pick<SeriesReads, 'window'> {
  private readonly minutes = new Map<string, Map<string, Counters>>();
  readonly windows: Array<{ pipelineId: string; from: number; to: number }> = [];

  record(pipelineId: string, records: { executions?: Execution[]; signals?: Signal[] }): void {
    const deltas: SeriesDelta[] = [
      ...executionDeltas(records.executions ?? []),
      ...signalDeltas(records.signals ?? []),
    ];
    let buckets = this.minutes.get(pipelineId);
    if (!buckets) {
      buckets = new Map();
      this.minutes.set(pipelineId, buckets);
    }
    for (const delta of deltas) {
      // The whole pipeline's minute: its signals' bucket and its configurations' (executions).
      if (delta.grain !== 'minute') continue;
      const counters = buckets.get(delta.at) ?? new Map<string, number>();
      for (const [name, by] of delta.adds) counters.set(name, (counters.get(name) ?? 0) + by);
      buckets.set(delta.at, counters);
    }
  }

  async window(pipelineId: string, from: number, to: number): Promise<Bucket> {
    this.windows.push({ pipelineId, from, to });
    const merged: Counters = new Map();
    for (const [at, counters] of this.minutes.get(pipelineId) ?? []) {
      const start = Date.parse(at);
      if (start < from || start >= to) continue;
      for (const [name, value] of counters) merged.set(name, (merged.get(name) ?? 0) + value);
    }
    return bucketOf(new Date(from).toISOString(), merged);
  }
}
