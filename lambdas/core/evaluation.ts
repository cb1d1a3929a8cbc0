/*
 * Checking a proposal before approval, the pure part: which recorded executions make the
 * evaluation set, and what a run's results add up to (fixed, regressed, pass counts, deltas, the
 * held-out part's figures, each change's own effect and which changes to approve).
 */
import { changeOutcomes, heldOutFigures, recommend } from './attribution.ts';
import type { EvaluationSummary, StoredEvaluationResult } from './schemas/evaluation.ts';

export const EVALUATION_SET_LIMITS = {
  /** Failed executions added to the cited ones. */
  failed: 50,
  /** Succeeded executions added to the cited ones. */
  succeeded: 50,
} as const;

/** What the set remembers of a case: enough to read the execution back by its key. */
export interface EvaluationCaseRef {
  executionId: string;
  reason: 'cited' | 'failed' | 'succeeded';
  startedAt: string;
  /** Never shown to a synthesis of the chain (core/held-out.ts); absent on sets chosen before. */
  heldOut?: boolean;
}

/** An execution as the sampling reads it: no input, no details. */
export interface ExecutionStub {
  id: string;
  status: 'succeeded' | 'failed';
  startedAt: string;
}

/** Up to `count` items spread evenly over `items` (in their order), first and last included. */
export function spreadPick<T>(items: readonly T[], count: number): T[] {
  if (count <= 0) return [];
  if (items.length <= count) return [...items];
  if (count === 1) return [items[Math.floor((items.length - 1) / 2)] as T];
  const step = (items.length - 1) / (count - 1);
  return Array.from({ length: count }, (_, index) => items[Math.round(index * step)] as T);
}

/**
 * The cases of a run's evaluation set: every cited execution, then up to 50 failed and up to 50
 * succeeded others spread over the sampled time range (oldest to newest), not only the newest.
 */
export function chooseEvaluationCases(
  cited: readonly ExecutionStub[],
  sample: readonly ExecutionStub[],
): EvaluationCaseRef[] {
  const citedIds = new Set(cited.map((execution) => execution.id));
  const others = [...new Map(sample.map((execution) => [execution.id, execution])).values()]
    .filter((execution) => !citedIds.has(execution.id))
    .sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.id.localeCompare(b.id));
  const pick = (status: 'failed' | 'succeeded') =>
    spreadPick(
      others.filter((execution) => execution.status === status),
      EVALUATION_SET_LIMITS[status],
    ).map((execution) => ({ executionId: execution.id, reason: status, startedAt: execution.startedAt }));
  return [
    ...cited.map((execution) => ({
      executionId: execution.id,
      reason: 'cited' as const,
      startedAt: execution.startedAt,
    })),
    ...pick('failed'),
    ...pick('succeeded'),
  ];
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

/** Mean of candidate minus base over the cases that report `figure` on both arms; null when none does. */
function meanDelta(
  pairs: Array<{ base: StoredEvaluationResult; candidate: StoredEvaluationResult }>,
  figure: 'durationMs' | 'costUsd',
): number | null {
  const deltas = pairs.flatMap(({ base, candidate }) => {
    const before = base[figure];
    const after = candidate[figure];
    return before === undefined || after === undefined ? [] : [after - before];
  });
  return deltas.length === 0 ? null : mean(deltas);
}

/** What the summary knows of the set and the run beyond the case ids. */
export interface SummaryScope {
  /** The held-out cases (absent: a set chosen before cases were held out). */
  heldOut?: ReadonlySet<string>;
  /** The run's change ids, in order: their arms' outcomes and the recommendation. */
  changeIds?: readonly string[];
}

/** Each case's latest result per arm, by execution id. */
export type ResultsByCase = Map<string, Map<string, StoredEvaluationResult>>;

export function resultsByCase(results: readonly StoredEvaluationResult[]): ResultsByCase {
  const byCase: ResultsByCase = new Map();
  for (const result of results) {
    const arms = byCase.get(result.executionId) ?? new Map<string, StoredEvaluationResult>();
    arms.set(result.arm, result);
    byCase.set(result.executionId, arms);
  }
  return byCase;
}

/**
 * What a run's results add up to. Only cases of the set count; a case counts once it has a result
 * on both arms. `fixed` failed on the base and passed on the candidate; `regressed` the reverse.
 */
export function summarizeEvaluation(
  caseIds: readonly string[],
  results: readonly StoredEvaluationResult[],
  updatedAt: string,
  scope: SummaryScope = {},
): EvaluationSummary {
  const arms = resultsByCase(results);
  const byCase = new Map(
    [...arms].map(([id, entry]) => [id, { base: entry.get('base'), candidate: entry.get('candidate') }]),
  );
  const pairs = caseIds.flatMap((id) => {
    const entry = byCase.get(id);
    return entry?.base && entry.candidate ? [{ id, base: entry.base, candidate: entry.candidate }] : [];
  });
  const count = (arm: 'base' | 'candidate') => {
    const passed = pairs.filter((pair) => pair[arm].passed).length;
    return { passed, failed: pairs.length - passed };
  };
  const fixed = pairs.filter((pair) => !pair.base.passed && pair.candidate.passed).map((pair) => pair.id);
  const regressed = pairs.filter((pair) => pair.base.passed && !pair.candidate.passed).map((pair) => pair.id);
  const changes = changeOutcomes(caseIds, arms, scope.changeIds ?? []);
  return {
    cases: caseIds.length,
    evaluated: pairs.length,
    base: count('base'),
    candidate: count('candidate'),
    fixed,
    regressed,
    durationMsDelta: meanDelta(pairs, 'durationMs'),
    costUsdDelta: meanDelta(pairs, 'costUsd'),
    changes,
    heldOut: scope.heldOut ? heldOutFigures(caseIds, arms, scope.heldOut) : null,
    recommendation:
      pairs.length === 0 || scope.changeIds === undefined
        ? null
        : recommend({
            changeIds: scope.changeIds ?? [],
            fixed,
            regressed,
            outcomes: changes,
            brokenDetail: (changeId) => {
              const first = changes.find((outcome) => outcome.changeId === changeId)?.broken[0];
              return first === undefined ? undefined : arms.get(first)?.get(`change:${changeId}`)?.detail;
            },
          }),
    updatedAt,
  };
}
