/*
 * Sufficient statistics of one metric on one arm (count, sum, sum of squares), what the counters
 * kept with the recording hold, and the per-step difference of two arms they give. Pure.
 */
import type { Stratum } from './sequential.ts';

/** n observations, their sum and sum of squares: all a mean and its variance need. */
export interface Moments {
  n: number;
  sum: number;
  sumSq: number;
}

export const NO_MOMENTS: Moments = { n: 0, sum: 0, sumSq: 0 };

export const addMoments = (a: Moments, b: Moments): Moments => ({
  n: a.n + b.n,
  sum: a.sum + b.sum,
  sumSq: a.sumSq + b.sumSq,
});

/** The moments of one observation. */
export const momentsOf = (value: number): Moments => ({ n: 1, sum: value, sumSq: value * value });

export const meanOf = (m: Moments): number | null => (m.n === 0 ? null : m.sum / m.n);

/**
 * The variance of one observation. For a rate (0/1 observations) the rate is shrunk towards ½ by
 * one success and one failure (Laplace), so that no failure at all in a few hundred executions
 * does not read as a certainty; for a mean, the sample variance (n − 1), never below 0.
 */
export function varianceOf(m: Moments, binary: boolean): number {
  if (binary) {
    const p = (m.sum + 1) / (m.n + 2);
    return p * (1 - p);
  }
  if (m.n < 2) return 0;
  return Math.max(0, (m.sumSq - (m.sum * m.sum) / m.n) / (m.n - 1));
}

/** Both arms' moments of a metric within one step of a rollout. */
export interface StepMoments {
  base: Moments;
  candidate: Moments;
}

/**
 * A step's stratum: candidate minus base, weighted by n_b·n_c/(n_b + n_c) (the effective size of
 * a two-arm comparison, which is inverse-variance weighting when the variances are alike). A
 * step without two observations on each arm carries no weight.
 */
export function stratumOf(step: StepMoments, binary: boolean): Stratum | null {
  const { base, candidate } = step;
  if (base.n < 2 || candidate.n < 2) return null;
  const difference = candidate.sum / candidate.n - base.sum / base.n;
  const variance = varianceOf(candidate, binary) / candidate.n + varianceOf(base, binary) / base.n;
  return {
    difference,
    variance,
    n: base.n + candidate.n,
    weight: (base.n * candidate.n) / (base.n + candidate.n),
  };
}
