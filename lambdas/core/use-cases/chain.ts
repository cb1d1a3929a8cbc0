/*
 * A run's chain: its first run and every refinement, each round's figures (held-out ones first),
 * and the best run to review — the one `optimize` names, never approved by it.
 */
import { NotFoundError } from '../errors.ts';
import type { RunRepository } from '../ports/runs.ts';
import { assertSameTeam, type Principal } from '../principal.ts';
import type { ChainRound, RunChain } from '../schemas/chain.ts';
import type { SynthesisRun } from '../schemas/runs.ts';

function roundOf(run: SynthesisRun): ChainRound {
  const evaluation = run.evaluation ?? null;
  return {
    runId: run.id,
    parentRunId: run.parentRunId,
    status: run.status,
    synthesisHandler: run.synthesisHandler,
    createdAt: run.createdAt,
    changeCount: run.changes.length,
    evaluated: evaluation?.evaluated ?? 0,
    fixed: evaluation?.fixed.length ?? 0,
    regressed: evaluation?.regressed.length ?? 0,
    heldOut: evaluation?.heldOut ?? null,
    recommendation: evaluation?.recommendation ?? null,
    estimatedCostUsd: run.estimatedCostUsd,
    costUsd: run.costUsd,
  };
}

/** Held-out fixed minus broken (the figures that count), then the whole set's, as a pair to compare. */
export function roundScore(round: ChainRound): [number, number] {
  const held = round.heldOut ? round.heldOut.fixed.length - round.heldOut.regressed.length : 0;
  return [held, round.fixed - round.regressed];
}

const better = (a: [number, number], b: [number, number]) => a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);
const same = (a: [number, number], b: [number, number]) => a[0] === b[0] && a[1] === b[1];

/**
 * The evaluated, generated round with the most held-out fixed minus broken cases; ties go to the
 * whole set's fixed minus broken (a held-out part may hold no base failure), then to the fewest
 * changes, then to the earliest.
 */
export function bestRound(rounds: readonly ChainRound[]): ChainRound | null {
  let best: ChainRound | null = null;
  for (const round of rounds) {
    if (round.status !== 'generated' || round.evaluated === 0) continue;
    if (
      best === null ||
      better(roundScore(round), roundScore(best)) ||
      (same(roundScore(round), roundScore(best)) && round.changeCount < best.changeCount)
    ) {
      best = round;
    }
  }
  return best;
}

export function makeGetRunChain({ runs }: { runs: RunRepository }) {
  return async (principal: Principal, runId: string): Promise<RunChain> => {
    const run = await runs.getVisible(runId);
    if (!run) throw new NotFoundError(`Synthesis run ${runId} does not exist.`);
    assertSameTeam(principal, run.teamId);
    const rootRunId = run.rootRunId ?? run.id;
    const members = await runs.listChain(rootRunId);
    const rounds = (members.length > 0 ? members : [run]).map(roundOf);
    return { rootRunId, runs: rounds, bestRunId: bestRound(rounds)?.runId ?? null };
  };
}
