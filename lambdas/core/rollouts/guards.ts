/*
 * A rollout's guarded metrics as a table: what each measures, which way is worse, its default
 * tolerated regression and unit, and the counter field its moments are kept under. Pure.
 */
import type { Guardrail } from '../schemas/rollouts.ts';

export type GuardMetric = Guardrail['metric'];
export type Direction = 'higher_is_better' | 'lower_is_better';

/** A guardrail with its defaults filled in. */
export interface Guard {
  metric: GuardMetric;
  /** The signal kind (signal only). */
  kind: string | null;
  direction: Direction;
  /** The regression tolerated, in the metric's unit. */
  threshold: number;
}

interface MetricRow {
  direction: Direction | null;
  threshold: number | null;
  unit: string;
  /** 0/1 observations (a rate). */
  binary: boolean;
  label: string;
}

/** Every guarded metric: lower is better for all but a signal, whose direction is given. */
export const GUARD_METRICS: Record<GuardMetric, MetricRow> = {
  failure_rate: {
    direction: 'lower_is_better',
    threshold: 0.01,
    unit: 'rate',
    binary: true,
    label: 'failure rate',
  },
  duration_ms: {
    direction: 'lower_is_better',
    threshold: 100,
    unit: 'ms',
    binary: false,
    label: 'mean duration',
  },
  tokens: {
    direction: 'lower_is_better',
    threshold: 50,
    unit: 'tokens',
    binary: false,
    label: 'mean tokens',
  },
  signal: { direction: null, threshold: null, unit: 'score', binary: false, label: 'signal' },
};

/** Guarded when a request gives no guardrails. */
export const DEFAULT_GUARDRAILS: Guardrail[] = [{ metric: 'failure_rate' }];

/** The guardrail with its defaults (a signal's direction and threshold are required by the schema). */
export function guardOf(guardrail: Guardrail): Guard {
  const row = GUARD_METRICS[guardrail.metric];
  return {
    metric: guardrail.metric,
    kind: guardrail.metric === 'signal' ? (guardrail.kind ?? null) : null,
    direction: guardrail.direction ?? row.direction ?? 'lower_is_better',
    threshold: guardrail.threshold ?? row.threshold ?? 0,
  };
}

/** A rollout's guards: its own guardrails, or the failure rate's default for one started without. */
export const guardsOf = (rollout: { guardrails?: Guardrail[] | undefined }): Guard[] =>
  (rollout.guardrails && rollout.guardrails.length > 0 ? rollout.guardrails : DEFAULT_GUARDRAILS).map(
    guardOf,
  );

/** The counter field a guard's moments are kept under: `f`, `d`, `t` or `s.<kind>`. */
export function counterField(guard: Pick<Guard, 'metric' | 'kind'>): string {
  if (guard.metric === 'signal') return `s.${guard.kind}`;
  return guard.metric === 'failure_rate' ? 'f' : guard.metric === 'duration_ms' ? 'd' : 't';
}

/** The guard's name as people read it: "failure rate", "signal relevance". */
export const guardName = (guard: Guard): string =>
  guard.metric === 'signal' ? `signal ${guard.kind}` : GUARD_METRICS[guard.metric].label;

/** A figure of the guard's metric with its unit: "1.2 %", "230 ms", "0.71". */
export function formatFigure(guard: Pick<Guard, 'metric'>, value: number): string {
  if (guard.metric === 'failure_rate') return `${(value * 100).toFixed(2)} %`;
  if (guard.metric === 'duration_ms') return `${value.toFixed(0)} ms`;
  if (guard.metric === 'tokens') return `${value.toFixed(0)} tokens`;
  return value.toFixed(3);
}

/** A difference or threshold of the guard's metric: "1.00 point", "100 ms". */
export function formatDelta(guard: Pick<Guard, 'metric'>, value: number): string {
  if (guard.metric === 'failure_rate') return `${(value * 100).toFixed(2)} points`;
  return formatFigure(guard, value);
}
