/* Starting a synthesis run (idempotency key, team quota, pending run then queued job) and
   reading a run and the evidence it analyzed. */

import { createHash } from 'node:crypto';
import {
  ConflictError,
  NotFoundError,
  QuotaExceededError,
  ServiceUnavailableError,
  ValidationError,
} from '../errors.ts';
import { runEvent, SYSTEM_ACTOR } from '../events.ts';
import { retentionWindow, type TeamSettingsStore } from '../lifecycle.ts';
import type { Clock, IdGenerator } from '../ports/common.ts';
import type { PipelineReads } from '../ports/pipelines.ts';
import type { EvidenceStore, IdempotencyStore, JobQueue, QuotaStore, RunRepository } from '../ports/runs.ts';
import { assertCanWrite, assertSameTeam, type Principal } from '../principal.ts';
import { newPendingRun } from '../run-state.ts';
import type { SynthesisRun } from '../schemas/runs.ts';
import { isSynthesisHandlerName, SYNTHESIS_HANDLER_NAMES } from '../synthesis-handlers.ts';
import { loadOwnedPipeline } from './pipelines.ts';
import { type BudgetDeps, checkParent, reserveModelBudget } from './start-checks.ts';

export interface StartSynthesisDeps {
  runs: RunRepository;
  pipelines: PipelineReads;
  queue: JobQueue;
  clock: Clock;
  ids: IdGenerator;
  defaultHandler: string;
  /** Where Idempotency-Keys are kept: a repeated request answers the run the first one started. */
  idempotency: IdempotencyStore;
  /** Told of every run started and queued (not of an Idempotency-Key replay): the runs-started metric. */
  onStarted?: (run: SynthesisRun) => void;
  /** Runs a team may start per clock hour. */
  quota: { store: QuotaStore; runsPerTeamPerHour: number };
  /** A run's model cost before it starts, the team's month of spend and its budget. */
  budget: BudgetDeps;
}

const HOUR_MS = 3_600_000;

/** How long an Idempotency-Key is remembered (documented in the README). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long a key is held for a request that has not yet created its run: longer than the HTTP
 * function's 10 s timeout, so a live request always keeps it, and short enough that a key whose
 * request died is free again within seconds.
 */
export const IDEMPOTENCY_RESERVATION_MS = 15_000;

/** Stores a pending run and queues its job; a run whose job cannot be queued is failed, not left pending. */
export function makeStartSynthesis(deps: StartSynthesisDeps) {
  return async (
    principal: Principal,
    pipelineId: string,
    body: { synthesisHandler?: string | undefined; parentRunId?: string | undefined },
    idempotencyKey?: string,
  ): Promise<SynthesisRun> => {
    assertCanWrite(principal);
    const request: KeyedRequest = {
      scope: principal.teamId,
      key: idempotencyKey,
      requestHash: createHash('sha256')
        .update(
          JSON.stringify([
            pipelineId,
            body.synthesisHandler ?? null,
            ...(body.parentRunId ? [body.parentRunId] : []),
          ]),
        )
        .digest('hex'),
    };
    if (request.key) {
      const earlier = await replayIdempotent(deps, request, request.key);
      if (earlier) return earlier;
    }
    const synthesisHandler = knownHandler(body.synthesisHandler ?? deps.defaultHandler);
    const pipeline = await loadOwnedPipeline(deps.pipelines, principal, pipelineId);
    const chain = body.parentRunId
      ? await checkParent(deps.runs, principal, pipelineId, body.parentRunId)
      : undefined;
    const run = newPendingRun({
      id: deps.ids.newId(),
      pipelineId,
      teamId: pipeline.teamId,
      synthesisHandler,
      baseConfigurationId: pipeline.activeConfigurationId,
      jobId: deps.ids.newId(),
      createdAt: deps.clock.now().toISOString(),
      triggeredBy: principal.userId,
      ...(chain ?? {}),
    });
    const reservation = await reserveModelBudget(deps.budget, run);
    run.estimatedCostUsd = reservation.estimatedCostUsd;
    try {
      await consumeQuota(deps, pipeline.teamId);
      const earlier = await reserveKey(deps, request, run);
      if (earlier) {
        await reservation.giveBack();
        return earlier;
      }
      await deps.runs.create(run);
      await queueJob(deps, request, run);
    } catch (error) {
      // The run never started: its estimate leaves the team's month.
      await reservation.giveBack();
      throw error;
    }
    await confirmKey(deps, request, run);
    deps.onStarted?.(run);
    return run;
  };
}

/** A start request as its Idempotency-Key sees it; `key` is absent when the request sent none. */
interface KeyedRequest {
  scope: string;
  key: string | undefined;
  requestHash: string;
}

/** The run an earlier request with this key created, if it is a true repeat of this request. */
async function replayIdempotent(
  { idempotency, clock, runs, pipelines }: StartSynthesisDeps,
  { scope, requestHash }: KeyedRequest,
  key: string,
): Promise<SynthesisRun | null> {
  const record = await idempotency.find(scope, key);
  if (!record || record.expiresAt <= clock.now().toISOString()) return null;
  if (record.requestHash !== requestHash) {
    throw new ConflictError(
      'This Idempotency-Key was already used for a different request (another pipeline or body); use a new key.',
    );
  }
  const run = await runs.get(record.runId);
  if (!run)
    throw new ConflictError('A request with this Idempotency-Key is still in progress; retry shortly.');
  // A replay names a pipeline that may have been deleted since: it answers 404 like the pipeline.
  if (!(await pipelines.getPipeline(run.pipelineId))) {
    throw new NotFoundError(`Pipeline ${run.pipelineId} does not exist.`);
  }
  return run;
}

/** The handler's name, when it names a synthesis handler. */
function knownHandler(synthesisHandler: string) {
  if (!isSynthesisHandlerName(synthesisHandler)) {
    throw new ValidationError(
      `Unknown synthesisHandler "${synthesisHandler}"; available: ${SYNTHESIS_HANDLER_NAMES.join(', ')}.`,
    );
  }
  return synthesisHandler;
}

/** Counts the run against the team's quota of this clock hour; over it, a QuotaExceededError. */
async function consumeQuota({ quota, clock }: StartSynthesisDeps, teamId: string): Promise<void> {
  const now = clock.now().getTime();
  const start = Math.floor(now / HOUR_MS) * HOUR_MS;
  const window = { start: new Date(start).toISOString(), end: new Date(start + HOUR_MS).toISOString() };
  if (!(await quota.store.consume(`SYNTHESIS#${teamId}`, window, quota.runsPerTeamPerHour)))
    throw new QuotaExceededError(
      quota.runsPerTeamPerHour,
      Math.max(1, Math.ceil((start + HOUR_MS - now) / 1000)),
    );
}

/**
 * Holds the key for this run while it is created; the run of a concurrent request that won the
 * race for the key, when one did.
 */
async function reserveKey(
  deps: StartSynthesisDeps,
  request: KeyedRequest,
  run: SynthesisRun,
): Promise<SynthesisRun | null> {
  const { key, scope, requestHash } = request;
  const { idempotency } = deps;
  if (key) {
    const expiresAt = new Date(Date.parse(run.createdAt) + IDEMPOTENCY_RESERVATION_MS).toISOString();
    const reserved = await idempotency.reserve(
      scope,
      key,
      { requestHash, runId: run.id, expiresAt, pipelineId: run.pipelineId },
      run.createdAt,
    );
    if (!reserved) {
      // A concurrent request with the same key won the race: answer with its run.
      const earlier = await replayIdempotent(deps, request, key);
      if (earlier) return earlier;
      throw new ConflictError('A request with this Idempotency-Key is still in progress; retry shortly.');
    }
  }
  return null;
}

/** Sends the run's job; when the queue refuses it, fails the run and frees the key. */
async function queueJob(
  { queue, runs, clock, idempotency }: StartSynthesisDeps,
  { key, scope }: KeyedRequest,
  run: SynthesisRun,
): Promise<void> {
  try {
    await queue.send({ runId: run.id, jobId: run.jobId, teamId: run.teamId });
  } catch (error) {
    const reason = 'The synthesis job could not be queued; start a new run.';
    const at = clock.now().toISOString();
    await runs.fail(run.id, reason, at, ['pending'], undefined, runEvent(run, 'failed', at, SYSTEM_ACTOR));
    // The key must not pin the caller to a run that never started: a retry may try again.
    if (key) await idempotency.release(scope, key);
    throw new ServiceUnavailableError(
      'The synthesis job could not be queued: the queue did not accept it. Retry the request after the time Retry-After gives.',
      { cause: error },
    );
  }
}

/** Keeps the key, now naming a started run, for as long as keys are remembered. */
async function confirmKey(
  { idempotency }: StartSynthesisDeps,
  { key, scope }: KeyedRequest,
  run: SynthesisRun,
): Promise<void> {
  // Stryker disable next-line ConditionalExpression: without a key, confirm's condition (runId = this run) matches no record and changes nothing
  if (key) {
    const keepUntil = new Date(Date.parse(run.createdAt) + IDEMPOTENCY_KEY_TTL_MS).toISOString();
    await idempotency.confirm(scope, key, run.id, keepUntil);
  }
}

/** One run of the caller's team (404 once its pipeline is deleted). */
export function makeGetSynthesisRun({ runs }: { runs: RunRepository }) {
  return async (principal: Principal, runId: string): Promise<SynthesisRun> => {
    // A run of a deleted pipeline is hidden on the run itself (the deletion hides every run of
    // the pipeline before it answers): one read, as a poll should be.
    const run = await runs.getVisible(runId);
    if (!run) throw new NotFoundError(`Synthesis run ${runId} does not exist.`);
    assertSameTeam(principal, run.teamId);
    return run;
  };
}

/** The records a run's findings cite, as they were when the run read them (404/403 like the run). */
export function makeGetRunEvidence({
  runs,
  evidence,
  settings,
  clock,
}: {
  runs: RunRepository;
  evidence: EvidenceStore;
  /** The teams' retention windows: cited records now outside them are left out. */
  settings: TeamSettingsStore;
  clock: Clock;
}) {
  const getRun = makeGetSynthesisRun({ runs });
  return async (principal: Principal, runId: string) => {
    const run = await getRun(principal, runId);
    const cited = await evidence.load(runId);
    const window = retentionWindow(await settings.get(run.teamId), clock.now());
    return {
      signals: cited.signals.filter((signal) => signal.occurredAt >= window.signalsSince),
      executions: cited.executions.filter((execution) => execution.startedAt >= window.executionsSince),
    };
  };
}
