/*
 * The figures of an effect: failure rates compared with a two-proportion z-test, the 95 %
 * interval of their difference, and nearest-rank percentiles. Pure functions, no I/O.
 */

/** The standard normal's two-sided 95 % quantile. */
export const Z_95 = 1.959963984540054;

/** The error function (Abramowitz & Stegun 7.1.26, absolute error below 1.5e-7). */
export function erf(x: number): number {
  const sign = x < 0 ? -1 : 1;
  const t = 1 / (1 + 0.3275911 * Math.abs(x));
  const y =
    1 -
    ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) *
      t *
      Math.exp(-x * x);
  return sign * y;
}

/** P(Z ≤ z) for a standard normal Z. */
export function normalCdf(z: number): number {
  return 0.5 * (1 + erf(z / Math.SQRT2));
}

export interface Proportion {
  /** Trials (executions). */
  n: number;
  /** Successes of the event counted (failed executions). */
  k: number;
}

export interface ProportionComparison {
  /** Rate of `applied` minus rate of `base`. */
  difference: number;
  /** The 95 % (Wald, unpooled) interval of the difference. */
  ci95: [number, number];
  /** Two-sided p-value of the pooled two-proportion z-test; 1 when there is no variance at all. */
  pValue: number;
  z: number;
}

/** Compares two failure rates: `applied` against `base`. Both arms need at least one execution. */
export function compareProportions(base: Proportion, applied: Proportion): ProportionComparison {
  const p1 = base.k / base.n;
  const p2 = applied.k / applied.n;
  const difference = p2 - p1;
  const pooled = (base.k + applied.k) / (base.n + applied.n);
  const pooledSe = Math.sqrt(pooled * (1 - pooled) * (1 / base.n + 1 / applied.n));
  const z = pooledSe === 0 ? 0 : difference / pooledSe;
  const pValue = pooledSe === 0 ? 1 : Math.min(1, 2 * (1 - normalCdf(Math.abs(z))));
  const se = Math.sqrt((p1 * (1 - p1)) / base.n + (p2 * (1 - p2)) / applied.n);
  return { difference, ci95: [difference - Z_95 * se, difference + Z_95 * se], pValue, z };
}

/** The nearest-rank percentile (`p` in 0–100) of the values; null for none. */
export function percentile(values: readonly number[], p: number): number | null {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] ?? null;
}
