/*
 * Rollouts and what they measure: show, promote and roll back a pipeline's rollout, serve the arm
 * a routing key gets, the effect of an approval, and the guardrail that judges active rollouts.
 */

import { ConflictError, NotFoundError } from '../errors.ts';
import { type Actor, actorOf, newEvent, SYSTEM_ACTOR } from '../events.ts';
import { retentionWindow, type TeamSettingsStore } from '../lifecycle.ts';
import type { Clock, IdGenerator, PipelineRepository, RolloutRepository, RunRepository } from '../ports.ts';
import { assertCanWrite, assertSameTeam, type Principal } from '../principal.ts';
import {
  BEFORE_AFTER_MIN_EXECUTIONS,
  describeArms,
  EFFECT_ARM_LIMIT,
  EFFECT_SIGNAL_LIMIT,
  measureEffect,
} from '../rollouts/effect.ts';
import { servesCandidate } from '../rollouts/routing.ts';
import type { Activation, Configuration, Effect, Execution, Rollout, SynthesisRun } from '../schemas.ts';
import { loadOwnedPipeline } from './pipelines.ts';
import { makeGetSynthesisRun } from './synthesis.ts';

export interface RolloutDeps {
  pipelines: PipelineRepository;
  rollouts: RolloutRepository;
  runs: RunRepository;
  clock: Clock;
  ids: IdGenerator;
}

/** The pipeline's active rollout or, when none is active, its latest (404 when it never had one). */
export function makeGetRollout({ pipelines, rollouts }: Pick<RolloutDeps, 'pipelines' | 'rollouts'>) {
  return async (principal: Principal, pipelineId: string): Promise<Rollout> => {
    const pipeline = await loadOwnedPipeline(pipelines, principal, pipelineId);
    const rollout = pipeline.rollout ?? (await rollouts.latest(pipelineId));
    if (!rollout) throw new NotFoundError(`Pipeline ${pipelineId} has had no rollout yet.`);
    return rollout;
  };
}

/** The activation a promotion writes: the candidate replaces the base, source "rollout". */
function promotionOf(
  rollout: Rollout,
  base: Configuration,
  candidate: Configuration,
  at: string,
  by: string,
  reason: string | null,
): Activation {
  return {
    id: '',
    pipelineId: rollout.pipelineId,
    configurationId: candidate.id,
    version: candidate.version,
    previousConfigurationId: base.id,
    previousVersion: base.version,
    source: 'rollout',
    synthesisRunId: rollout.synthesisRunId,
    reason,
    summary: `Promoted rollout ${rollout.id}: version ${candidate.version} replaces version ${base.version} for all traffic.`,
    activatedAt: at,
    activatedBy: by,
  };
}

/** Ends a rollout (a person's promote or rollback, or a guardrail's), one transaction. */
async function endRollout(
  { pipelines, rollouts, clock, ids }: Pick<RolloutDeps, 'pipelines' | 'rollouts' | 'clock' | 'ids'>,
  rollout: Rollout,
  status: 'promoted' | 'rolled_back',
  actor: Actor,
  reason: string | null,
): Promise<Rollout> {
  const by = actor.userId;
  const at = clock.now().toISOString();
  const [pipeline, base, candidate] = await Promise.all([
    pipelines.getPipeline(rollout.pipelineId),
    pipelines.getConfiguration(rollout.pipelineId, rollout.baseConfigurationId),
    pipelines.getConfiguration(rollout.pipelineId, rollout.candidateConfigurationId),
  ]);
  if (!pipeline || !base || !candidate) {
    throw new NotFoundError(`The pipeline or a configuration of rollout ${rollout.id} no longer exists.`);
  }
  const activation =
    status === 'promoted'
      ? { ...promotionOf(rollout, base, candidate, at, by, reason), id: ids.newId() }
      : null;
  const serving = {
    pipelineId: rollout.pipelineId,
    teamId: pipeline.teamId,
    active: status === 'promoted' ? candidate : base,
    rollout: null,
  };
  const eventIds = {
    teamId: pipeline.teamId,
    pipelineId: rollout.pipelineId,
    runId: rollout.synthesisRunId,
    rolloutId: rollout.id,
    actor,
  };
  const events = [
    newEvent(
      `rollout.${status}`,
      {
        ...eventIds,
        configurationId:
          status === 'promoted' ? rollout.candidateConfigurationId : rollout.baseConfigurationId,
        status,
      },
      { at, key: rollout.id },
    ),
    ...(activation
      ? [
          newEvent(
            'configuration.activated',
            { ...eventIds, configurationId: activation.configurationId },
            { at, key: activation.id },
          ),
        ]
      : []),
  ];
  return rollouts.end(rollout, { status, at, by, reason, activation, serving, events });
}

/** Promotes or rolls back the pipeline's active rollout; 409 when none is active. */
export function makeEndRollout(
  deps: Pick<RolloutDeps, 'pipelines' | 'rollouts' | 'clock' | 'ids'>,
  status: 'promoted' | 'rolled_back',
) {
  return async (principal: Principal, pipelineId: string, reason: string | undefined): Promise<Rollout> => {
    const pipeline = await loadOwnedPipeline(deps.pipelines, principal, pipelineId);
    assertCanWrite(principal);
    if (!pipeline.rollout) {
      const latest = await deps.rollouts.latest(pipelineId);
      throw new ConflictError(
        latest
          ? `Pipeline ${pipelineId} has no active rollout: rollout ${latest.id} already ended (${latest.status.replace('_', ' ')}).`
          : `Pipeline ${pipelineId} has no active rollout to ${status === 'promoted' ? 'promote' : 'roll back'}.`,
      );
    }
    return endRollout(deps, pipeline.rollout, status, actorOf(principal), reason ?? null);
  };
}

export interface ServingAnswer {
  configuration: Configuration;
  arm: 'active' | 'candidate';
  rolloutId: string | null;
}

/** The ETag of a serving answer: configurations are immutable, so their id, arm and rollout say it all. */
export function servingETag(configurationId: string, arm: string, rolloutId: string | null): string {
  return `"${configurationId}.${arm}.${rolloutId ?? 'none'}"`;
}

/** True when an If-None-Match header names the ETag (weakly or strongly). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  return ifNoneMatch?.split(',').some((tag) => tag.trim() === etag || tag.trim() === `W/${etag}`) === true;
}

/**
 * What a pipeline runs for a routing key: one GetItem for the pipeline (which carries its active
 * rollout), and one for the configuration unless the caller's ETag already names it.
 */
export function makeServeConfiguration(
  { pipelines }: Pick<RolloutDeps, 'pipelines'>,
  random: () => number = Math.random,
) {
  return async (
    principal: Principal,
    pipelineId: string,
    routingKey: string | undefined,
    ifNoneMatch: string | undefined,
  ): Promise<{ etag: string; answer: ServingAnswer | null }> => {
    // One GetItem: the serving item carries the team, the active configuration and the candidate.
    const state = await pipelines.getServingState?.(pipelineId);
    if (state) {
      assertSameTeam(principal, state.teamId);
      const candidate = state.rollout !== null && servesCandidate(state.rollout, routingKey, random);
      const configuration = candidate && state.rollout ? state.rollout.candidate : state.active;
      const arm = candidate ? 'candidate' : 'active';
      const rolloutId = state.rollout?.id ?? null;
      const etag = servingETag(configuration.id, arm, rolloutId);
      if (matches(ifNoneMatch, etag)) return { etag, answer: null };
      return { etag, answer: { configuration, arm, rolloutId } };
    }
    const pipeline = await loadOwnedPipeline(pipelines, principal, pipelineId);
    const rollout = pipeline.rollout ?? null;
    const candidate = rollout !== null && servesCandidate(rollout, routingKey, random);
    const configurationId =
      candidate && rollout ? rollout.candidateConfigurationId : pipeline.activeConfigurationId;
    const arm = candidate ? 'candidate' : 'active';
    const etag = servingETag(configurationId, arm, rollout?.id ?? null);
    if (matches(ifNoneMatch, etag)) {
      return { etag, answer: null };
    }
    const configuration = await pipelines.getConfiguration(pipelineId, configurationId);
    if (!configuration)
      throw new NotFoundError(`Configuration ${configurationId} of pipeline ${pipelineId} does not exist.`);
    return { etag, answer: { configuration, arm, rolloutId: rollout?.id ?? null } };
  };
}

/** The slots an approval's changes touch. */
function touchedSlots(run: SynthesisRun): string[] {
  const approved = new Set(run.approvedChangeIds ?? run.changes.map((change) => change.id));
  return [...new Set(run.changes.filter((change) => approved.has(change.id)).map((change) => change.slotId))];
}

/** Measures a rollout's two arms: the executions since it started (until it ended), by configuration. */
async function measureRollout(
  rollouts: RolloutRepository,
  rollout: Rollout,
  slotIds: string[],
  until: string,
  since: Since = NO_WINDOW,
) {
  const window = { from: later(rollout.startedAt, since.executions), before: rollout.endedAt ?? undefined };
  const [base, applied] = await Promise.all([
    rollouts.executionsOfConfiguration(
      rollout.pipelineId,
      rollout.baseConfigurationId,
      window,
      EFFECT_ARM_LIMIT,
    ),
    rollouts.executionsOfConfiguration(
      rollout.pipelineId,
      rollout.candidateConfigurationId,
      window,
      EFFECT_ARM_LIMIT,
    ),
  ]);
  const signals = await signalsOf(rollouts, rollout.pipelineId, [...base, ...applied], until, since);
  return measureEffect({ base, applied, signals, slotIds, minExecutions: rollout.minExecutions });
}

/** Where the team's retention windows begin: records older are never read. */
interface Since {
  signals: string;
  executions: string;
}
const NO_WINDOW: Since = { signals: '', executions: '' };
const later = (a: string, b: string) => (a > b ? a : b);

/** The signals within the executions' time span (bounded): measureEffect keeps those citing an arm's execution. */
async function signalsOf(
  rollouts: RolloutRepository,
  pipelineId: string,
  executions: Execution[],
  until: string,
  since: Since,
) {
  if (executions.length === 0) return [];
  const times = executions.map((execution) => execution.startedAt).sort();
  const from = later(times[0] as string, since.signals);
  const newest = times.at(-1) as string;
  return rollouts.signalsBetween(pipelineId, from, newest > until ? newest : until, EFFECT_SIGNAL_LIMIT);
}

/** The measured effect of an approved run (409 for a run not approved). */
/** How long a measured effect is kept for reuse while nothing new was recorded (seconds, TTL). */
export const EFFECT_CACHE_SECONDS = 3_600;

export function makeGetEffect({
  runs,
  rollouts,
  clock,
  pipelines,
  settings,
}: Pick<RolloutDeps, 'runs' | 'rollouts' | 'clock'> & {
  /** With it, a run of a deleted pipeline is a 404. */
  pipelines?: PipelineRepository;
  /** With it, signals and executions outside the team's retention windows are never read. */
  settings?: TeamSettingsStore;
}) {
  const getRun = makeGetSynthesisRun({ runs, ...(pipelines ? { pipelines } : {}) });
  return async (principal: Principal, runId: string): Promise<Effect> => {
    const run = await getRun(principal, runId);
    const since: Since = settings
      ? ((window) => ({ signals: window.signalsSince, executions: window.executionsSince }))(
          retentionWindow(await settings.get(run.teamId), clock.now()),
        )
      : NO_WINDOW;
    if (run.status !== 'approved' || !run.approvedAt) {
      throw new ConflictError(`The run is ${run.status}; only an approved run has an effect to measure.`);
    }
    // Measuring reads up to 2,000 executions. While no execution of either configuration and no
    // signal was recorded since (the mark, taken before measuring), the last measurement is exact.
    const now = clock.now().getTime();
    const cached = await rollouts.cachedEffect(run.pipelineId, run.id);
    const idsOf = (effect: Effect) => [effect.baseConfigurationId, effect.appliedConfigurationId];
    const ids = cached
      ? idsOf(cached.effect)
      : [run.baseConfigurationId, run.appliedConfigurationId ?? run.proposedConfigurationId ?? ''];
    const mark = await rollouts.effectMark(run.pipelineId, ids);
    if (cached && cached.mark === mark) return cached.effect;
    const effect = await measureRun(
      rollouts,
      { ...run, approvedAt: run.approvedAt },
      new Date(now).toISOString(),
      since,
    );
    const measured = idsOf(effect);
    const sameIds = measured.every((id, index) => id === ids[index]);
    const expiresAtEpoch = Math.ceil(now / 1000) + EFFECT_CACHE_SECONDS;
    const markOfEffect = sameIds ? mark : await rollouts.effectMark(run.pipelineId, measured);
    await rollouts.cacheEffect(run.pipelineId, effect, markOfEffect, expiresAtEpoch);
    return effect;
  };
}

/** Measures an approved run's effect now (no cache). */
async function measureRun(
  rollouts: RolloutRepository,
  run: SynthesisRun & { approvedAt: string },
  measuredAt: string,
  since: Since,
): Promise<Effect> {
  {
    const slotIds = touchedSlots(run);
    if (run.rolloutId) {
      const rollout = await rollouts.get({
        pipelineId: run.pipelineId,
        startedAt: run.approvedAt,
        id: run.rolloutId,
      });
      if (!rollout) throw new NotFoundError(`Rollout ${run.rolloutId} of run ${run.id} does not exist.`);
      return {
        runId: run.id,
        mode: 'rollout',
        rolloutId: rollout.id,
        baseConfigurationId: rollout.baseConfigurationId,
        appliedConfigurationId: rollout.candidateConfigurationId,
        ...(await measureRollout(rollouts, rollout, slotIds, measuredAt, since)),
        minExecutions: rollout.minExecutions,
        measuredAt,
      };
    }
    const applied = run.appliedConfigurationId ?? run.proposedConfigurationId;
    if (!applied) throw new ConflictError(`Run ${run.id} applied no configuration.`);
    // A rebased approval replaced the configuration active then, which its activation names.
    const activation = await rollouts.activationOfRun(run.pipelineId, run.approvedAt, run.id);
    const baseId = activation?.previousConfigurationId ?? run.baseConfigurationId;
    const [base, after] = await Promise.all([
      rollouts.executionsOfConfiguration(
        run.pipelineId,
        baseId,
        { before: run.approvedAt, from: since.executions || undefined },
        EFFECT_ARM_LIMIT,
      ),
      rollouts.executionsOfConfiguration(
        run.pipelineId,
        applied,
        { from: later(run.approvedAt, since.executions) },
        EFFECT_ARM_LIMIT,
      ),
    ]);
    const signals = await signalsOf(rollouts, run.pipelineId, [...base, ...after], measuredAt, since);
    return {
      runId: run.id,
      mode: 'before_after',
      rolloutId: null,
      baseConfigurationId: baseId,
      appliedConfigurationId: applied,
      ...measureEffect({
        base,
        applied: after,
        signals,
        slotIds,
        minExecutions: BEFORE_AFTER_MIN_EXECUTIONS,
      }),
      minExecutions: BEFORE_AFTER_MIN_EXECUTIONS,
      measuredAt,
    };
  }
}

/** How many active rollouts one guardrail pass judges at most. */
export const GUARDRAIL_BATCH = 100;

export interface GuardrailOutcome {
  rolloutId: string;
  pipelineId: string;
  action: 'promoted' | 'rolled_back' | 'kept' | 'lost_race';
  reason: string;
}

/**
 * The guardrail: judges every active rollout with `minExecutions` in both arms (judgeRollout), at
 * most GUARDRAIL_BATCH a pass. The sweeper's pass, the backstop of the per-batch checks.
 */
export function makeJudgeRollouts(deps: Pick<RolloutDeps, 'pipelines' | 'rollouts' | 'clock' | 'ids'>) {
  return async (): Promise<GuardrailOutcome[]> => {
    const active = await deps.rollouts.listActive(GUARDRAIL_BATCH);
    const outcomes: GuardrailOutcome[] = [];
    for (const rollout of active) outcomes.push(await judgeRollout(deps, rollout));
    return outcomes;
  };
}

/**
 * Judges one active rollout: `worse` with autoRollback rolls it back, `improved` or
 * `no_significant_change` with autoPromote promotes it, by "system", the figures in endReason.
 * A person (or another judge) ending it at the same moment wins quietly: "lost_race".
 */
export async function judgeRollout(
  deps: Pick<RolloutDeps, 'pipelines' | 'rollouts' | 'clock' | 'ids'>,
  rollout: Rollout,
): Promise<GuardrailOutcome> {
  const figures = await measureRollout(deps.rollouts, rollout, [], deps.clock.now().toISOString());
  const worse = figures.verdict === 'worse' && rollout.autoRollback;
  const better =
    (figures.verdict === 'improved' || figures.verdict === 'no_significant_change') && rollout.autoPromote;
  const base = { rolloutId: rollout.id, pipelineId: rollout.pipelineId };
  if (!worse && !better) return { ...base, action: 'kept', reason: figures.verdict };
  const status = worse ? 'rolled_back' : 'promoted';
  const reason = `Guardrail: ${figures.verdict.replaceAll('_', ' ')}: ${describeArms(figures)}; ${worse ? 'rolled back' : 'promoted'} automatically.`;
  try {
    await endRollout(deps, rollout, status, SYSTEM_ACTOR, reason);
    return { ...base, action: status, reason };
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    return { ...base, action: 'lost_race', reason: error.message };
  }
}
