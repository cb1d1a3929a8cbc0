/*
 * The measured effect of an approval: the rollout's two arms, or before against after, measured
 * from a maintained state kept beside the run (reads of what was recorded since, never the whole
 * history), for the effect endpoint and the guardrails' judge.
 */
import { ConflictError, NotFoundError } from '../errors.ts';
import { retentionWindow, type TeamSettingsStore } from '../lifecycle.ts';
import type { Clock } from '../ports/common.ts';
import type { KeptEffect, RecentEffectStates, RolloutRepository } from '../ports/rollouts.ts';
import type { RunRepository } from '../ports/runs.ts';
import type { Principal } from '../principal.ts';
import {
  type ArmCounts,
  BEFORE_AFTER_MIN_EXECUTIONS,
  EFFECT_ARM_LIMIT,
  EFFECT_SIGNAL_LIMIT,
  type EffectFigures,
  withExactCounts,
} from '../rollouts/effect.ts';
import { beforeAfterFigures, rolloutFigures } from '../rollouts/effect-metrics.ts';
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
  SETTLE_MS,
  stateFits,
} from '../rollouts/effect-state.ts';
import type { Effect, Rollout } from '../schemas/rollouts.ts';
import type { SynthesisRun } from '../schemas/runs.ts';
import { makeGetSynthesisRun } from './synthesis.ts';

/** The slots an approval's changes touch. */
export function touchedSlots(run: SynthesisRun): string[] {
  const approved = new Set(run.approvedChangeIds ?? run.changes.map((change) => change.id));
  return [...new Set(run.changes.filter((change) => approved.has(change.id)).map((change) => change.slotId))];
}

/** What an effect measures: its two arms' windows, the touched slots, and what it answers with. */
export interface EffectPlan {
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
export function rolloutPlan(rollout: Rollout, slotIds: string[]): EffectPlan {
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
export const NO_WINDOW: RetentionSince = { signals: '', executions: '' };

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
 * Once both arms of a rollout hold more executions than the sample (EFFECT_ARM_LIMIT), a
 * measurement answers the exact counts (the counters kept with the recording) with the sampled
 * figures as last kept, and reads what was recorded since only when the sample is this old or an
 * arm has grown by SAMPLE_GROWTH since: at 100,000 executions an arm one more execution does not
 * move a percentile of the newest 1,000, and re-reading every shard for it would cost ~100 Queries.
 */
export const SAMPLE_REFRESH_MS = 10_000;
/** The share an arm may grow by before its sample is read again (see SAMPLE_REFRESH_MS). */
export const SAMPLE_GROWTH = 0.01;

/**
 * True when a rollout's kept sample may be answered as it is, with the exact counts: both arms
 * hold more than the sample, the counts cover the kept ones, and the sample is recent (its marks
 * are SETTLE_MS behind the time it was read) and no arm has grown by SAMPLE_GROWTH since.
 */
export function sampleCurrent(kept: KeptEffect, state: EffectState, counts: ArmCounts, now: Date): boolean {
  const { base, applied } = kept.effect.arms;
  const current = (before: number, after: number) =>
    after > EFFECT_ARM_LIMIT && after >= before && after - before <= before * SAMPLE_GROWTH;
  const sampledAt = Date.parse(state.signalMark) + SETTLE_MS;
  return (
    current(base.executions, counts.base.executions) &&
    current(applied.executions, counts.candidate.executions) &&
    now.getTime() - sampledAt < SAMPLE_REFRESH_MS
  );
}

/**
 * Measures an effect from its maintained state: reads only what was recorded after the state's
 * marks (normally a few items; nothing for an arm whose window has closed), merges it, counts in
 * memory, and keeps the state again when it changed, conditioned on the version it read (a
 * measurement made meanwhile by another reader wins; this one's answer is still exact). Without a
 * kept state that fits, the same reads from the start of the windows build it (at most 1,000
 * executions an arm and EFFECT_SIGNAL_LIMIT signals). A rollout past the sample's size answers
 * its exact counts with the kept sample while that is current (sampleCurrent): no Query.
 */
export async function measureMaintained(
  rollouts: RolloutRepository,
  pipelineId: string,
  plan: EffectPlan,
  kept: KeptEffect | null,
  now: Date,
  since: RetentionSince,
  /** What this execution environment remembers of the run's state, the early reads made from it (none for the judge) and the rollout's counts when already asked for. */
  memory: { states: RecentEffectStates; early: EarlyReads | null; counts?: Promise<ArmCounts> } | null,
): Promise<Effect> {
  const early = memory?.early ?? null;
  // A rollout's arms are counted whole (kept with the recording); read beside the sample.
  const counts =
    plan.mode === 'rollout' && plan.rolloutId
      ? (memory?.counts ?? rollouts.rolloutCounts(pipelineId, plan.rolloutId))
      : null;
  const fits = kept?.state && stateFits(kept.state, plan, now) ? kept.state : null;
  if (kept && fits && counts) {
    const exact = await counts;
    if (sampleCurrent(kept, fits, exact, now) && allWithin(fits, since)) {
      memory?.states.remember(pipelineId, plan.runId, fits);
      const sampled = figuresOfState(fits, since, plan.minExecutions);
      return answer(kept, plan, exactFigures(sampled, exact, plan), now);
    }
  }
  const state = fits ?? emptyState({ ...plan, now });
  // Read beside the kept item from the marks this environment kept last: used when they cover
  // the kept item's marks (see earlyCovers); else read again from the kept marks.
  const reads =
    (fits && early && earlyCovers(early, fits)) || (await readSinceMarks(rollouts, pipelineId, state, since));
  const merged = mergeRecorded(state, reads, now);
  const exact = await counts;
  // Nothing it counts changed: the kept measurement is answered (its measuredAt says when it was made).
  const effect =
    kept && fits && !merged.changed && !exact && allWithin(merged.state, since)
      ? kept.effect
      : answer(
          kept,
          plan,
          exactFigures(figuresOfState(merged.state, since, plan.minExecutions), exact, plan),
          now,
        );
  // Written when built, or once more than WRITE_AFTER_READS items were read after the kept marks:
  // until then the next measurement reads them again (a few items) rather than this one writing.
  // A rollout's sample read again past its size is always kept (sampleCurrent reads its marks).
  const read = (reads.base?.length ?? 0) + (reads.applied?.length ?? 0) + reads.signals.length;
  const large =
    exact !== null &&
    exact.base.executions > EFFECT_ARM_LIMIT &&
    exact.candidate.executions > EFFECT_ARM_LIMIT;
  if (!fits || read > WRITE_AFTER_READS || large) {
    const expiresAtEpoch = Math.ceil(now.getTime() / 1000) + EFFECT_CACHE_SECONDS;
    const written = await rollouts.keepEffect(
      pipelineId,
      { effect, state: merged.state },
      kept?.version ?? null,
      expiresAtEpoch,
    );
    if (written) memory?.states.remember(pipelineId, plan.runId, merged.state);
  } else if (fits) {
    memory?.states.remember(pipelineId, plan.runId, fits);
  }
  return effect;
}

/** The sampled figures with a rollout's exact counts (none outside a rollout). */
function exactFigures(figures: EffectFigures, counts: ArmCounts | null, plan: EffectPlan): EffectFigures {
  return counts ? withExactCounts(figures, counts, plan.minExecutions) : figures;
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
 * Early reads stop at this many items an arm (and signals): a remembered state left far behind by
 * other environments' writes costs at most this, then the reads are made from the kept marks.
 */
const EARLY_READ_LIMIT = 100;

/** Early reads from the remembered state of a run, or null when this environment holds none. */
function readEarly(
  rollouts: RolloutRepository,
  states: RecentEffectStates,
  pipelineId: string,
  runId: string,
): Promise<EarlyReads> | null {
  const state = states.get(pipelineId, runId);
  // A full sample (a rollout past its size) is likely current: its counts are read instead.
  const full = (arm: KeptArm) => arm.executions.length >= EFFECT_ARM_LIMIT;
  if (!state || (full(state.base) && full(state.applied))) return null;
  const limits = { executions: EARLY_READ_LIMIT, signals: EARLY_READ_LIMIT };
  return readSinceMarks(rollouts, pipelineId, state, NO_WINDOW, limits).then((reads) => ({ state, reads }));
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

export interface EffectDeps {
  runs: RunRepository;
  rollouts: RolloutRepository;
  clock: Clock;
  /** The teams' retention windows: signals and executions outside them are never read. */
  settings: TeamSettingsStore;
  /** The states this execution environment measured lately (one per function, built by its root). */
  recentStates: RecentEffectStates;
}

/** What an approved run's changes did: the rollout's arms, or before against after (409 for another run). */
export function makeGetEffect({ runs, rollouts, clock, settings, recentStates }: EffectDeps) {
  const getRun = makeGetSynthesisRun({ runs });
  return async (
    principal: Principal,
    runId: string,
    options: { history?: boolean } = {},
  ): Promise<Effect> => {
    const run = await getRun(principal, runId);
    if (run.status !== 'approved' || !run.approvedAt) {
      throw new ConflictError(`The run is ${run.status}; only an approved run has an effect to measure.`);
    }
    const approvedAt = run.approvedAt;
    const now = clock.now();
    // A rollout's counts, asked for beside the kept item: often all a measurement reads (sampleCurrent).
    const counts = run.rolloutId ? rollouts.rolloutCounts(run.pipelineId, run.rolloutId) : undefined;
    // Awaited in measureMaintained; a refusal before it must not go unhandled meanwhile.
    counts?.catch(() => undefined);
    const [since, kept, rollout, early] = await Promise.all([
      settings.get(run.teamId).then((team) => {
        const window = retentionWindow(team, now);
        return { signals: window.signalsSince, executions: window.executionsSince };
      }),
      rollouts.keptEffect(run.pipelineId, run.id),
      run.rolloutId
        ? rollouts.get({ pipelineId: run.pipelineId, startedAt: approvedAt, id: run.rolloutId })
        : null,
      readEarly(rollouts, recentStates, run.pipelineId, run.id),
    ]);
    const slotIds = touchedSlots(run);
    let plan: EffectPlan;
    if (run.rolloutId) {
      if (!rollout) throw new NotFoundError(`Rollout ${run.rolloutId} of run ${run.id} does not exist.`);
      plan = rolloutPlan(rollout, slotIds);
    } else {
      plan = await beforeAfterPlan(rollouts, { ...run, approvedAt }, slotIds, kept);
    }
    const effect = await measureMaintained(rollouts, run.pipelineId, plan, kept, now, since, {
      states: recentStates,
      early,
      ...(counts ? { counts } : {}),
    });
    // The judged figures (every guarded metric, the same test as the judge's) over the sampled ones.
    if (!rollout || !counts) return { ...effect, ...beforeAfterFigures(effect) };
    const history = options.history ? await rollouts.judgementHistory(run.pipelineId, rollout.id) : undefined;
    return { ...effect, ...rolloutFigures(rollout, await counts), ...(history ? { history } : {}) };
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
