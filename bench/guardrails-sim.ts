/**
 * Simulated rollouts judged by the judge's own code (lambdas/core/rollouts/decision.ts): each arm
 * receives batches of executions as sufficient statistics (count, sum, sum of squares drawn from
 * their exact distributions, no per-execution objects), and after every batch the rollout is
 * judged as the per-batch check and the sweeper judge it. Seeded: every run draws the same.
 */
import { actionOf, judgeMetric, metricAlpha } from '../lambdas/core/rollouts/decision.ts';
import { type Guard, guardOf } from '../lambdas/core/rollouts/guards.ts';
import type { Moments, StepMoments } from '../lambdas/core/rollouts/moments.ts';
import { seeded } from './optimize-sim.ts';

/** A world: the base arm's failure rate, duration and score (mean, standard deviation). */
export interface World {
  name: string;
  failureRate: number;
  duration: { mean: number; sd: number };
  score: { mean: number; sd: number };
}

/** The world the method's tuning was chosen on. */
export const TUNED_WORLD: World = {
  name: 'tuned: 1 % failures, 1,200 ± 600 ms, score 0.70 ± 0.25',
  failureRate: 0.01,
  duration: { mean: 1200, sd: 600 },
  score: { mean: 0.7, sd: 0.25 },
};

/** A world never tuned on: commoner failures, slower and noisier, a noisier score. */
export const UNSEEN_WORLD: World = {
  name: 'unseen: 1.5 % failures, 2,500 ± 1,500 ms, score 0.55 ± 0.30',
  failureRate: 0.015,
  duration: { mean: 2500, sd: 1500 },
  score: { mean: 0.55, sd: 0.3 },
};

/** The guards every simulated rollout carries (the defaults, and a score with its threshold). */
export const SIM_GUARDS: Guard[] = [
  guardOf({ metric: 'failure_rate' }),
  guardOf({ metric: 'duration_ms' }),
  guardOf({ metric: 'signal', kind: 'relevance', direction: 'higher_is_better', threshold: 0.05 }),
];

/** Which metric the candidate moves, and by how many thresholds in its worse direction (negative: better). */
export interface Shift {
  metric: 0 | 1 | 2 | null;
  thresholds: number;
}

export interface SimOptions {
  rollouts: number;
  batch: number;
  maxPerArm: number;
  minExecutions: number;
  seed: number;
  /** Stop at a promotion (a real rollout ends there); false keeps looking (A/A: was it ever decided?). */
  stopAtPromotion: boolean;
}

export const BENCH_OPTIONS: SimOptions = {
  rollouts: 10_000,
  batch: 20,
  maxPerArm: 5_000,
  minExecutions: 200,
  seed: 48,
  stopAtPromotion: true,
};

export interface SimResult {
  rollouts: number;
  rolledBack: number;
  promoted: number;
  /** Ended, or shown better or worse on some metric at some look. */
  everDecided: number;
  /** Executions an arm at the decision (rollback or promotion), Infinity when none. */
  decidedAt: number[];
  /** Which metric named the rollbacks. */
  rolledBackBy: number[];
}

function normal(random: () => number): number {
  // Box–Muller; 1 − u keeps the logarithm finite.
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** A χ² with k degrees of freedom (Wilson–Hilferty: ample for a variance estimate). */
function chiSquare(random: () => number, k: number): number {
  const c = 2 / (9 * k);
  const cube = 1 - c + normal(random) * Math.sqrt(c);
  return cube <= 0 ? 0 : k * cube * cube * cube;
}

/** Failures among `n` at rate `p`: one uniform, inverse CDF. */
function binomial(random: () => number, n: number, p: number): number {
  let u = random();
  let probability = (1 - p) ** n;
  let k = 0;
  while (u > probability && k < n) {
    u -= probability;
    probability *= ((n - k) / (k + 1)) * (p / (1 - p));
    k += 1;
  }
  return k;
}

/** A batch of `n` normal observations as moments: the sum, and the sum of squares through χ²ₙ₋₁. */
function normalBatch(random: () => number, n: number, mean: number, sd: number, into: Moments): void {
  const sum = n * mean + sd * Math.sqrt(n) * normal(random);
  into.n += n;
  into.sum += sum;
  into.sumSq += sd * sd * chiSquare(random, n - 1) + (sum * sum) / n;
}

function failureBatch(random: () => number, n: number, p: number, into: Moments): void {
  const failed = binomial(random, n, p);
  into.n += n;
  into.sum += failed;
  into.sumSq += failed;
}

const fresh = (): StepMoments => ({
  base: { n: 0, sum: 0, sumSq: 0 },
  candidate: { n: 0, sum: 0, sumSq: 0 },
});

/** Runs the rollouts of one world and shift. */
export function simulate(world: World, shift: Shift, options: SimOptions = BENCH_OPTIONS): SimResult {
  const random = seeded(options.seed);
  const alpha = metricAlpha(SIM_GUARDS.length);
  // A regression moves the candidate the worse way; an improvement is its mirror image: the base
  // is the worse one (a fix of 3 % → 1 % rather than 1 % → −1 %), the candidate the world's own.
  const worse = (metric: number, value: number) =>
    shift.metric === metric
      ? value + Math.abs(shift.thresholds) * worseStep(SIM_GUARDS[metric] as Guard)
      : value;
  const arms = (metric: number, value: number) =>
    shift.thresholds >= 0 ? [value, worse(metric, value)] : [worse(metric, value), value];
  const [baseFailure, candidateFailure] = arms(0, world.failureRate) as [number, number];
  const [baseDuration, candidateDuration] = arms(1, world.duration.mean) as [number, number];
  const [baseScore, candidateScore] = arms(2, world.score.mean) as [number, number];
  const result: SimResult = {
    rollouts: options.rollouts,
    rolledBack: 0,
    promoted: 0,
    everDecided: 0,
    decidedAt: [],
    rolledBackBy: [0, 0, 0],
  };
  for (let r = 0; r < options.rollouts; r++) {
    const metrics = [fresh(), fresh(), fresh()];
    let decided = false;
    let endedAt = Number.POSITIVE_INFINITY;
    for (let perArm = options.batch; perArm <= options.maxPerArm; perArm += options.batch) {
      const [f, d, s] = metrics as [StepMoments, StepMoments, StepMoments];
      failureBatch(random, options.batch, baseFailure, f.base);
      failureBatch(random, options.batch, candidateFailure, f.candidate);
      normalBatch(random, options.batch, baseDuration, world.duration.sd, d.base);
      normalBatch(random, options.batch, candidateDuration, world.duration.sd, d.candidate);
      normalBatch(random, options.batch, baseScore, world.score.sd, s.base);
      normalBatch(random, options.batch, candidateScore, world.score.sd, s.candidate);
      const judgements = SIM_GUARDS.map((guard, i) => judgeMetric(guard, [metrics[i] as StepMoments], alpha));
      if (judgements.some((j) => j.verdict === 'worse' || j.verdict === 'better')) decided = true;
      const decision = actionOf(judgements, {
        step: 0,
        steps: 1,
        candidateAtStep: perArm,
        minExecutions: options.minExecutions,
      });
      if (decision.action === 'roll_back') {
        result.rolledBack += 1;
        const by = judgements.findIndex((j) => j.verdict === 'worse');
        result.rolledBackBy[by] = (result.rolledBackBy[by] ?? 0) + 1;
        endedAt = perArm;
        break;
      }
      if (decision.action === 'promote' && endedAt === Number.POSITIVE_INFINITY) {
        result.promoted += 1;
        endedAt = perArm;
        if (options.stopAtPromotion) break;
      }
    }
    if (decided) result.everDecided += 1;
    result.decidedAt.push(endedAt);
  }
  return result;
}

/** One threshold in the guard's worse direction. */
const worseStep = (guard: Guard) =>
  guard.direction === 'lower_is_better' ? guard.threshold : -guard.threshold;

/** The candidate's variance of one observation for a world's metric (the fixed-horizon comparison). */
export function varianceOfMetric(
  world: World,
  metric: 0 | 1 | 2,
  shift: Shift,
): { base: number; candidate: number; delta: number } {
  const delta = shift.thresholds * Math.abs(worseStep(SIM_GUARDS[metric] as Guard));
  if (metric === 0) {
    const p = world.failureRate;
    const q = p + (shift.metric === 0 ? shift.thresholds * 0.01 : 0);
    return { base: p * (1 - p), candidate: q * (1 - q), delta };
  }
  const sd = metric === 1 ? world.duration.sd : world.score.sd;
  return { base: sd * sd, candidate: sd * sd, delta };
}
