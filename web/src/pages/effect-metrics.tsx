/**
 * The effect's guarded metrics, one tile each: both arms' figures with their unit, the difference
 * and its anytime-valid interval at each judgement (?history=true) against the threshold line, the
 * same figures in words; and an active rollout's way to its next step, with what happens then.
 */
import { MIN_OBSERVATIONS } from '../../../lambdas/core/rollouts/decision.ts';
import { formatDelta, formatFigure } from '../../../lambdas/core/rollouts/guards.ts';
import { formatCount } from '../format.ts';
import { type Metric, metricName, signedDelta, thresholdLine } from '../metric-format.ts';
import type { Effect } from '../types.ts';
import { DifferenceChart, type Point } from './difference-chart.tsx';

type Progress = NonNullable<Effect['progress']>;
type Judgement = NonNullable<Effect['history']>[number];
/** What the tiles read of the effect, as the client answers it (tuples arrive as arrays). */
interface Figures {
  metrics?: Metric[] | undefined;
  history?:
    | Array<
        Omit<Judgement, 'metrics'> & {
          metrics: Array<{ difference: number; interval: readonly number[]; worseBound?: number } | null>;
        }
      >
    | undefined;
  arms: { applied: { executions: number } };
  progress?: Progress | null | undefined;
}

function verdictWords(metric: Metric): string {
  const tolerated = formatDelta(metric, metric.threshold);
  switch (metric.verdict) {
    case 'worse':
      return 'Worse: the candidate is shown worse than the base.';
    case 'better':
      return 'Better: the candidate is shown better than the base.';
    case 'non_inferior':
      return `Within the threshold: shown at most ${tolerated} worse (at worst ${worstWords(metric)}).`;
    case 'inconclusive':
      return `Not shown yet: at worst it may be ${worstWords(metric)}, past the threshold of ${tolerated} worse.`;
    default:
      return `Not enough data: each arm needs ${MIN_OBSERVATIONS} observations before an interval is drawn.`;
  }
}

/** The 95 % worst case as a size on the worse side: "0.40 points worse", or "no worse" when it is on the better side. */
function worstWords(metric: Metric): string {
  if (metric.worseBound === null) return 'unknown';
  const worseBy = metric.direction === 'lower_is_better' ? metric.worseBound : -metric.worseBound;
  return worseBy <= 0 ? 'no worse' : `${formatDelta(metric, worseBy)} worse`;
}

/** An arm's mean with its unit and how many observations it rests on. */
function armText(metric: Metric, arm: Metric['base']): string {
  if (arm.mean === null || arm.n === 0) return 'no observations yet';
  if (metric.metric === 'failure_rate')
    return `${formatFigure(metric, arm.mean)} (${formatCount(Math.round(arm.mean * arm.n))} of ${formatCount(arm.n)} failed)`;
  const unit = metric.metric === 'signal' ? ' mean score' : '';
  // Kept on one line: "n = 1,200" wrapped after "=" reads badly on a phone.
  return `${formatFigure(metric, arm.mean)}${unit} (n\u00a0=\u00a0${formatCount(arm.n)})`;
}

/** The metric's judgements as chart points, oldest first, ending at the figures answered now. */
export function pointsOf(effect: Figures, index: number): Point[] {
  const points: Point[] = [];
  for (const judgement of effect.history ?? []) {
    const figures = judgement.metrics[index];
    if (figures)
      points.push({
        n: judgement.n,
        step: judgement.step,
        difference: figures.difference,
        low: figures.interval[0] ?? figures.difference,
        high: figures.interval[1] ?? figures.difference,
        bound: figures.worseBound,
      });
  }
  const metric = effect.metrics?.[index];
  const n = effect.arms.applied.executions;
  const last = points.at(-1);
  if (metric?.interval && metric.difference !== null && (!last || n > last.n))
    points.push({
      n,
      step: effect.progress?.step ?? last?.step ?? 0,
      difference: metric.difference,
      low: metric.interval[0] ?? metric.difference,
      high: metric.interval[1] ?? metric.difference,
      bound: metric.worseBound ?? undefined,
    });
  return points;
}

/** One tile a guarded metric: the verdict, the chart, both arms and the difference with units. */
export function MetricTile({ effect, index }: { effect: Figures; index: number }) {
  const metric = effect.metrics?.[index];
  if (!metric) return null;
  const name = metricName(metric);
  const id = `metric-${index}`;
  const worseSide = metric.direction === 'lower_is_better' ? 'higher is worse' : 'lower is worse';
  return (
    <li class={`metric-tile verdict-${metric.verdict}`}>
      <article aria-labelledby={id}>
        <h3 id={id}>{name}</h3>
        <p class="metric-verdict">
          <output aria-label={`${name} verdict`}>{verdictWords(metric)}</output>
        </p>
        <DifferenceChart metric={metric} name={name} points={pointsOf(effect, index)} />
        <dl class="facts metric-figures">
          <dt>Candidate</dt>
          <dd>{armText(metric, metric.applied)}</dd>
          <dt>Base</dt>
          <dd>{armText(metric, metric.base)}</dd>
          <dt>Difference</dt>
          <dd>
            {metric.difference === null
              ? 'n/a'
              : metric.interval
                ? `${signedDelta(metric, metric.difference)} (interval ${signedDelta(metric, metric.interval[0] ?? 0)} to ${signedDelta(metric, metric.interval[1] ?? 0)})`
                : `${signedDelta(metric, metric.difference)} (no interval yet)`}
          </dd>
          <dt>At worst (95 %)</dt>
          <dd>
            {metric.worseBound === null
              ? 'n/a'
              : `${signedDelta(metric, metric.worseBound)} (the dotted line)`}
          </dd>
          <dt>Threshold</dt>
          <dd>
            {signedDelta(metric, thresholdLine(metric))} ({worseSide})
          </dd>
        </dl>
      </article>
    </li>
  );
}

/** An active rollout's step, the candidate's executions at it against what a step needs, and what comes next. */
export function StepProgress({ progress, next }: { progress: Progress; next: string | null | undefined }) {
  const done = Math.min(progress.candidateExecutions, progress.minExecutions);
  return (
    <div class="step-progress">
      <p>
        <strong>
          Step {progress.step + 1} of {progress.steps}
        </strong>{' '}
        · {progress.percent} % of traffic to the candidate
      </p>
      <label for="step-progress-bar">
        Candidate executions at this step: {formatCount(progress.candidateExecutions)} of the{' '}
        {formatCount(progress.minExecutions)} a step needs
      </label>
      <progress id="step-progress-bar" max={progress.minExecutions} value={done} />
      {next ? (
        <p>
          <strong>What happens next:</strong> <output aria-label="What happens next">It {next}.</output>
        </p>
      ) : null}
    </div>
  );
}

/** The notes beside the figures: before/after is not randomized, a rollout started before the sums. */
export function EffectNotes({ notes }: { notes: string[] | undefined }) {
  if (!notes || notes.length === 0) return null;
  return (
    <div class="notice notice-warning" role="note" aria-label="About these figures">
      {notes.map((note) => (
        <p key={note}>{note}</p>
      ))}
    </div>
  );
}

/** Every guarded metric's tile. */
export function MetricTiles({ effect }: { effect: Figures }) {
  const metrics = effect.metrics ?? [];
  if (metrics.length === 0) return null;
  return (
    <ul class="metric-tiles" aria-label="Guarded metrics">
      {metrics.map((metric, index) => (
        <MetricTile key={`${metric.metric}/${metric.kind ?? ''}`} effect={effect} index={index} />
      ))}
    </ul>
  );
}
