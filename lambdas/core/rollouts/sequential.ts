/*
 * The anytime-valid test every rollout decision rests on: an asymptotic confidence sequence for a
 * difference of means (Waudby-Smith et al. 2023, eq. 9, with Howard et al. 2021's tuning, eq. 161),
 * the method GrowthBook ships. Its interval covers the true difference at every look at once with
 * probability 1 − α, so a guardrail may read it after every batch. Pure functions, no I/O.
 */
import { normalCdf } from './statistics.ts';

/**
 * The total executions (both arms) at which the interval is tuned to be tightest (GrowthBook's
 * default is 5,000): a large regression is shown within a few dozen executions an arm, and a
 * one-point failure threshold by a few thousand. The error rate holds for any value.
 */
export const TUNING_EXECUTIONS = 2_000;

/** The mixing variance ρ² as ρ: tightest near `tuning` total observations (two-sided). */
export function sequentialRho(alpha: number, tuning: number = TUNING_EXECUTIONS): number {
  const logTerm = -2 * Math.log(alpha);
  return Math.sqrt((logTerm + Math.log(logTerm + 1)) / tuning);
}

const rhos = new Map<number, number>();
/** sequentialRho at the default tuning, computed once an α (a judge asks at every look). */
function rhoOf(alpha: number): number {
  let rho = rhos.get(alpha);
  if (rho === undefined) {
    rho = sequentialRho(alpha);
    if (rhos.size < 64) rhos.set(alpha, rho);
  }
  return rho;
}

/**
 * The half-width of the confidence sequence at `n` total observations, for an estimate whose
 * variance times n is `s2` (σ² of one observation, as GrowthBook's `s2 = se² · n`).
 */
export function sequentialHalfWidth(s2: number, n: number, alpha: number, rho = rhoOf(alpha)): number {
  const nRho2 = n * rho * rho;
  return Math.sqrt(s2) * Math.sqrt((2 * (nRho2 + 1) * Math.log(Math.sqrt(nRho2 + 1) / alpha)) / (nRho2 * n));
}

/**
 * How far above the estimate the one-sided bound lies at `n` total observations: the smallest w
 * at which the half-normal mixture (the normal mixture over effects on one side only, as Howard
 * et al. 2021 build one-sided boundaries) reaches 1/α, so "the difference is at most estimate +
 * w" holds at every look at once with probability 1 − α. A promotion asks only that one-sided
 * question. It lies between the two-sided half-widths at 2α and at α (a hair above the first).
 */
export function oneSidedHalfWidth(s2: number, n: number, alpha: number, rho = rhoOf(alpha)): number {
  // In units of √s2 / n (S = n·w/√s2): log 2Φ(ρS/√v) + ρ²S²/(2v) = log(√v/α), v = nρ² + 1.
  const v = n * rho * rho + 1;
  const excess = (S: number) =>
    Math.log(2 * normalCdf((rho * S) / Math.sqrt(v))) +
    (rho * rho * S * S) / (2 * v) -
    Math.log(Math.sqrt(v) / alpha);
  const unit = Math.sqrt(s2) / n;
  if (!(unit > 0)) return 0;
  // The two-sided widths at 2α and α bracket the root: the excess is log Φ < 0 at one, log 2Φ > 0 at the other.
  let low = sequentialHalfWidth(s2, n, 2 * alpha, rho) / unit;
  let high = sequentialHalfWidth(s2, n, alpha, rho) / unit;
  for (let i = 0; i < 40 && high - low > 1e-9 * high; i += 1) {
    const mid = (low + high) / 2;
    if (excess(mid) < 0) low = mid;
    else high = mid;
  }
  return high * unit;
}

/** The pooled estimate of strata differences: Σ wᵢdᵢ, its variance times n as s2, on n = Σ nᵢ (null without weight). */
function pooledStrata(strata: readonly Stratum[]): { estimate: number; s2: number; n: number } | null {
  const total = strata.reduce((sum, stratum) => sum + stratum.weight, 0);
  if (!(total > 0)) return null;
  let estimate = 0;
  let variance = 0;
  let n = 0;
  for (const stratum of strata) {
    const w = stratum.weight / total;
    estimate += w * stratum.difference;
    variance += w * w * stratum.variance;
    n += stratum.n;
  }
  return { estimate, s2: variance * n, n };
}

/**
 * The always-valid p-value of "the difference is 0" (Waudby-Smith et al. eq. 155): the smallest α
 * whose sequence excludes 0 now. One look's value; a caller keeping the running minimum may.
 */
export function sequentialPValue(estimate: number, s2: number, n: number, alpha: number): number {
  if (s2 <= 0) return estimate === 0 ? 1 : 0;
  const rho = rhoOf(alpha);
  // (estimate / its standard error)² · n, the standard error² being s2 / n.
  const st2 = (estimate * estimate * n * n) / s2;
  const tr2p1 = n * rho * rho + 1;
  const evalue = Math.exp((rho * rho * st2) / (2 * tr2p1)) / Math.sqrt(tr2p1);
  return Math.min(1, 1 / evalue);
}

/** An estimated difference with its anytime-valid interval and p-value. */
export interface SequentialInterval {
  estimate: number;
  interval: [number, number];
  pValue: number;
  /** The observations it rests on (both arms, every step). */
  n: number;
  /** The estimate's variance times n (what a one-sided bound is computed from). */
  s2: number;
}

/** A difference estimated from one or more independent strata (the steps of a rollout). */
export interface Stratum {
  /** Candidate minus base. */
  difference: number;
  /** The variance of `difference`. */
  variance: number;
  /** Observations in the stratum (both arms). */
  n: number;
  /** Its weight before normalisation. */
  weight: number;
}

/**
 * The confidence sequence of a weighted mean of strata differences: estimate Σ wᵢdᵢ, variance
 * Σ wᵢ²vᵢ with Σ wᵢ = 1, on n = Σ nᵢ observations. Null when no stratum has any weight.
 */
export function stratifiedInterval(strata: readonly Stratum[], alpha: number): SequentialInterval | null {
  const pooled = pooledStrata(strata);
  if (!pooled) return null;
  const { estimate, s2, n } = pooled;
  const half = sequentialHalfWidth(s2, n, alpha);
  return {
    estimate,
    interval: [estimate - half, estimate + half],
    pValue: sequentialPValue(estimate, s2, n, alpha),
    n,
    s2,
  };
}
