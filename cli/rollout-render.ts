/**
 * Rollouts and effects in words for `rollout show` and `runs effect`: the rollout's steps and
 * guardrails, and every guarded metric with both arms in its unit, candidate − base, its
 * anytime-valid interval, the threshold, a verdict and what happens next (and the two reads they
 * render, whose answers give the types). `--json` bypasses the rendering.
 */
import {
  formatDelta,
  formatFigure,
  GUARD_METRICS,
  type GuardMetric,
} from '../lambdas/core/rollouts/guards.ts';
import { call } from './api.ts';
import type { Context } from './context.ts';
import { fields, table, who } from './render.ts';

export function getRollout(context: Context, pipelineId: string) {
  return call(
    context.client.GET('/pipelines/{pipelineId}/rollout', { params: { path: { pipelineId } } }),
    context.apiUrl,
  );
}

export function getEffect(context: Context, runId: string, history = false) {
  return call(
    context.client.GET('/synthesis-runs/{id}/effect', {
      params: { path: { id: runId }, query: history ? { history: 'true' } : {} },
    }),
    context.apiUrl,
  );
}

export type Rollout = Awaited<ReturnType<typeof getRollout>>;
export type Effect = Awaited<ReturnType<typeof getEffect>>;
type Metric = NonNullable<Effect['metrics']>[number];
type Guardrail = NonNullable<Rollout['guardrails']>[number];

const DEFAULT_GUARDRAILS: Guardrail[] = [{ metric: 'failure_rate' }];

const better = (direction: string) => (direction === 'higher_is_better' ? 'higher' : 'lower');

/** "signal relevance (higher is better)", "failure rate (lower is better)". */
function metricName(metric: GuardMetric, kind: string | null | undefined, direction: string): string {
  const name = metric === 'signal' ? `signal ${kind}` : GUARD_METRICS[metric].label;
  return `${name} (${better(direction)} is better)`;
}

/** A signed difference in the metric's unit: "+2.50 points", "-12 ms", "+0.040". */
function signed(metric: GuardMetric, value: number): string {
  const text = formatDelta({ metric }, value);
  return value > 0 && !text.startsWith('-') ? `+${text}` : text;
}

/** The guardrails as people read them: "failure rate (lower is better) within 1.00 points". */
export function describeGuardrails(guardrails: readonly Guardrail[] | undefined): string {
  return (guardrails && guardrails.length > 0 ? guardrails : DEFAULT_GUARDRAILS)
    .map((guard) => {
      const row = GUARD_METRICS[guard.metric];
      const direction = guard.direction ?? row.direction ?? 'lower_is_better';
      const threshold = guard.threshold ?? row.threshold ?? 0;
      return `${metricName(guard.metric, guard.kind, direction)} within ${formatDelta(guard, threshold)}`;
    })
    .join('; ');
}

/** "2 of 3: 25 % of traffic (steps 5 → 25 → 50 %)", or the one share of a rollout without steps. */
export function stepProgress(rollout: Pick<Rollout, 'percent' | 'steps' | 'step'>): string {
  const steps = rollout.steps && rollout.steps.length > 0 ? rollout.steps : [rollout.percent];
  const step = rollout.step ?? 0;
  return `${step + 1} of ${steps.length}: ${rollout.percent} % of traffic (steps ${steps.join(' → ')} %)`;
}

export function renderRollout(named: Rollout): string {
  const rollout = {
    ...named,
    step: stepProgress(named),
    guardrails: describeGuardrails(named.guardrails),
    startedBy: who(named.startedByName, named.startedBy),
    endedBy: who(named.endedByName, named.endedBy),
  };
  return fields(rollout, [
    'id',
    'status',
    'step',
    'guardrails',
    'baseConfigurationId',
    'candidateConfigurationId',
    'minExecutions',
    'autoPromote',
    'autoRollback',
    'synthesisRunId',
    'startedAt',
    'startedBy',
    'stepStartedAt',
    'endedAt',
    'endedBy',
    'endReason',
  ]);
}

const count = (n: number) => n.toLocaleString('en-US');

function armFigure(metric: Metric, arm: Metric['base']): string {
  const mean = arm.mean === null ? 'n/a' : formatFigure(metric, arm.mean);
  return `${mean} (n = ${count(arm.n)})`;
}

/** "low to high" of an interval, signed, in the metric's unit. */
function between(metric: GuardMetric, interval: readonly number[]): string {
  const [low = Number.NaN, high = Number.NaN] = interval;
  return `${signed(metric, low)} to ${signed(metric, high)}`;
}

/**
 * Every guarded metric as a table: both arms, candidate − base, its interval, the worst case a
 * promotion waits on (within the threshold: non-inferior), the threshold, the verdict.
 */
export function renderMetrics(metrics: readonly Metric[]): string {
  const rows = metrics.map((metric) => ({
    metric: metricName(metric.metric, metric.kind, metric.direction),
    base: armFigure(metric, metric.base),
    candidate: armFigure(metric, metric.applied),
    difference: metric.difference === null ? 'n/a' : signed(metric.metric, metric.difference),
    interval: metric.interval ? between(metric.metric, metric.interval) : 'n/a',
    'at worst (95 %)':
      typeof metric.worseBound === 'number' ? signed(metric.metric, metric.worseBound) : 'n/a',
    threshold: formatDelta(metric, metric.threshold),
    verdict: metric.verdict.replaceAll('_', ' '),
  }));
  return table(rows, [
    'metric',
    'base',
    'candidate',
    'difference',
    'interval',
    'at worst (95 %)',
    'threshold',
    'verdict',
  ]);
}

/** The lines both views share: every guarded metric, what happens next, the notes. */
export function judgedLines(effect: Pick<Effect, 'metrics' | 'next' | 'notes'>): string[] {
  const lines: string[] = [];
  if (effect.metrics && effect.metrics.length > 0) {
    lines.push('', 'guarded metrics (candidate − base; each interval holds however often it is read):');
    lines.push(renderMetrics(effect.metrics));
  }
  if (effect.next) lines.push('', `next: ${effect.next}`);
  for (const note of effect.notes ?? []) lines.push(`note: ${note}`);
  return lines;
}

const percent = (rate: number | null | undefined) =>
  rate === null || rate === undefined ? 'n/a' : `${(rate * 100).toFixed(1)} %`;

/** A difference of two rates, in signed percentage points ("+2.5 pp" is 10 % → 12.5 %). */
const points = (difference: number | undefined) => {
  if (difference === undefined) return 'n/a';
  const value = Math.round(difference * 1000) / 10;
  return `${value > 0 ? '+' : ''}${value.toFixed(1)} percentage points`;
};

/**
 * The effect in lines: the verdict, each arm's failure rate, their difference in percentage points,
 * every guarded metric, each slot, the notes and what happens next.
 */
export function renderEffect(effect: Effect): string {
  const { base, applied } = effect.arms;
  const lines = [
    `verdict: ${effect.verdict.replaceAll('_', ' ')} (${effect.mode.replace('_', ' ')}, at least ${effect.minExecutions} executions per arm)`,
    `base       ${effect.baseConfigurationId}: ${percent(base.failureRate)} failed (${base.failed} of ${base.executions})`,
    `candidate  ${effect.appliedConfigurationId}: ${percent(applied.failureRate)} failed (${applied.failed} of ${applied.executions})`,
  ];
  if (effect.failureRate) {
    const [low, high] = effect.failureRate.ci95;
    lines.push(
      `difference ${points(effect.failureRate.difference)} (anytime-valid interval ${points(low)} to ${points(high)}), p = ${effect.failureRate.pValue.toFixed(4)}`,
    );
  }
  lines.push(...judgedLines(effect));
  if (effect.slots.length > 0) lines.push('');
  for (const slot of effect.slots) {
    lines.push(
      `slot ${slot.slotId}: ${percent(slot.base.failureRate)} → ${percent(slot.applied.failureRate)} failed`,
    );
  }
  if (effect.history && effect.history.length > 0) {
    lines.push('', renderHistory(effect));
  }
  return lines.join('\n');
}

/** `--history`: each judgement's difference and interval per metric, oldest first. */
function renderHistory(effect: Effect): string {
  const metrics = effect.metrics ?? [];
  const names = metrics.map((metric) =>
    metric.metric === 'signal' ? `signal ${metric.kind}` : metric.metric,
  );
  const rows = (effect.history ?? []).map((point) => {
    const row: Record<string, string> = { at: point.at, step: String(point.step + 1), n: count(point.n) };
    point.metrics.forEach((figure, i) => {
      const metric = metrics[i];
      row[names[i] ?? `metric ${i + 1}`] =
        figure && metric
          ? `${signed(metric.metric, figure.difference)} (${between(metric.metric, figure.interval)})`
          : 'n/a';
    });
    return row;
  });
  return `judgements (candidate − base and its interval, oldest first):\n${table(rows, ['at', 'step', 'n', ...names])}`;
}
