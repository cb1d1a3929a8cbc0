import { createHash } from 'node:crypto';
import {
  ApiError,
  ConflictError,
  NotFoundError,
  ServiceUnavailableError,
  ValidationError,
} from '../errors.ts';
import { legacyWarnings, renderExplanation } from '../explanation.ts';
import {
  type Clock,
  EXECUTION_WINDOW,
  type IdempotencyStore,
  type IdGenerator,
  type JobQueue,
  type PipelineRepository,
  type RunRepository,
  SIGNAL_WINDOW,
  type SynthesisEngine,
  type SynthesisUsage,
} from '../ports.ts';
import { assertCanWrite, assertSameTeam, type Principal } from '../principal.ts';
import { newPendingRun } from '../run-state.ts';
import type { SynthesisJob, SynthesisRun } from '../schemas.ts';
import { isSynthesisHandlerName, SYNTHESIS_HANDLER_NAMES } from '../synthesis-handlers.ts';
import { loadOwnedPipeline } from './pipelines.ts';

export interface StartSynthesisDeps {
  runs: RunRepository;
  pipelines: PipelineRepository;
  queue: JobQueue;
  clock: Clock;
  ids: IdGenerator;
  defaultHandler: string;
  /** Without it, Idempotency-Key is not honoured. */
  idempotency?: IdempotencyStore;
}

/** How long an Idempotency-Key is remembered (documented in the README). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;

/** Stores a pending run and queues its job; a run whose job cannot be queued is failed, not left pending. */
export function makeStartSynthesis({
  runs,
  pipelines,
  queue,
  clock,
  ids,
  defaultHandler,
  idempotency,
}: StartSynthesisDeps) {
  /** The run an earlier request with this key created, if it is a true repeat of this request. */
  async function replay(scope: string, key: string, requestHash: string): Promise<SynthesisRun | null> {
    const record = await idempotency?.find(scope, key);
    if (!record || record.expiresAt <= clock.now().toISOString()) return null;
    if (record.requestHash !== requestHash) {
      throw new ConflictError(
        'This Idempotency-Key was already used for a different request (another pipeline or body); use a new key.',
      );
    }
    const run = await runs.get(record.runId);
    if (!run)
      throw new ConflictError('A request with this Idempotency-Key is still in progress; retry shortly.');
    return run;
  }

  return async (
    principal: Principal,
    pipelineId: string,
    body: { synthesisHandler?: string | undefined },
    idempotencyKey?: string,
  ): Promise<SynthesisRun> => {
    assertCanWrite(principal);
    const scope = principal.teamId;
    const requestHash = createHash('sha256')
      .update(JSON.stringify([pipelineId, body.synthesisHandler ?? null]))
      .digest('hex');
    const key = idempotency ? idempotencyKey : undefined;
    if (key) {
      const earlier = await replay(scope, key, requestHash);
      if (earlier) return earlier;
    }
    const synthesisHandler = body.synthesisHandler ?? defaultHandler;
    if (!isSynthesisHandlerName(synthesisHandler)) {
      throw new ValidationError(
        `Unknown synthesisHandler "${synthesisHandler}"; available: ${SYNTHESIS_HANDLER_NAMES.join(', ')}.`,
      );
    }
    const pipeline = await loadOwnedPipeline(pipelines, principal, pipelineId);
    const createdAt = clock.now().toISOString();
    const run = newPendingRun({
      id: ids.newId(),
      pipelineId,
      teamId: pipeline.teamId,
      synthesisHandler,
      baseConfigurationId: pipeline.activeConfigurationId,
      jobId: ids.newId(),
      createdAt,
      triggeredBy: principal.userId,
    });
    if (key && idempotency) {
      const expiresAt = new Date(Date.parse(createdAt) + IDEMPOTENCY_KEY_TTL_MS).toISOString();
      const reserved = await idempotency.reserve(
        scope,
        key,
        { requestHash, runId: run.id, expiresAt },
        createdAt,
      );
      if (!reserved) {
        // A concurrent request with the same key won the race: answer with its run.
        const earlier = await replay(scope, key, requestHash);
        if (earlier) return earlier;
        throw new ConflictError('A request with this Idempotency-Key is still in progress; retry shortly.');
      }
    }
    await runs.create(run);
    try {
      await queue.send({ runId: run.id, jobId: run.jobId });
    } catch (error) {
      const reason = 'The synthesis job could not be queued; start a new run.';
      await runs.fail(run.id, reason, clock.now().toISOString(), ['pending']);
      // The key must not pin the caller to a run that never started: a retry may try again.
      if (key) await idempotency?.release(scope, key);
      throw new ServiceUnavailableError(`${reason} (${(error as Error).name})`);
    }
    return run;
  };
}

/** One run of the caller's team. */
export function makeGetSynthesisRun({ runs }: { runs: RunRepository }) {
  return async (principal: Principal, runId: string): Promise<SynthesisRun> => {
    const run = await runs.get(runId);
    if (!run) throw new NotFoundError(`Synthesis run ${runId} does not exist.`);
    assertSameTeam(principal, run.teamId);
    return run;
  };
}

export interface GenerateRunDeps {
  runs: RunRepository;
  pipelines: PipelineRepository;
  engines: Readonly<Record<string, SynthesisEngine>>;
  clock: Clock;
  ids: IdGenerator;
  /** A run left `generating` longer than this is re-claimable: its worker died. */
  leaseMs: number;
}

export type GenerateOutcome = 'generated' | 'failed' | 'skipped';

/** A failure the run should end with (not retried); its message is shown to users. */
export class SynthesisFailure extends Error {
  override name = 'SynthesisFailure';
  /** What the failed generation had already cost, when it got as far as calling a model. */
  readonly usage: SynthesisUsage | undefined;

  constructor(message: string, options: { usage?: SynthesisUsage | undefined } = {}) {
    super(message);
    this.usage = options.usage;
  }
}

/**
 * Processes one job: claims the run (a duplicate delivery finds it claimed or finished and does
 * nothing), generates, and stores the proposal and the run `generated` in one transaction — or the
 * run `failed` with a reason. Transient errors are thrown so the queue redelivers the job.
 */
export function makeGenerateRun({ runs, pipelines, engines, clock, ids, leaseMs }: GenerateRunDeps) {
  return async (job: SynthesisJob): Promise<GenerateOutcome> => {
    const startedAt = clock.now();
    const staleBefore = new Date(startedAt.getTime() - leaseMs).toISOString();
    const run = await runs.claim(job.runId, startedAt.toISOString(), staleBefore);
    if (!run) return 'skipped';
    const lease = startedAt.toISOString();
    const fail = async (message: string, usage?: SynthesisUsage): Promise<GenerateOutcome> => {
      await runs.fail(run.id, message, clock.now().toISOString(), ['generating'], usage);
      return 'failed';
    };

    try {
      const engine = engines[run.synthesisHandler];
      if (!engine) return await fail(`Synthesis handler ${run.synthesisHandler} is not available.`);
      const pipeline = await pipelines.getPipeline(run.pipelineId);
      if (!pipeline) return await fail(`Pipeline ${run.pipelineId} no longer exists.`);
      const baseConfiguration = await pipelines.getConfiguration(run.pipelineId, run.baseConfigurationId);
      if (!baseConfiguration)
        return await fail(`Base configuration ${run.baseConfigurationId} no longer exists.`);
      const [signals, executions] = await Promise.all([
        pipelines.recentSignals(run.pipelineId, SIGNAL_WINDOW),
        pipelines.recentExecutions(run.pipelineId, EXECUTION_WINDOW),
      ]);

      const proposal = await engine.generate({ pipeline, baseConfiguration, signals, executions });

      const completedAt = clock.now().toISOString();
      const proposedConfigurationId = ids.newId();
      const generated: SynthesisRun = {
        ...run,
        status: 'generated',
        proposedConfigurationId,
        diagnosis: proposal.diagnosis,
        changes: proposal.changes,
        structuredWarnings: proposal.structuredWarnings,
        confidence: proposal.confidence,
        analyzedSignalIds: proposal.analyzedSignalIds,
        explanation: renderExplanation(proposal.diagnosis, proposal.changes),
        warnings: legacyWarnings(proposal.structuredWarnings),
        generationCompletedAt: completedAt,
        errorMessage: null,
        usage: proposal.usage ?? null,
      };
      await runs.completeGenerated(
        generated,
        {
          id: proposedConfigurationId,
          pipelineId: run.pipelineId,
          slots: proposal.proposedSlots,
          source: 'synthesis',
          synthesisRunId: run.id,
          createdAt: completedAt,
          createdBy: run.triggeredBy,
        },
        lease,
      );
      return 'generated';
    } catch (error) {
      if (error instanceof SynthesisFailure) return await fail(error.message, error.usage);
      // Another worker re-claimed the run after our lease ran out: the run is theirs now.
      if (error instanceof ConflictError) return 'skipped';
      if (error instanceof ApiError && error.statusCode < 500) return await fail(error.message);
      throw error; // transient (throttling, a network error, RetryableSynthesisError): redeliver
    }
  };
}

export const DEAD_LETTER_MESSAGE =
  'Generation failed repeatedly and the job was moved to the dead-letter queue; start a new run.';

/** Marks the run of a dead job failed, unless it already finished. */
export function makeFailDeadJob({ runs, clock }: { runs: RunRepository; clock: Clock }) {
  return async (job: SynthesisJob): Promise<boolean> => {
    const failed = await runs.fail(job.runId, DEAD_LETTER_MESSAGE, clock.now().toISOString(), [
      'pending',
      'generating',
    ]);
    return failed !== null;
  };
}
