/*
 * Rollouts and what they measure: show, promote and roll back a pipeline's rollout, serve the arm
 * a routing key gets, the effect of an approval, and the guardrail that judges active rollouts.
 */

import { ConflictError, NotFoundError } from '../errors.ts';
import { type Actor, actorOf, newEvent, SYSTEM_ACTOR } from '../events.ts';
import { retentionWindow, type TeamSettingsStore } from '../lifecycle.ts';
import type { Clock, IdGenerator } from '../ports/common.ts';
import type { PipelineRepository } from '../ports/pipelines.ts';
import type { KeptEffect, RolloutRepository } from '../ports/rollouts.ts';
import type { RunRepository } from '../ports/runs.ts';
import { assertCanWrite, assertSameTeam, type Principal } from '../principal.ts';
import {
  BEFORE_AFTER_MIN_EXECUTIONS,
  describeArms,
  EFFECT_ARM_LIMIT,
  EFFECT_SIGNAL_LIMIT,
} from '../rollouts/effect.ts';
import {
  type ArmWindow,
  armClosed,
  type EffectState,
  emptyState,
  figuresOfState,
  type KeptArm,
  mergeRecorded,
  type RecordedExecution,
  type RetentionSince,
  stateFits,
} from '../rollouts/effect-state.ts';
import { servesCandidate } from '../rollouts/routing.ts';
import type { Activation, Configuration } from '../schemas/pipelines.ts';
import type { Effect, Rollout } from '../schemas/rollouts.ts';
import type { SynthesisRun } from '../schemas/runs.ts';
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

/** What an effect measures: its two arms' windows, the touched slots, and what it answers with. */
interface EffectPlan {
  runId: string;
  mode: Effect['mode'];
  rolloutId: string | null;
  baseConfigurationId: string;
  appliedConfigurationId: string;
  minExecutions: number;
  slotIds: string[];
  base: ArmWindow;
  applied: ArmWindow;
  /** Citing signals recorded from then on are counted. */
  signalsFrom: string;
}

/**
 * A rollout's arms: the executions recorded since it started (until it ended), by the
 * configuration they ran; the signals recorded since it started.
 */
function rolloutPlan(rollout: Rollout, slotIds: string[]): EffectPlan {
  const recorded = {
    recordedFrom: rollout.startedAt,
    ...(rollout.endedAt ? { recordedBefore: rollout.endedAt } : {}),
  };
  return {
    runId: rollout.synthesisRunId,
    mode: 'rollout',
    rolloutId: rollout.id,
    baseConfigurationId: rollout.baseConfigurationId,
    appliedConfigurationId: rollout.candidateConfigurationId,
    minExecutions: rollout.minExecutions,
    slotIds,
    base: { configurationId: rollout.baseConfigurationId, ...recorded },
    applied: { configurationId: rollout.candidateConfigurationId, ...recorded },
    signalsFrom: rollout.startedAt,
  };
}

/** Where the team's retention windows begin: records older are never read. */
const NO_WINDOW: RetentionSince = { signals: '', executions: '' };
const later = (a: string, b: string) => (a > b ? a : b);

/**
 * A measurement keeps its merged state when it read more than this many items after the kept
 * marks: below, the next one reads them again (cheaper than a write on every measurement), so a
 * measurement reads at most about this many besides what was recorded since the previous one.
 */
const WRITE_AFTER_READS = 50;

/** How long a kept effect lives without being measured again (seconds, TTL). */
export const EFFECT_CACHE_SECONDS = 3_600;

/**
 * Measures an effect from its maintained state: reads only what was recorded after the state's
 * marks (normally a few items; nothing for an arm whose window has closed), merges it, counts in
 * memory, and keeps the state again when it changed, conditioned on the version it read (a
 * measurement made meanwhile by another reader wins; this one's answer is still exact). Without a
 * kept state that fits, the same reads from the start of the windows build it (at most 1,000
 * executions an arm and EFFECT_SIGNAL_LIMIT signals).
 */
async function measureMaintained(
  rollouts: RolloutRepository,
  pipelineId: string,
  plan: EffectPlan,
  kept: KeptEffect | null,
  now: Date,
  since: RetentionSince,
  early: EarlyReads | null = null,
): Promise<Effect> {
  const fits = kept?.state && stateFits(kept.state, plan, now) ? kept.state : null;
  const state = fits ?? emptyState({ ...plan, now });
  // Read beside the kept item from the marks this environment kept last: used when they cover
  // the kept item's marks (see earlyCovers); else read again from the kept marks.
  const reads =
    (fits && early && earlyCovers(early, fits)) || (await readSinceMarks(rollouts, pipelineId, state, since));
  const merged = mergeRecorded(state, reads, now);
  // Nothing it counts changed: the kept measurement is answered (its measuredAt says when it was made).
  const effect =
    kept && fits && !merged.changed && allWithin(merged.state, since)
      ? kept.effect
      : answer(kept, plan, figuresOfState(merged.state, since, plan.minExecutions), now);
  // Written when built, or once more than WRITE_AFTER_READS items were read after the kept marks:
  // until then the next measurement reads them again (a few items) rather than this one writing.
  const read = (reads.base?.length ?? 0) + (reads.applied?.length ?? 0) + reads.signals.length;
  if (!fits || read > WRITE_AFTER_READS) {
    const expiresAtEpoch = Math.ceil(now.getTime() / 1000) + EFFECT_CACHE_SECONDS;
    const written = await rollouts.keepEffect(
      pipelineId,
      { effect, state: merged.state },
      kept?.version ?? null,
      expiresAtEpoch,
    );
    if (written) rememberState(pipelineId, plan.runId, { state: merged.state });
  } else if (fits) {
    rememberState(pipelineId, plan.runId, { state: fits });
  }
  return effect;
}

type Reads = Parameters<typeof mergeRecorded>[1];

/** What was recorded after a state's marks: per arm (none for a closed one) and the citing signals. */
async function readSinceMarks(
  rollouts: RolloutRepository,
  pipelineId: string,
  state: EffectState,
  since: RetentionSince,
  limits = { executions: EFFECT_ARM_LIMIT, signals: EFFECT_SIGNAL_LIMIT },
): Promise<Reads> {
  const readArm = (arm: KeptArm) =>
    armClosed(arm)
      ? Promise.resolve(null)
      : rollouts.executionsRecorded(
          pipelineId,
          { ...arm.window, after: later(arm.mark, since.executions) },
          limits.executions,
        );
  const [base, applied, signals] = await Promise.all([
    readArm(state.base),
    readArm(state.applied),
    rollouts.citingSignalsRecorded(pipelineId, later(state.signalMark, since.signals), limits.signals),
  ]);
  return { base, applied, signals };
}

/** Reads made before the kept item arrived, from the marks of the state this environment kept. */
interface EarlyReads {
  state: EffectState;
  reads: Reads;
}

/**
 * The early reads when they cover everything after the kept state's marks (same windows, marks no
 * later: what they read twice is recognized by id), else null.
 */
function earlyCovers(early: EarlyReads, kept: EffectState): Reads | null {
  const arm = (from: KeptArm, to: KeptArm, read: RecordedExecution[] | null) => {
    if (armClosed(to)) return { ok: true, read: null };
    const same = JSON.stringify(from.window) === JSON.stringify(to.window);
    // A full page may have left older ones unread.
    return { ok: same && read !== null && read.length < EARLY_READ_LIMIT && from.mark <= to.mark, read };
  };
  const base = arm(early.state.base, kept.base, early.reads.base);
  const applied = arm(early.state.applied, kept.applied, early.reads.applied);
  const signalsOk =
    early.reads.signals.length < EARLY_READ_LIMIT && early.state.signalMark <= kept.signalMark;
  if (!base.ok || !applied.ok || !signalsOk) return null;
  return { base: base.read, applied: applied.read, signals: early.reads.signals };
}

/**
 * The state this execution environment last kept or found kept, per run (a few, newest kept): the
 * next measurement reads what was recorded after its marks at once, beside the kept item.
 */
const recentStates = new Map<string, { state: EffectState }>();
/**
 * Early reads stop at this many items an arm (and signals): a remembered state left far behind by
 * other environments' writes costs at most this, then the reads are made from the kept marks.
 */
const EARLY_READ_LIMIT = 100;
const RECENT_STATES_KEPT = 16;

function rememberState(pipelineId: string, runId: string, entry: { state: EffectState }) {
  const key = `${pipelineId}#${runId}`;
  recentStates.delete(key);
  recentStates.set(key, entry);
  while (recentStates.size > RECENT_STATES_KEPT) {
    const oldest = recentStates.keys().next().value;
    if (oldest === undefined) break;
    recentStates.delete(oldest);
  }
}

/** Early reads from the remembered state of a run, or null when this environment holds none. */
function readEarly(
  rollouts: RolloutRepository,
  pipelineId: string,
  runId: string,
): Promise<EarlyReads> | null {
  const recent = recentStates.get(`${pipelineId}#${runId}`);
  if (!recent) return null;
  const limits = { executions: EARLY_READ_LIMIT, signals: EARLY_READ_LIMIT };
  return readSinceMarks(rollouts, pipelineId, recent.state, NO_WINDOW, limits).then((reads) => ({
    state: recent.state,
    reads,
  }));
}

/** The effect answered for these figures: the kept one when they are the same. */
function answer(
  kept: KeptEffect | null,
  plan: EffectPlan,
  figures: ReturnType<typeof figuresOfState>,
  now: Date,
): Effect {
  const measured: Effect = {
    runId: plan.runId,
    mode: plan.mode,
    rolloutId: plan.rolloutId,
    baseConfigurationId: plan.baseConfigurationId,
    appliedConfigurationId: plan.appliedConfigurationId,
    ...figures,
    minExecutions: plan.minExecutions,
    measuredAt: now.toISOString(),
  };
  return kept && sameFigures(kept.effect, measured) ? kept.effect : measured;
}

/** True when every execution and signal a state holds is inside the retention windows. */
function allWithin(state: EffectState, since: RetentionSince): boolean {
  for (const execution of [...state.base.executions, ...state.applied.executions]) {
    if (execution.startedAt < since.executions) return false;
    for (const signal of execution.signals) if (signal.occurredAt < since.signals) return false;
  }
  return true;
}

function sameFigures(a: Effect, b: Effect): boolean {
  return JSON.stringify({ ...a, measuredAt: '' }) === JSON.stringify({ ...b, measuredAt: '' });
}

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
    if (run.status !== 'approved' || !run.approvedAt) {
      throw new ConflictError(`The run is ${run.status}; only an approved run has an effect to measure.`);
    }
    const approvedAt = run.approvedAt;
    const now = clock.now();
    const [since, kept, rollout, early] = await Promise.all([
      settings
        ? settings.get(run.teamId).then((team) => {
            const window = retentionWindow(team, now);
            return { signals: window.signalsSince, executions: window.executionsSince };
          })
        : NO_WINDOW,
      rollouts.keptEffect(run.pipelineId, run.id),
      run.rolloutId
        ? rollouts.get({ pipelineId: run.pipelineId, startedAt: approvedAt, id: run.rolloutId })
        : null,
      readEarly(rollouts, run.pipelineId, run.id),
    ]);
    const slotIds = touchedSlots(run);
    let plan: EffectPlan;
    if (run.rolloutId) {
      if (!rollout) throw new NotFoundError(`Rollout ${run.rolloutId} of run ${run.id} does not exist.`);
      plan = rolloutPlan(rollout, slotIds);
    } else {
      plan = await beforeAfterPlan(rollouts, { ...run, approvedAt }, slotIds, kept);
    }
    return measureMaintained(rollouts, run.pipelineId, plan, kept, now, since, early);
  };
}

/**
 * An approval without a rollout: the executions of the configuration it replaced started before
 * it, against those of the applied configuration started after it (all signals citing them).
 */
async function beforeAfterPlan(
  rollouts: RolloutRepository,
  run: SynthesisRun & { approvedAt: string },
  slotIds: string[],
  kept: KeptEffect | null,
): Promise<EffectPlan> {
  const applied = run.appliedConfigurationId ?? run.proposedConfigurationId;
  if (!applied) throw new ConflictError(`Run ${run.id} applied no configuration.`);
  // A rebased approval replaced the configuration active then, which its activation names (kept once read).
  const baseId =
    kept?.effect.mode === 'before_after'
      ? kept.effect.baseConfigurationId
      : ((await rollouts.activationOfRun(run.pipelineId, run.approvedAt, run.id))?.previousConfigurationId ??
        run.baseConfigurationId);
  return {
    runId: run.id,
    mode: 'before_after',
    rolloutId: null,
    baseConfigurationId: baseId,
    appliedConfigurationId: applied,
    minExecutions: BEFORE_AFTER_MIN_EXECUTIONS,
    slotIds,
    base: { configurationId: baseId, startedBefore: run.approvedAt },
    applied: { configurationId: applied, startedFrom: run.approvedAt },
    signalsFrom: '',
  };
}

/** How many active rollouts one guardrail pass judges at most. */
export const GUARDRAIL_BATCH = 100;

export interface GuardrailOutcome {
  rolloutId: string;
  pipelineId: string;
  action: 'promoted' | 'rolled_back' | 'kept' | 'lost_race';
  reason: string;
}

/** What judging a rollout needs; with `runs`, a rollout judged before its effect was ever read keeps its touched slots' figures too. */
export type JudgeDeps = Pick<RolloutDeps, 'pipelines' | 'rollouts' | 'clock' | 'ids'> & {
  runs?: RunRepository;
};

/**
 * The guardrail: judges every active rollout with `minExecutions` in both arms (judgeRollout), at
 * most GUARDRAIL_BATCH a pass. The sweeper's pass, the backstop of the per-batch checks.
 */
export function makeJudgeRollouts(deps: JudgeDeps) {
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
export async function judgeRollout(deps: JudgeDeps, rollout: Rollout): Promise<GuardrailOutcome> {
  // The same maintained measure as the effect endpoint's (one item, the few executions since).
  const kept = await deps.rollouts.keptEffect(rollout.pipelineId, rollout.synthesisRunId);
  let slotIds = kept?.state?.slotIds;
  if (!slotIds) {
    const run = deps.runs ? await deps.runs.get(rollout.synthesisRunId) : null;
    slotIds = run ? touchedSlots(run) : [];
  }
  const figures = await measureMaintained(
    deps.rollouts,
    rollout.pipelineId,
    rolloutPlan(rollout, slotIds),
    kept,
    deps.clock.now(),
    NO_WINDOW,
  );
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
