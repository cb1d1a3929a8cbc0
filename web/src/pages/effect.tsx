/**
 * The measured effect of an approved run: the verdict, a chart of both arms' failure rates with
 * their 95 % intervals on a labelled percent axis (readable at 375 px), and the figures; then an
 * active rollout's way to its next step and one tile a guarded metric (effect-metrics.tsx).
 */

import { MIN_OBSERVATIONS } from '../../../lambdas/core/rollouts/decision.ts';
import { api, client } from '../api.ts';
import type { Effect, Run } from '../types.ts';
import { ErrorNotice, Loading, useLoad } from '../ui.tsx';
import { EffectNotes, MetricTiles, StepProgress } from './effect-metrics.tsx';
import { percentText } from './release.tsx';

/**
 * A difference of two rates in percentage points, signed: "+2.5 percentage points" (a failure rate
 * going from 10 % to 12.5 %), not "2.5 %", which would read as a share of the rate itself.
 */
export function pointsText(difference: number | undefined, unit = true): string {
  if (difference === undefined) return 'n/a';
  const points = Math.round(difference * 1000) / 10;
  return `${points > 0 ? '+' : points < 0 ? '−' : '±'}${Math.abs(points).toFixed(1)}${unit ? ' percentage points' : ''}`;
}

/** An arm's failure rate with its 95 % (Wald) interval, for the chart. */
function armInterval(arm: Effect['arms']['base']): { rate: number; low: number; high: number } | null {
  if (arm.failureRate === null || arm.executions === 0) return null;
  const half = 1.96 * Math.sqrt((arm.failureRate * (1 - arm.failureRate)) / arm.executions);
  return {
    rate: arm.failureRate,
    low: Math.max(0, arm.failureRate - half),
    high: Math.min(1, arm.failureRate + half),
  };
}

const VERDICT_WORDS: Record<Effect['verdict'], string> = {
  improved: 'Improved: fewer executions fail with the candidate.',
  worse: 'Worse: more executions fail with the candidate.',
  no_significant_change: 'No significant change in the failure rate.',
  not_enough_data: 'Not enough data yet.',
};

/** The measured effect: verdict, a chart of both arms' failure rates with intervals, and the figures. */
export function EffectPanel({ run }: { run: Run }) {
  const effect = useLoad(
    () =>
      api(
        client.GET('/synthesis-runs/{id}/effect', {
          params: { path: { id: run.id }, query: { history: 'true' } },
        }),
      ),
    [run.id],
  );
  if (!effect.data)
    return effect.error ? <ErrorNotice error={effect.error} /> : <Loading what="the effect" />;
  const data = effect.data;
  const failureMetric = data.metrics?.find((metric) => metric.metric === 'failure_rate');
  const rows = [
    { name: 'Base', arm: data.arms.base },
    { name: 'Candidate', arm: data.arms.applied },
  ];
  return (
    <section aria-labelledby="effect" class="card effect">
      <h2 id="effect">Effect</h2>
      <p>
        <output aria-label="Effect verdict">{VERDICT_WORDS[data.verdict]}</output>{' '}
        <span class="muted small">
          ({data.mode === 'rollout' ? 'rollout arms' : 'before and after the approval'}; at least{' '}
          {data.minExecutions} executions per arm)
        </span>
      </p>
      <EffectNotes notes={data.notes} />
      <EffectChart rows={rows} />
      <dl class="facts">
        <dt>Base</dt>
        <dd>
          {data.arms.base.failed} of {data.arms.base.executions} failed
        </dd>
        <dt>Candidate</dt>
        <dd>
          {data.arms.applied.failed} of {data.arms.applied.executions} failed
        </dd>
        {data.failureRate ? (
          <>
            <dt>Difference</dt>
            <dd>
              {/* At the failure rate's share of the rollout's α (95 % when it is the only test): not "95 %". */}
              {pointsText(data.failureRate.difference)} in the failure rate (anytime-valid interval{' '}
              {pointsText(data.failureRate.ci95[0], false)} to {pointsText(data.failureRate.ci95[1])}, p ={' '}
              {data.failureRate.pValue.toFixed(3)})
            </dd>
          </>
        ) : failureMetric && failureMetric.difference !== null ? (
          <>
            <dt>Difference</dt>
            <dd>
              {pointsText(failureMetric.difference)} in the failure rate (no interval yet: each arm needs at
              least {MIN_OBSERVATIONS} executions before one is drawn)
            </dd>
          </>
        ) : null}
      </dl>
      {data.progress ? <StepProgress progress={data.progress} next={data.next} /> : null}
      <MetricTiles effect={data} />
    </section>
  );
}

/**
 * The chart's geometry: horizontal positions in percent of the card's width (labels on the left,
 * the plot after), heights and fonts in pixels, so its text stays readable from 375 px to 1440 px.
 */
const CHART = { plotLeft: 32, plotRight: 92, rowHeight: 40, top: 22 };

/** A round axis maximum above every interval: 5 %, 10 %, 20 %, 25 %, 50 % or 100 %. */
function axisMax(high: number): number {
  return [0.05, 0.1, 0.2, 0.25, 0.5, 1].find((step) => step >= high) ?? 1;
}

function EffectChart({ rows }: { rows: { name: string; arm: Effect['arms']['base'] }[] }) {
  const max = axisMax(Math.max(0, ...rows.map((row) => armInterval(row.arm)?.high ?? 0)));
  const x = (rate: number) => `${CHART.plotLeft + (rate / max) * (CHART.plotRight - CHART.plotLeft)}%`;
  const axisY = CHART.top + rows.length * CHART.rowHeight;
  const ticks = [0, 0.5, 1].map((share) => share * max);
  return (
    <svg
      class="effect-chart"
      width="100%"
      height={axisY + 40}
      role="img"
      aria-label={`Failure rate of the base ${percentText(rows[0]?.arm.failureRate)}, of the candidate ${percentText(rows[1]?.arm.failureRate)}`}
    >
      {ticks.map((tick) => (
        <g key={tick}>
          <line
            x1={x(tick)}
            x2={x(tick)}
            y1={CHART.top - 12}
            y2={axisY}
            stroke="currentColor"
            opacity="0.2"
          />
          <text x={x(tick)} y={axisY + 16} font-size="12" text-anchor="middle">
            {`${Number((tick * 100).toFixed(1))} %`}
          </text>
        </g>
      ))}
      <line x1={x(0)} x2={x(max)} y1={axisY} y2={axisY} stroke="currentColor" />
      <text x={x(max)} y={axisY + 34} font-size="12" text-anchor="end">
        Executions failed, each arm's 95 % interval
      </text>
      {rows.map((row, index) => {
        const interval = armInterval(row.arm);
        const y = CHART.top + 14 + index * CHART.rowHeight;
        return (
          <g key={row.name}>
            <text x="0" y={y + 4} font-size="12">
              {row.name}
            </text>
            {interval ? (
              <>
                <line
                  x1={x(interval.low)}
                  x2={x(interval.high)}
                  y1={y}
                  y2={y}
                  stroke="currentColor"
                  stroke-width="2"
                />
                <circle cx={x(interval.rate)} cy={y} r="4" />
                <text x={x(interval.rate)} y={y - 8} font-size="12" text-anchor="middle">
                  {percentText(interval.rate)}
                </text>
              </>
            ) : (
              <text x={x(0)} y={y + 4} font-size="12">
                no executions yet
              </text>
            )}
          </g>
        );
      })}
    </svg>
  );
}
