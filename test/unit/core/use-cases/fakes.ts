/**
 * In-memory fakes of the ports in lambdas/core/ports/ for the use-case unit tests. They keep the
 * conditional semantics of the DynamoDB adapters in lambdas/store (a claim only takes a pending run
 * or a generating one whose lease is stale, versions come from a per-pipeline counter, a decision on
 * a run that is not generated is a 409 naming its status, items are parsed on the way out...).
 */

import { ConflictError, NotFoundError } from '../../../../lambdas/core/errors.ts';
import type { ExecutionStub } from '../../../../lambdas/core/evaluation.ts';
import type { DomainEvent } from '../../../../lambdas/core/events.ts';
import {
  defaultTeamSettings,
  type TeamSettings,
  type TeamSettingsStore,
} from '../../../../lambdas/core/lifecycle.ts';
import type { CostEstimate, CostEstimator, ModelSpendStore } from '../../../../lambdas/core/model-budget.ts';
import { DEFAULT_MODEL_PRICES } from '../../../../lambdas/core/model-pricing.ts';
import type { Clock, IdGenerator, PageRequest } from '../../../../lambdas/core/ports/common.ts';
import type { EvaluationStore, StoredEvaluationSet } from '../../../../lambdas/core/ports/evaluation.ts';
import type { ConfigurationHistory, PipelineRepository } from '../../../../lambdas/core/ports/pipelines.ts';
import type { ApprovalPlan, ApprovalRulesStore } from '../../../../lambdas/core/ports/review.ts';
import type { GuardrailCheck, GuardrailQueue } from '../../../../lambdas/core/ports/rollouts.ts';
import type {
  EvidenceStore,
  IdempotencyRecord,
  IdempotencyStore,
  JobQueue,
  QuotaStore,
  RunRepository,
} from '../../../../lambdas/core/ports/runs.ts';
import type { SynthesisUsage } from '../../../../lambdas/core/ports/synthesis.ts';
import type { Principal } from '../../../../lambdas/core/principal.ts';
import { newPendingRun } from '../../../../lambdas/core/run-state.ts';
import type { Page } from '../../../../lambdas/core/schemas/common.ts';
import type {
  EvaluationSummary,
  StoredEvaluationResult,
} from '../../../../lambdas/core/schemas/evaluation.ts';
import {
  type Activation,
  activationSchema,
  type Configuration,
  configurationSchema,
  type Pipeline,
  pipelineSchema,
  type ServingState,
  servingStateSchema,
} from '../../../../lambdas/core/schemas/pipelines.ts';
import {
  type Execution,
  executionSchema,
  type Signal,
  signalSchema,
} from '../../../../lambdas/core/schemas/records.ts';
import type { StoredApprovalRules } from '../../../../lambdas/core/schemas/review.ts';
import type { Rollout } from '../../../../lambdas/core/schemas/rollouts.ts';
import {
  type SynthesisJob,
  type SynthesisRun,
  synthesisRunSchema,
} from '../../../../lambdas/core/schemas/runs.ts';
import { makeRecentEffectStates } from '../../../../lambdas/wiring/recent-effect-states.ts';

/** A clock that stands still until a test moves it. */
export class FakeClock implements Clock {
  private at: number;
  constructor(start = '2025-06-02T10:00:00.000Z') {
    this.at = Date.parse(start);
  }
  now(): Date {
    return new Date(this.at);
  }
  set(iso: string): void {
    this.at = Date.parse(iso);
  }
  advance(ms: number): void {
    this.at += ms;
  }
}

/** Sequential 21-character ids (the length of a nanoid, which run ids must have). */
export class SequentialIds implements IdGenerator {
  private next = 0;
  newId(): string {
    this.next += 1;
    return `id${String(this.next).padStart(19, '0')}`;
  }
}

/** Newest first by a sort key, paged by an opaque offset cursor; the filter applies after the limit, like a Query. */
function page<T>(sorted: T[], request: PageRequest, keep: (item: T) => boolean = () => true): Page<T> {
  const start = request.cursor === undefined ? 0 : Number(request.cursor);
  const slice = sorted.slice(start, start + request.limit);
  const end = start + slice.length;
  return { items: slice.filter(keep), nextCursor: end < sorted.length ? String(end) : null };
}

const descending =
  <T>(key: (item: T) => string) =>
  (a: T, b: T) =>
    key(a) < key(b) ? 1 : key(a) > key(b) ? -1 : 0;

/** The data table: pipelines with their version counters, configurations, signals, executions, activations. */
export class FakePipelineRepository implements PipelineRepository {
  readonly pipelines = new Map<string, { pipeline: Pipeline; latestConfigurationVersion: number }>();
  readonly configurations = new Map<string, Configuration>();
  readonly signals = new Map<string, Signal>();
  readonly executions = new Map<string, Execution>();
  readonly activations: Activation[] = [];
  /** The serving items: what serving reads in one GetItem, rewritten with every activation. */
  readonly serving = new Map<string, ServingState>();

  private configurationKey(pipelineId: string, configurationId: string) {
    return `${pipelineId}#${configurationId}`;
  }

  async createPipeline(pipeline: Pipeline, configuration: Configuration): Promise<void> {
    const configurationKey = this.configurationKey(configuration.pipelineId, configuration.id);
    if (this.pipelines.has(pipeline.id) || this.configurations.has(configurationKey)) {
      throw Object.assign(new Error('Transaction cancelled'), { name: 'TransactionCanceledException' });
    }
    this.pipelines.set(pipeline.id, {
      pipeline: structuredClone(pipeline),
      latestConfigurationVersion: configuration.version,
    });
    this.configurations.set(configurationKey, structuredClone(configuration));
    this.serving.set(pipeline.id, {
      pipelineId: pipeline.id,
      teamId: pipeline.teamId,
      active: structuredClone(configuration),
      rollout: null,
    });
  }

  async getServingState(pipelineId: string): Promise<ServingState | null> {
    const state = this.serving.get(pipelineId);
    return state ? servingStateSchema.parse(structuredClone(state)) : null;
  }

  async getPipeline(id: string): Promise<Pipeline | null> {
    const entry = this.pipelines.get(id);
    return entry
      ? { ...pipelineSchema.parse(structuredClone(entry.pipeline)), rollout: entry.pipeline.rollout ?? null }
      : null;
  }

  async listPipelines(teamId: string, request: PageRequest): Promise<Page<Pipeline>> {
    const mine = [...this.pipelines.values()]
      .map((entry) => entry.pipeline)
      .filter((pipeline) => pipeline.teamId === teamId)
      .sort(descending((pipeline) => `${pipeline.createdAt}#${pipeline.id}`));
    return page(
      mine.map((pipeline) => pipelineSchema.parse(structuredClone(pipeline))),
      request,
    );
  }

  async getConfiguration(pipelineId: string, configurationId: string): Promise<Configuration | null> {
    const configuration = this.configurations.get(this.configurationKey(pipelineId, configurationId));
    return configuration ? configurationSchema.parse(structuredClone(configuration)) : null;
  }

  /** Stores a configuration an approval made. */
  seedConfiguration(configuration: Configuration): void {
    this.configurations.set(
      this.configurationKey(configuration.pipelineId, configuration.id),
      structuredClone(configuration),
    );
  }

  /** The pipeline's version counter, as the rollout store's nextConfigurationVersion moves it. */
  async nextConfigurationVersion(pipelineId: string): Promise<number> {
    const entry = this.pipelines.get(pipelineId);
    if (!entry) throw new NotFoundError(`Pipeline ${pipelineId} no longer exists.`);
    entry.latestConfigurationVersion += 1;
    return entry.latestConfigurationVersion;
  }

  /** Stores a configuration the way completeGenerated does (version from the pipeline's counter). */
  putConfiguration(proposed: Omit<Configuration, 'version'>): Configuration {
    const entry = this.pipelines.get(proposed.pipelineId);
    if (!entry) throw new NotFoundError(`Pipeline ${proposed.pipelineId} no longer exists.`);
    entry.latestConfigurationVersion += 1;
    const configuration = { ...structuredClone(proposed), version: entry.latestConfigurationVersion };
    const key = this.configurationKey(proposed.pipelineId, proposed.id);
    if (this.configurations.has(key)) throw new ConflictError(`Configuration ${proposed.id} already exists.`);
    this.configurations.set(key, configuration);
    return configuration;
  }

  /** The id markers: `<pipelineId>#<kind>#<id>` → the time of the record that holds the id. */
  readonly idMarkers = new Map<string, string>();

  /** Two writes, as the adapter's two transactions: the ids' markers first, then the records. */
  private recordAllNew<T extends { id: string; pipelineId: string }>(
    into: Map<string, T>,
    records: T[],
    at: (record: T) => string,
    what: 'signal' | 'execution',
  ) {
    const marker = (record: T) => `${record.pipelineId}#${what}#${record.id}`;
    const heldElsewhere = records.filter((record) => {
      const held = this.idMarkers.get(marker(record));
      return held !== undefined && held !== at(record);
    });
    if (heldElsewhere.length > 0) {
      throw new ConflictError(
        `These ${what} ids are already recorded in this pipeline with another time: ${heldElsewhere.map((record) => record.id).join(', ')}. An id names one record of a pipeline; nothing in the batch was recorded.`,
      );
    }
    for (const record of records) this.idMarkers.set(marker(record), at(record));
    const key = (record: T) => `${record.pipelineId}#${at(record)}#${record.id}`;
    const taken = records.filter((record) => into.has(key(record)));
    if (taken.length > 0) {
      throw new ConflictError(
        `These ${what}s are already recorded: ${taken.map((record) => record.id).join(', ')}. Nothing in the batch was recorded.`,
      );
    }
    for (const record of records) into.set(key(record), structuredClone(record));
  }

  async recordSignals(signals: Signal[]): Promise<void> {
    this.recordAllNew(this.signals, signals, (signal) => signal.occurredAt, 'signal');
  }

  async recordExecutions(executions: Execution[]): Promise<void> {
    this.recordAllNew(this.executions, executions, (execution) => execution.startedAt, 'execution');
  }

  async recentSignals(pipelineId: string, limit: number, since = ''): Promise<Signal[]> {
    return [...this.signals.values()]
      .filter((signal) => signal.pipelineId === pipelineId && signal.occurredAt >= since)
      .sort(descending((signal) => `${signal.occurredAt}#${signal.id}`))
      .slice(0, limit)
      .map((signal) => signalSchema.parse(structuredClone(signal)));
  }

  async recentExecutions(pipelineId: string, limit: number, since = ''): Promise<Execution[]> {
    return [...this.executions.values()]
      .filter((execution) => execution.pipelineId === pipelineId && execution.startedAt >= since)
      .sort(descending((execution) => `${execution.startedAt}#${execution.id}`))
      .slice(0, limit)
      .map((execution) => executionSchema.parse(structuredClone(execution)));
  }

  /** The pipeline's move guarded by its active configuration, as activatePipelineUpdate writes it. */
  moveActive(activation: Activation): boolean {
    const entry = this.pipelines.get(activation.pipelineId);
    if (!entry || entry.pipeline.activeConfigurationId !== activation.previousConfigurationId) return false;
    return true;
  }

  commitActivation(activation: Activation): void {
    const entry = this.pipelines.get(activation.pipelineId);
    if (entry) entry.pipeline.activeConfigurationId = activation.configurationId;
    this.activations.push(structuredClone(activation));
  }

  async activateConfiguration(
    activation: Activation,
    _event: DomainEvent,
    serving: ServingState,
  ): Promise<void> {
    if (!this.moveActive(activation)) {
      throw new ConflictError(
        'The active configuration changed while this request was made; reload and retry.',
      );
    }
    if (!this.configurations.has(this.configurationKey(activation.pipelineId, activation.configurationId))) {
      throw new ConflictError(`Configuration ${activation.configurationId} does not exist.`);
    }
    this.commitActivation(activation);
    this.serving.set(activation.pipelineId, structuredClone(serving));
  }

  /** Rollouts that ended rolled back, as a test seeds them (the fake approves without rollouts). */
  readonly rolledBackRollouts: Rollout[] = [];

  async configurationHistory(pipelineId: string, configurationId: string): Promise<ConfigurationHistory> {
    const wasActive = this.activations.some(
      (activation) =>
        activation.pipelineId === pipelineId &&
        (activation.configurationId === configurationId ||
          activation.previousConfigurationId === configurationId),
    );
    const rolledBack =
      this.rolledBackRollouts
        .filter(
          (rollout) =>
            rollout.pipelineId === pipelineId && rollout.candidateConfigurationId === configurationId,
        )
        .sort(descending((rollout) => `${rollout.startedAt}#${rollout.id}`))[0] ?? null;
    return { wasActive, rolledBack: rolledBack ? structuredClone(rolledBack) : null };
  }

  async listActivations(pipelineId: string, request: PageRequest): Promise<Page<Activation>> {
    const mine = this.activations
      .filter((activation) => activation.pipelineId === pipelineId)
      .sort(descending((activation) => `${activation.activatedAt}#${activation.id}`));
    return page(
      mine.map((activation) => activationSchema.parse(structuredClone(activation))),
      request,
    );
  }
}

/** Statuses from which a run may become failed (the run-state table's `→ failed` row). */
const FAILABLE: readonly SynthesisRun['status'][] = ['pending', 'generating'];

/** The runs table; completeGenerated and approve also write the data table (the pipeline fake). */
export class FakeRunRepository implements RunRepository {
  readonly runs = new Map<string, SynthesisRun>();
  /** The events written with the runs' moves (only when the move was made), in order. */
  readonly events: DomainEvent[] = [];
  /** Runs hidden by their pipeline's deletion (the adapter's pipelineDeletedAt). */
  readonly hidden = new Set<string>();

  constructor(private readonly data: FakePipelineRepository) {}

  private read(id: string): SynthesisRun | null {
    const run = this.runs.get(id);
    return run ? synthesisRunSchema.parse(structuredClone(run)) : null;
  }

  /** Puts a run as it is, the way a test seeds the table. */
  seed(run: SynthesisRun): void {
    this.runs.set(run.id, structuredClone(run));
  }

  async getVisible(id: string): Promise<SynthesisRun | null> {
    return this.hidden.has(id) ? null : this.read(id);
  }

  async listChain(rootRunId: string): Promise<SynthesisRun[]> {
    return [...this.runs.values()]
      .filter((run) => (run.id === rootRunId || run.rootRunId === rootRunId) && !this.hidden.has(run.id))
      .sort((a, b) =>
        a.id === rootRunId ? -1 : b.id === rootRunId ? 1 : a.createdAt.localeCompare(b.createdAt),
      )
      .flatMap((run) => this.read(run.id) ?? []);
  }

  async hidePipelineRuns(pipelineId: string): Promise<number> {
    const ids = [...this.runs.values()].filter((run) => run.pipelineId === pipelineId).map((run) => run.id);
    for (const id of ids) this.hidden.add(id);
    return ids.length;
  }

  async create(run: SynthesisRun): Promise<void> {
    if (this.runs.has(run.id)) throw new ConflictError(`A synthesis run with id ${run.id} already exists.`);
    this.runs.set(run.id, structuredClone(run));
  }

  async get(id: string): Promise<SynthesisRun | null> {
    // The document client refuses a key with an undefined value.
    if (typeof id !== 'string')
      throw new Error('Pass options.removeUndefinedValues=true to remove undefined values');
    return this.read(id);
  }

  async claim(id: string, startedAt: string, staleBefore: string) {
    const run = this.runs.get(id);
    if (!run) return { outcome: 'missing' as const };
    const stale = run.status === 'generating' && (run.generationStartedAt ?? '') < staleBefore;
    if (run.status === 'pending' || stale) {
      run.status = 'generating';
      run.generationStartedAt = startedAt;
      return { outcome: 'claimed' as const, run: this.read(id) as SynthesisRun };
    }
    const current = this.read(id) as SynthesisRun;
    return current.status === 'generating'
      ? { outcome: 'leased' as const, run: current }
      : { outcome: 'finished' as const, run: current };
  }

  async completeGenerated(
    run: SynthesisRun,
    proposed: Omit<Configuration, 'version'> | null,
    leaseStartedAt: string,
    event: DomainEvent,
  ): Promise<SynthesisRun> {
    const stored = this.runs.get(run.id);
    if (!this.data.pipelines.has(run.pipelineId)) {
      throw new NotFoundError(`Pipeline ${run.pipelineId} no longer exists.`);
    }
    if (stored?.status !== 'generating' || stored.generationStartedAt !== leaseStartedAt) {
      // The version counter moved before the transaction failed, like the real store's.
      const entry = this.data.pipelines.get(run.pipelineId);
      if (entry && proposed) entry.latestConfigurationVersion += 1;
      throw new ConflictError(`Synthesis run ${run.id} is no longer held by this worker.`);
    }
    if (proposed) this.data.putConfiguration(proposed);
    this.runs.set(run.id, structuredClone(run));
    this.events.push(event);
    return run;
  }

  async releaseForRetry(id: string, reason: string, leaseStartedAt: string): Promise<void> {
    const run = this.runs.get(id);
    if (run?.status !== 'generating' || run.generationStartedAt !== leaseStartedAt) return;
    run.status = 'pending';
    run.retryReason = reason;
  }

  async listStale(status: 'pending' | 'generating', createdBefore: string, limit: number) {
    return [...this.runs.values()]
      .filter((run) => run.status === status && run.createdAt < createdBefore)
      .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0))
      .slice(0, limit)
      .map((run) => synthesisRunSchema.parse(structuredClone(run)));
  }

  async fail(
    id: string,
    errorMessage: string,
    at: string,
    from: SynthesisRun['status'][],
    usage: SynthesisUsage | undefined,
    event: DomainEvent,
  ): Promise<SynthesisRun | null> {
    const run = this.runs.get(id);
    if (!run || !from.filter((status) => FAILABLE.includes(status)).includes(run.status)) return null;
    this.events.push(event);
    run.status = 'failed';
    run.errorMessage = errorMessage;
    run.generationCompletedAt = at;
    if (usage) run.usage = structuredClone(usage);
    return this.read(id);
  }

  async listByPipeline(
    pipelineId: string,
    request: PageRequest,
    filter: { status?: SynthesisRun['status'] | undefined } = {},
  ): Promise<Page<SynthesisRun>> {
    const mine = [...this.runs.values()]
      .filter((run) => run.pipelineId === pipelineId)
      .sort(descending((run) => run.createdAt))
      .map((run) => synthesisRunSchema.parse(structuredClone(run)));
    return page(mine, request, (run) => !filter.status || run.status === filter.status);
  }

  private notDecidable(runId: string, wanted: 'approved' | 'rejected'): ConflictError {
    const status = this.runs.get(runId)?.status ?? 'missing';
    return new ConflictError(`The run is ${status}; only a generated run can be ${wanted}.`);
  }

  async approve(
    run: SynthesisRun,
    decision: { at: string; by: string },
    plan: ApprovalPlan,
  ): Promise<SynthesisRun> {
    const stored = this.runs.get(run.id);
    if (stored?.status !== 'generated') throw this.notDecidable(run.id, 'approved');
    const activation = plan.activation;
    if (!activation) throw new Error('The fake approves with an activation only.');
    if (!this.data.moveActive(activation)) {
      throw new ConflictError(
        `The pipeline's active configuration is no longer ${run.baseConfigurationId}, the base of this run; ` +
          'nothing was changed. Start a new synthesis run on the current configuration.',
      );
    }
    const approved: SynthesisRun = {
      ...run,
      status: 'approved',
      approvedAt: decision.at,
      approvedBy: decision.by,
      approvedChangeIds: plan.approvedChangeIds,
      appliedConfigurationId: plan.appliedConfigurationId,
      rolloutId: null,
    };
    Object.assign(stored, approved);
    if (plan.newConfiguration) this.data.seedConfiguration(plan.newConfiguration);
    this.data.commitActivation(activation);
    this.data.serving.set(run.pipelineId, structuredClone(plan.serving));
    return approved;
  }

  async reject(
    run: SynthesisRun,
    decision: { at: string; by: string; reason: string | null },
    event: DomainEvent,
  ): Promise<SynthesisRun> {
    const runId = run.id;
    const stored = this.runs.get(runId);
    if (stored?.status !== 'generated') throw this.notDecidable(runId, 'rejected');
    this.events.push(event);
    stored.status = 'rejected';
    stored.rejectedAt = decision.at;
    stored.rejectedBy = decision.by;
    stored.rejectionReason = decision.reason;
    return this.read(runId) as SynthesisRun;
  }
}

/** The evidence partition of each run: saving again writes the same items. */
export class FakeEvidenceStore implements EvidenceStore {
  readonly saved = new Map<string, { signals: Map<string, Signal>; executions: Map<string, Execution> }>();

  async save(runId: string, evidence: { signals: Signal[]; executions: Execution[] }): Promise<void> {
    const partition = this.saved.get(runId) ?? { signals: new Map(), executions: new Map() };
    for (const signal of evidence.signals) partition.signals.set(signal.id, structuredClone(signal));
    for (const execution of evidence.executions) {
      partition.executions.set(execution.id, structuredClone(execution));
    }
    this.saved.set(runId, partition);
  }

  async remove(runId: string): Promise<void> {
    this.saved.delete(runId);
  }

  async load(runId: string): Promise<{ signals: Signal[]; executions: Execution[] }> {
    const partition = this.saved.get(runId);
    return {
      signals: [...(partition?.signals.values() ?? [])].sort(descending((signal) => signal.occurredAt)),
      executions: [...(partition?.executions.values() ?? [])].sort(
        descending((execution) => execution.startedAt),
      ),
    };
  }
}

/** Idempotency records keyed `<scope>#<key>`, as the store's partition key spells them. */
export class FakeIdempotencyStore implements IdempotencyStore {
  readonly records = new Map<string, IdempotencyRecord>();

  async find(scope: string, key: string): Promise<IdempotencyRecord | null> {
    const record = this.records.get(`${scope}#${key}`);
    return record ? { ...record } : null;
  }

  async reserve(scope: string, key: string, record: IdempotencyRecord, now: string): Promise<boolean> {
    const held = this.records.get(`${scope}#${key}`);
    if (held && held.expiresAt > now) return false;
    this.records.set(`${scope}#${key}`, { ...record });
    return true;
  }

  async confirm(scope: string, key: string, runId: string, expiresAt: string): Promise<void> {
    const held = this.records.get(`${scope}#${key}`);
    if (held?.runId === runId) held.expiresAt = expiresAt;
  }

  async release(scope: string, key: string): Promise<void> {
    this.records.delete(`${scope}#${key}`);
  }
}

/** Counters per key and window start, refusing a use once `limit` are counted; kept an hour past the window. */
export class FakeQuotaStore implements QuotaStore {
  readonly counters = new Map<string, { count: number; expiresAt: string }>();

  async consume(key: string, window: { start: string; end: string }, limit: number): Promise<boolean> {
    const name = `${key}#${window.start}`;
    const count = this.counters.get(name)?.count ?? 0;
    if (count >= limit) return false;
    const expiresAt = new Date(Date.parse(window.end) + 3_600_000).toISOString();
    this.counters.set(name, { count: count + 1, expiresAt });
    return true;
  }
}

/** A team's model spend per month, refusing a reservation past the budget like the adapter. */
export class FakeModelSpendStore implements ModelSpendStore {
  readonly months = new Map<string, number>();

  async reserve(teamId: string, month: string, usd: number, budgetUsd: number | null): Promise<boolean> {
    const spent = this.months.get(`${teamId}#${month}`) ?? 0;
    if (budgetUsd !== null && spent + usd > budgetUsd) return false;
    this.months.set(`${teamId}#${month}`, spent + usd);
    return true;
  }

  async adjust(teamId: string, month: string, usd: number): Promise<void> {
    this.months.set(`${teamId}#${month}`, (this.months.get(`${teamId}#${month}`) ?? 0) + usd);
  }

  async spent(teamId: string, month: string): Promise<number> {
    return this.months.get(`${teamId}#${month}`) ?? 0;
  }
}

/** An estimate per handler (heuristic-v1 costs nothing; claude-v1 what `claudeUsd` says). */
export class FakeCostEstimator implements CostEstimator {
  claudeUsd = 0.05;

  async estimate(synthesisHandler: string): Promise<CostEstimate> {
    return synthesisHandler === 'claude-v1'
      ? { model: 'claude-sonnet-4-6', promptTokens: 10_000, estimatedCostUsd: this.claudeUsd }
      : { model: null, promptTokens: 0, estimatedCostUsd: 0 };
  }
}

/** The jobs sent, in order; `failWith` makes the next sends throw. */
export class FakeJobQueue implements JobQueue {
  readonly sent: SynthesisJob[] = [];
  failWith: Error | undefined;

  async send(job: SynthesisJob): Promise<void> {
    if (this.failWith) throw this.failWith;
    this.sent.push({ ...job });
  }
}

/** The teams' settings (the defaults until a team stores its own) and the events written with them. */
export class FakeTeamSettingsStore implements TeamSettingsStore {
  readonly byTeam = new Map<string, TeamSettings>();
  readonly events: DomainEvent[] = [];

  async get(teamId: string): Promise<TeamSettings> {
    return structuredClone(this.byTeam.get(teamId) ?? defaultTeamSettings(teamId));
  }

  async put(settings: TeamSettings, _previous: TeamSettings, event: DomainEvent): Promise<void> {
    this.byTeam.set(settings.teamId, structuredClone(settings));
    this.events.push(event);
  }
}

/** The pipelines' approval rules (none stored until a test puts some) and the events written with them. */
export class FakeApprovalRulesStore implements ApprovalRulesStore {
  readonly rules = new Map<string, StoredApprovalRules>();
  readonly events: DomainEvent[] = [];

  async get(pipelineId: string): Promise<StoredApprovalRules | null> {
    return structuredClone(this.rules.get(pipelineId) ?? null);
  }

  async put(rules: StoredApprovalRules, event: DomainEvent): Promise<void> {
    this.rules.set(rules.pipelineId, structuredClone(rules));
    this.events.push(event);
  }
}

/** The guardrail checks sent, in order, and those whose send failed (the use case reports them). */
export class FakeGuardrailQueue implements GuardrailQueue {
  readonly sent: Array<{ check: GuardrailCheck; teamId: string }> = [];
  readonly unsent: Array<{ check: GuardrailCheck; error: unknown }> = [];
  failWith: Error | undefined;

  async send(check: GuardrailCheck, teamId: string): Promise<void> {
    this.sent.push({ check: { ...check }, teamId });
    if (this.failWith) throw this.failWith;
  }
}

/** The evaluation store as the DynamoDB adapter behaves: a set is written once, results replace per case and arm. */
export class FakeEvaluationStore implements EvaluationStore {
  readonly sets = new Map<string, StoredEvaluationSet>();
  readonly results = new Map<string, StoredEvaluationResult>();
  executions: Execution[] = [];
  summaries = new Map<string, EvaluationSummary>();

  async getSet(runId: string) {
    return this.sets.get(runId) ?? null;
  }
  async saveSetOnce(runId: string, set: StoredEvaluationSet) {
    const stored = this.sets.get(runId) ?? set;
    this.sets.set(runId, stored);
    return stored;
  }
  async sampleExecutions(): Promise<ExecutionStub[]> {
    return this.executions.map(({ id, status, startedAt }) => ({ id, status, startedAt }));
  }
  async loadExecutions(_pipelineId: string, refs: Array<{ id: string }>) {
    return this.executions.filter((execution) => refs.some((ref) => ref.id === execution.id));
  }
  async listResults(runId: string) {
    return [...this.results.entries()].filter(([key]) => key.startsWith(`${runId}#`)).map(([, r]) => r);
  }
  async recordResults(
    runId: string,
    results: StoredEvaluationResult[],
    summarize: (all: StoredEvaluationResult[]) => EvaluationSummary,
  ) {
    for (const result of results) this.results.set(`${runId}#${result.executionId}#${result.arm}`, result);
    const summary = summarize(await this.listResults(runId));
    this.summaries.set(runId, summary);
    return summary;
  }
}

/** Every fake, sharing one data table. */
export function makeWorld(start?: string) {
  const pipelines = new FakePipelineRepository();
  const guardrailQueue = new FakeGuardrailQueue();
  return {
    pipelines,
    rollouts: pipelines,
    runs: new FakeRunRepository(pipelines),
    evidence: new FakeEvidenceStore(),
    evaluations: new FakeEvaluationStore(),
    idempotency: new FakeIdempotencyStore(),
    quota: new FakeQuotaStore(),
    queue: new FakeJobQueue(),
    settings: new FakeTeamSettingsStore(),
    approvalRules: new FakeApprovalRulesStore(),
    guardrailQueue,
    guardrails: {
      queue: guardrailQueue,
      unsent: (check: GuardrailCheck, error: unknown) => guardrailQueue.unsent.push({ check, error }),
    },
    recentStates: makeRecentEffectStates(),
    spend: new FakeModelSpendStore(),
    estimator: new FakeCostEstimator(),
    clock: new FakeClock(start),
    ids: new SequentialIds(),
    prices: DEFAULT_MODEL_PRICES,
  };
}
export type World = ReturnType<typeof makeWorld>;

export function principal(overrides: Partial<Principal> = {}): Principal {
  return {
    principalId: 'user-ada',
    userId: 'user-ada',
    teamId: 'team-a',
    role: 'member',
    method: 'api-token',
    ...overrides,
  };
}

export const SLOTS = [
  { id: 'prompt', name: 'Prompt', kind: 'prompt', settings: { template: 'Summarize {{input}}' } },
  { id: 'model', name: 'Model', kind: 'model', settings: { model: 'claude-sonnet-4-5', temperature: 0.7 } },
];

/** A pipeline with its first configuration (version 1), stored as makeCreatePipeline stores it. */
export async function seedPipeline(
  world: World,
  options: { teamId?: string; slots?: Configuration['slots']; name?: string } = {},
): Promise<{ pipeline: Pipeline; configuration: Configuration }> {
  const createdAt = world.clock.now().toISOString();
  const pipelineId = world.ids.newId();
  const configuration: Configuration = {
    id: world.ids.newId(),
    pipelineId,
    version: 1,
    slots: structuredClone(options.slots ?? SLOTS),
    source: 'manual',
    createdAt,
    createdBy: 'user-ada',
  };
  const pipeline: Pipeline = {
    id: pipelineId,
    teamId: options.teamId ?? 'team-a',
    name: options.name ?? 'Summaries',
    activeConfigurationId: configuration.id,
    createdAt,
    rollout: null,
  };
  await world.pipelines.createPipeline(pipeline, configuration);
  return { pipeline, configuration };
}

/** A run as the store holds it right after POST …/synthesize: pending, every result empty. */
export function pendingRun(
  fields: Pick<SynthesisRun, 'id' | 'pipelineId' | 'baseConfigurationId' | 'createdAt'> &
    Partial<SynthesisRun>,
): SynthesisRun {
  const base = newPendingRun({
    teamId: 'team-a',
    synthesisHandler: 'heuristic-v1',
    jobId: `job-${fields.id}`,
    triggeredBy: 'user-ada',
    ...fields,
  });
  return { ...base, ...fields };
}

/** The error a promise rejects with, for assertions on its class, status and message together. */
export async function rejection(promise: Promise<unknown>): Promise<Error & { statusCode?: number }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { statusCode?: number };
  }
  throw new Error('expected the promise to reject');
}
