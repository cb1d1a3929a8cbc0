/**
 * The asynchronous half of a run: generating it from its job, failing it when its job died, and
 * sweeping runs that were left pending or generating. Every fault ends in a classified outcome.
 */
import { ApiError, ConflictError, SynthesisFailure, TransientSynthesisError } from '../errors.ts';
import { runEvent, SYSTEM_ACTOR } from '../events.ts';
import { legacyWarnings, renderExplanation } from '../explanation.ts';
import type { TeamSettingsStore } from '../lifecycle.ts';
import { type ModelSpendStore, settleModelSpend } from '../model-budget.ts';
import { type ModelPrices, withCost } from '../model-pricing.ts';
import type { Clock, IdGenerator } from '../ports/common.ts';
import type { EvaluationStore } from '../ports/evaluation.ts';
import type { PipelineReads } from '../ports/pipelines.ts';
import type { EvidenceStore, RunRepository } from '../ports/runs.ts';
import type {
  SynthesisContext,
  SynthesisEngine,
  SynthesisProposal,
  SynthesisUsage,
} from '../ports/synthesis.ts';
import { citeEvaluationCases } from '../refinement.ts';
import type { SynthesisJob, SynthesisRun } from '../schemas/runs.ts';
import { readSynthesisContext } from './synthesis-context.ts';

/** Whether an error that is not one of ours may pass if the job is tried again later. */
export type IsTransient = (error: unknown) => boolean;

export interface GenerateRunDeps {
  runs: RunRepository;
  pipelines: PipelineReads;
  evidence: EvidenceStore;
  engines: Readonly<Record<string, SynthesisEngine>>;
  clock: Clock;
  ids: IdGenerator;
  /** A run left `generating` longer than this is re-claimable: its worker died. */
  leaseMs: number;
  /** Recognizes infrastructure faults worth a retry (throttling, 5xx, timeouts, network). */
  isTransient: IsTransient;
  /** Prices of model tokens, for the run's `usage.costUsd` (DEFAULT_MODEL_PRICES unless configured). */
  prices: ModelPrices;
  /** The teams' retention windows: nothing older is read, and the cited copies expire with them. */
  settings: TeamSettingsStore;
  /** A refinement's chain: its evaluation set and results are the refinement's evidence. */
  evaluations: EvaluationStore;
}

/** What became of one job. Only `retry` asks the queue to deliver the job again. */
export type GenerateOutcome =
  | { outcome: 'generated'; run: SynthesisRun }
  /** A permanent fault: the run is failed with the error's message; the job is done. */
  | { outcome: 'failed'; run: SynthesisRun; error: Error }
  /** Nothing to do: the run is gone, already finished, or another invocation took it over. */
  | { outcome: 'skipped'; reason: 'missing' | 'finished' | 'lease-lost'; run?: SynthesisRun }
  /** A transient fault: try again after `retryAfterSeconds` (the queue's backoff when absent). */
  | { outcome: 'retry'; run: SynthesisRun; error: Error; retryAfterSeconds?: number };

/**
 * The message a run fails with for an error that is no SynthesisFailure or client error: words for
 * a person, never the exception's class name (the worker logs that as its own field).
 */
const INTERNAL_FAILURE_MESSAGE =
  'Generation stopped on an internal error that a retry would not fix; start a new run, and report the run id if it happens again.';

/**
 * Processes one job: claims the run (a duplicate delivery finds it claimed or finished), reads the
 * bounded evidence, generates, keeps the cited evidence, and stores the proposal and the run
 * `generated` in one transaction. A permanent fault fails the run at once; a transient one is
 * reported for a retry with backoff, never as a stall.
 */
export function makeGenerateRun(deps: GenerateRunDeps) {
  return async (job: SynthesisJob): Promise<GenerateOutcome> => {
    const claimed = await claim(deps, job);
    if (claimed.outcome !== 'claimed') return claimed;
    return generate(deps, claimed.run, claimed.lease);
  };
}

/** A run this invocation holds, under the lease that started at `lease`. */
type Claimed = { outcome: 'claimed'; run: SynthesisRun; lease: string };

/** Claims the job's run under a lease starting now; the outcome when there is nothing to generate. */
async function claim(
  { runs, clock, leaseMs }: GenerateRunDeps,
  job: SynthesisJob,
): Promise<Claimed | GenerateOutcome> {
  const startedAt = clock.now();
  const lease = startedAt.toISOString();
  const found = await runs.claim(job.runId, lease, new Date(startedAt.getTime() - leaseMs).toISOString());
  if (found.outcome === 'missing') return { outcome: 'skipped', reason: 'missing' };
  if (found.outcome === 'finished') return { outcome: 'skipped', reason: 'finished', run: found.run };
  if (found.outcome === 'leased') {
    // Another invocation holds the run: come back when its lease would have run out.
    const leaseStart = Date.parse(found.run.generationStartedAt ?? lease);
    const waitMs = Math.max(0, leaseStart + leaseMs - startedAt.getTime());
    return {
      outcome: 'retry',
      run: found.run,
      error: new TransientSynthesisError(
        'Another invocation is generating this run; checking again when its lease ends.',
      ),
      retryAfterSeconds: Math.ceil(waitMs / 1000) + 1,
    };
  }
  return { outcome: 'claimed', run: found.run, lease };
}

/** Generates the claimed run and stores it; any fault becomes the outcome `settleFault` gives it. */
async function generate(deps: GenerateRunDeps, run: SynthesisRun, lease: string): Promise<GenerateOutcome> {
  let usage: SynthesisUsage | undefined;
  try {
    const engine = deps.engines[run.synthesisHandler];
    if (!engine) throw new SynthesisFailure(`Synthesis handler ${run.synthesisHandler} is not available.`);
    const context = await readSynthesisContext(deps, run);
    const proposal = citeEvaluationCases(await engine.generate(context), context.refinement);
    usage = proposal.usage;
    // Deleted while the model was working: nothing of the pipeline is written back.
    if (!(await deps.pipelines.getPipeline(run.pipelineId))) {
      throw new SynthesisFailure(`Pipeline ${run.pipelineId} was deleted while the run was generating.`, {
        usage,
      });
    }
    return { outcome: 'generated', run: await storeProposal(deps, run, context, proposal, lease) };
  } catch (caught) {
    return settleFault(deps, run, lease, caught, usage);
  }
}

/** Keeps the cited evidence, then stores the proposed configuration and the run `generated`. */
async function storeProposal(
  deps: GenerateRunDeps,
  run: SynthesisRun,
  context: SynthesisContext,
  proposal: SynthesisProposal,
  lease: string,
): Promise<SynthesisRun> {
  const team = await deps.settings.get(context.pipeline.teamId);
  await deps.evidence.save(run.id, citedEvidence(context, proposal), {
    signalDays: team.signalRetentionDays,
    executionDays: team.executionRetentionDays,
  });
  const completedAt = deps.clock.now().toISOString();
  // Nothing to change: no configuration is proposed (none to approve, evaluate or roll out), and the
  // run's no_changes warning says so (finalize adds it whenever no change is kept).
  const proposedConfigurationId = proposal.changes.length > 0 ? deps.ids.newId() : null;
  const generated: SynthesisRun = {
    ...run,
    status: 'generated',
    proposedConfigurationId,
    diagnosis: proposal.diagnosis,
    changes: proposal.changes,
    structuredWarnings: proposal.structuredWarnings,
    confidence: proposal.confidence,
    analyzedSignalIds: proposal.analyzedSignalIds,
    analyzedExecutionIds: proposal.analyzedExecutionIds,
    explanation: renderExplanation(proposal.diagnosis, proposal.changes),
    warnings: legacyWarnings(proposal.structuredWarnings),
    generationCompletedAt: completedAt,
    errorMessage: null,
    retryReason: null,
    usage: priced(deps, proposal.usage) ?? null,
  };
  // What the run cost, from the model's reported usage; a handler that asked no model cost nothing.
  generated.costUsd = proposal.usage ? (generated.usage?.costUsd ?? null) : 0;
  try {
    return await completeGenerated(deps, run, generated, proposal, completedAt, lease);
  } catch (error) {
    // A deletion that landed after the check above: the run's copies go, and the run fails.
    if (!(await deps.pipelines.getPipeline(run.pipelineId))) {
      await deps.evidence.remove(run.id);
      throw new SynthesisFailure(`Pipeline ${run.pipelineId} was deleted while the run was generating.`, {
        usage: proposal.usage,
      });
    }
    throw error;
  }
}

/** The proposed configuration (none when nothing changes) and the run `generated`, with its event, in one write. */
function completeGenerated(
  deps: GenerateRunDeps,
  run: SynthesisRun,
  generated: SynthesisRun,
  proposal: SynthesisProposal,
  completedAt: string,
  lease: string,
): Promise<SynthesisRun> {
  const proposedConfigurationId = generated.proposedConfigurationId;
  return deps.runs.completeGenerated(
    generated,
    proposedConfigurationId === null
      ? null
      : {
          id: proposedConfigurationId,
          pipelineId: run.pipelineId,
          slots: proposal.proposedSlots,
          source: 'synthesis',
          synthesisRunId: run.id,
          createdAt: completedAt,
          createdBy: run.triggeredBy,
        },
    lease,
    runEvent(
      run,
      'generated',
      completedAt,
      SYSTEM_ACTOR,
      proposedConfigurationId ? { configurationId: proposedConfigurationId } : {},
    ),
  );
}

/**
 * What a fault during generation comes to: a lost lease is skipped, a transient fault releases the
 * run for a retry, anything else fails the run with what the model calls cost.
 */
async function settleFault(
  deps: GenerateRunDeps,
  run: SynthesisRun,
  lease: string,
  caught: unknown,
  usage: SynthesisUsage | undefined,
): Promise<GenerateOutcome> {
  const error = caught instanceof Error ? caught : new Error(String(caught));
  // Another worker re-claimed the run after our lease ran out: the run is theirs now.
  if (error instanceof ConflictError) return { outcome: 'skipped', reason: 'lease-lost', run };
  if (error instanceof TransientSynthesisError) {
    await deps.runs.releaseForRetry(run.id, error.message, lease);
    return {
      outcome: 'retry',
      run,
      error,
      ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds }),
    };
  }
  if (!(error instanceof SynthesisFailure) && !(error instanceof ApiError) && deps.isTransient(error)) {
    await deps.runs.releaseForRetry(
      run.id,
      'A service the worker depends on (the database or the queue) failed for a moment; the job will be retried.',
      lease,
    );
    return { outcome: 'retry', run, error };
  }
  const spent = error instanceof SynthesisFailure ? (error.usage ?? usage) : usage;
  return failRun(deps, run, error, spent);
}

/** Fails the generating run with words for a person and what its model calls cost. */
async function failRun(
  deps: GenerateRunDeps,
  run: SynthesisRun,
  error: Error,
  usage?: SynthesisUsage,
): Promise<GenerateOutcome> {
  const message =
    error instanceof SynthesisFailure || error instanceof ApiError ? error.message : INTERNAL_FAILURE_MESSAGE;
  const at = deps.clock.now().toISOString();
  const failed = await deps.runs.fail(
    run.id,
    message,
    at,
    ['generating'],
    priced(deps, usage),
    runEvent(run, 'failed', at, SYSTEM_ACTOR),
  );
  return { outcome: 'failed', run: failed ?? run, error };
}

/** The usage with its cost at the deps' prices. */
function priced(deps: GenerateRunDeps, usage: SynthesisUsage | undefined) {
  return usage && withCost(usage, deps.prices);
}

/** The signals and executions the proposal's findings cite, taken from the windows the run read. */
function citedEvidence(context: SynthesisContext, proposal: SynthesisProposal) {
  const signalIds = new Set<string>();
  const executionIds = new Set<string>();
  for (const finding of proposal.diagnosis.findings) {
    for (const id of finding.signalIds) signalIds.add(id);
    for (const id of finding.executionIds) executionIds.add(id);
  }
  return {
    signals: context.signals.filter((signal) => signalIds.has(signal.id)),
    executions: context.executions.filter((execution) => executionIds.has(execution.id)),
  };
}

/** Marks the run of a dead job failed, unless it already finished; the message says why it died. */
/**
 * Fails the run of a dead-lettered job, and gives its month back the estimate reserved when it
 * started (less what the model reported, if it reported anything).
 */
export function makeFailDeadJob({
  runs,
  clock,
  spend,
}: {
  runs: RunRepository;
  clock: Clock;
  spend: Pick<ModelSpendStore, 'adjust'>;
}) {
  return async (job: SynthesisJob, receiveCount: number): Promise<SynthesisRun | null> => {
    const run = await runs.get(job.runId);
    // Stryker disable next-line ConditionalExpression: runs.fail below only fails a pending or generating run and returns null otherwise; this check only saves the write
    if (!run || (run.status !== 'pending' && run.status !== 'generating')) return null;
    const why = run.retryReason ? ` The last attempt failed because: ${run.retryReason}` : '';
    const message = `Generation did not succeed in ${receiveCount} attempt${receiveCount === 1 ? '' : 's'} and the job was moved to the dead-letter queue.${why} Start a new run.`;
    const at = clock.now().toISOString();
    const failed = await runs.fail(
      run.id,
      message,
      at,
      ['pending', 'generating'],
      undefined,
      runEvent(run, 'failed', at, SYSTEM_ACTOR),
    );
    if (failed) await settleModelSpend(spend, failed);
    return failed;
  };
}

export interface SweepDeps {
  runs: RunRepository;
  clock: Clock;
  /** A run still pending or generating this long after it was created can no longer finish. */
  stuckAfterMs: number;
  /** Where a failed run's reserved estimate goes back to its month. */
  spend: Pick<ModelSpendStore, 'adjust'>;
  /** Runs failed per status per sweep; the rest wait for the next sweep. */
  batchSize?: number;
}

/**
 * Fails every run left pending or generating past the bound, giving each one's reserved estimate
 * back to its month; returns the runs it failed.
 */
export function makeSweepStuckRuns({ runs, clock, stuckAfterMs, spend, batchSize = 100 }: SweepDeps) {
  return async (): Promise<SynthesisRun[]> => {
    const now = clock.now();
    const before = new Date(now.getTime() - stuckAfterMs).toISOString();
    const minutes = Math.round(stuckAfterMs / 60_000);
    const swept: SynthesisRun[] = [];
    for (const status of ['pending', 'generating'] as const) {
      for (const run of await runs.listStale(status, before, batchSize)) {
        const why = run.retryReason ? ` The last attempt failed because: ${run.retryReason}` : '';
        const failed = await runs.fail(
          run.id,
          `The run was still ${status} more than ${minutes} minutes after it started, longer than every retry of its job can take, so it was stopped.${why} Start a new run.`,
          now.toISOString(),
          [status],
          undefined,
          runEvent(run, 'failed', now.toISOString(), SYSTEM_ACTOR),
        );
        if (!failed) continue;
        await settleModelSpend(spend, failed);
        swept.push(failed);
      }
    }
    return swept;
  };
}
