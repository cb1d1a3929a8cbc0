/**
 * `npm run bench -- guardrails`: 10,000 simulated rollouts a case through the judge's own code
 * (bench/guardrails-sim.ts), looked at after every batch of 20 up to 5,000 executions an arm, in
 * the world the method was tuned on and in one it never was: how often an A/A rollout is ever
 * decided, how often a regression of twice the threshold is promoted or rolled back, how often an
 * improvement of twice the threshold is promoted, and the median executions to a decision beside
 * a fixed-horizon test of the same power.
 */
import { metricAlpha, ROLLOUT_ALPHA } from '../lambdas/core/rollouts/decision.ts';
import { guardName } from '../lambdas/core/rollouts/guards.ts';
import { normalCdf } from '../lambdas/core/rollouts/statistics.ts';
import {
  BENCH_OPTIONS,
  SIM_GUARDS,
  type SimResult,
  simulate,
  TUNED_WORLD,
  UNSEEN_WORLD,
  varianceOfMetric,
  type World,
} from './guardrails-sim.ts';

export const AA_DECIDED_MAX = 0.05;
export const REGRESSION_PROMOTED_MAX = 0.05;
export const REGRESSION_ROLLED_BACK_MIN = 0.8;
export const IMPROVEMENT_PROMOTED_MIN = 0.9;

export interface MetricFigures {
  metric: string;
  regression: SimResult;
  improvement: SimResult;
  /** Executions an arm a fixed-horizon test needs for the rollbacks' power (same α). */
  fixedHorizon: number;
  /** The share of improvements a single test of every guard at 5,000 an arm would promote. */
  fixedHorizonPromotion: number;
}

export interface WorldFigures {
  world: World;
  aa: SimResult;
  metrics: MetricFigures[];
  ms: number;
}

/** The standard normal quantile, by bisection on normalCdf (ample for a sample size). */
function normalQuantile(p: number): number {
  let low = -10;
  let high = 10;
  for (let i = 0; i < 80; i++) {
    const mid = (low + high) / 2;
    if (normalCdf(mid) < p) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}

/** Executions an arm a two-sided fixed-horizon z-test at α needs to detect the shift with `power`. */
function fixedHorizonN(world: World, metric: 0 | 1 | 2, power: number): number {
  const { base, candidate, delta } = varianceOfMetric(world, metric, { metric, thresholds: 2 });
  const z =
    normalQuantile(1 - metricAlpha(SIM_GUARDS.length) / 2) +
    normalQuantile(Math.min(0.99, Math.max(0.5, power)));
  return Math.ceil((z * z * (base + candidate)) / (delta * delta));
}

/**
 * The share of improvements (this metric 2 × its threshold better, the others unchanged) that a
 * single test of every guard at the last look (5,000 an arm, looked at once, at the α the judge's
 * non-inferiority bound keeps: the rollout's whole α, two-sided)
 * would promote: each guard's upper bound of candidate − base within its threshold, the metrics
 * independent. No test that may be looked at after every batch does better; where this is under
 * 90 %, the world's noise against its thresholds, not the method, keeps the power target out of reach.
 */
function fixedHorizonPromotion(world: World, metric: 0 | 1 | 2): number {
  const n = BENCH_OPTIONS.maxPerArm;
  const z = normalQuantile(1 - ROLLOUT_ALPHA / 2);
  return ([0, 1, 2] as const).reduce<number>((share, guard) => {
    const shifted = guard === metric;
    const { base, candidate, delta } = varianceOfMetric(world, guard, {
      metric: shifted ? metric : null,
      thresholds: 2,
    });
    const threshold = Math.abs(delta) / 2;
    const difference = shifted ? -Math.abs(delta) : 0;
    const standardError = Math.sqrt((base + candidate) / n);
    return share * normalCdf((threshold - difference) / standardError - z);
  }, 1);
}

export function measureWorld(world: World, rollouts = BENCH_OPTIONS.rollouts): WorldFigures {
  const started = performance.now();
  const options = { ...BENCH_OPTIONS, rollouts };
  // A/A keeps looking after a promotion: was it ever shown better or worse, at any look?
  const aa = simulate(world, { metric: null, thresholds: 0 }, { ...options, stopAtPromotion: false });
  const metrics = ([0, 1, 2] as const).map((metric) => {
    const regression = simulate(world, { metric, thresholds: 2 }, options);
    const improvement = simulate(world, { metric, thresholds: -2 }, options);
    return {
      metric: guardName(SIM_GUARDS[metric] as (typeof SIM_GUARDS)[number]),
      regression,
      improvement,
      fixedHorizon: fixedHorizonN(world, metric, regression.rolledBack / rollouts),
      fixedHorizonPromotion: fixedHorizonPromotion(world, metric),
    };
  });
  return { world, aa, metrics, ms: performance.now() - started };
}

export function measureGuardrailSimulation(rollouts = BENCH_OPTIONS.rollouts): WorldFigures[] {
  return [measureWorld(TUNED_WORLD, rollouts), measureWorld(UNSEEN_WORLD, rollouts)];
}

const share = (count: number, of: number) => `${((count / of) * 100).toFixed(1)} %`;
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted[Math.floor(sorted.length / 2)] ?? Number.POSITIVE_INFINITY;
  return Number.isFinite(middle) ? middle.toLocaleString('en-US') : '> 5,000';
};

export function formatGuardrailSimulation(worlds: WorldFigures[], verdict: (ok: boolean) => string): string {
  const lines: string[] = [];
  for (const { world, aa, metrics, ms } of worlds) {
    // Error rates hold in any world; power depends on the noise against the threshold. The targets
    // hold for a world the method was not tuned on as for its own: a miss there is a miss.
    const power = verdict;
    const n = aa.rollouts;
    lines.push(
      `-- ${world.name} (${n.toLocaleString('en-US')} rollouts a case, ${(ms / 1000).toFixed(1)} s)`,
    );
    lines.push(
      `A/A ever decided (rolled back, or shown better or worse at any look): ${share(aa.everDecided, n)} (target ≤ 5 %): ${verdict(aa.everDecided / n <= AA_DECIDED_MAX)}`,
    );
    for (const m of metrics) {
      const promoted = m.regression.promoted / n;
      const rolledBack = m.regression.rolledBack / n;
      const improved = m.improvement.promoted / n;
      lines.push(
        `${m.metric}, 2× threshold worse: promoted ${share(m.regression.promoted, n)} (≤ 5 %): ${verdict(promoted <= REGRESSION_PROMOTED_MAX)}; ` +
          `rolled back ${share(m.regression.rolledBack, n)} (≥ 80 %): ${power(rolledBack >= REGRESSION_ROLLED_BACK_MIN)}; ` +
          `median ${median(m.regression.decidedAt)} an arm to roll back, a fixed-horizon test of the same power ${m.fixedHorizon.toLocaleString('en-US')}`,
      );
      lines.push(
        `${m.metric}, 2× threshold better: promoted ${share(m.improvement.promoted, n)} (≥ 90 %): ${power(improved >= IMPROVEMENT_PROMOTED_MIN)}; ` +
          `median ${median(m.improvement.decidedAt)} an arm to promote; a single test of every guard at 5,000 an arm, looked at once, would promote ${(m.fixedHorizonPromotion * 100).toFixed(1)} %`,
      );
    }
  }
  return lines.join('\n');
}
