/*
 * Reading what a refinement run learns from: its parent and the rounds before it (at most
 * REFINEMENT_TRIALS), their results on the chain's cases that are not held out, and those cases.
 */
import { SynthesisFailure } from '../errors.ts';
import type { EvaluationStore } from '../ports/evaluation.ts';
import type { RunRepository } from '../ports/runs.ts';
import {
  type ArmResult,
  type LearningCase,
  REFINEMENT_TRIALS,
  type RefinementEvidence,
  type Trial,
} from '../refinement.ts';
import type { SynthesisRun } from '../schemas/runs.ts';

/** What reading a refinement's evidence needs of its run. */
export type RefinedRun = Pick<SynthesisRun, 'pipelineId' | 'parentRunId' | 'rootRunId'>;

export interface RefinementReads {
  runs: Pick<RunRepository, 'get'>;
  evaluations: Pick<EvaluationStore, 'getSet' | 'listResults' | 'loadExecutions'>;
}

/** The chain above `run`, parent first: at most REFINEMENT_TRIALS runs, one GetItem each. */
async function ancestors(runs: RefinementReads['runs'], run: RefinedRun): Promise<SynthesisRun[]> {
  const found: SynthesisRun[] = [];
  let next = run.parentRunId;
  while (next && found.length < REFINEMENT_TRIALS) {
    const ancestor = await runs.get(next);
    if (!ancestor) break;
    found.push(ancestor);
    next = ancestor.parentRunId;
  }
  return found;
}

/**
 * The refinement evidence of `run`, or null when it is no refinement. Held-out cases are left out
 * entirely (their ids too): `heldOutIds` says which executions the synthesis must not be shown.
 * Executions started before `since` (outside the retention window) are not read.
 */
export async function readRefinementEvidence(
  { runs, evaluations }: RefinementReads,
  run: RefinedRun,
  since: string,
): Promise<{ evidence: RefinementEvidence; heldOutIds: Set<string> } | null> {
  if (!run.parentRunId) return null;
  const chain = await ancestors(runs, run);
  const parent = chain[0];
  if (!parent || parent.pipelineId !== run.pipelineId) {
    throw new SynthesisFailure(
      `The parent run ${run.parentRunId} no longer exists; start a new run without parentRunId.`,
    );
  }
  const set = await evaluations.getSet(parent.id);
  if (!set) {
    throw new SynthesisFailure(
      `The parent run ${parent.id} has no evaluation set; evaluate it, then start the refinement again.`,
    );
  }
  const heldOutIds = new Set(set.cases.flatMap((ref) => (ref.heldOut ? [ref.executionId] : [])));
  const learning = set.cases.filter((ref) => !ref.heldOut && ref.startedAt >= since);
  const learningIds = new Set(learning.map((ref) => ref.executionId));
  const [executions, ...resultLists] = await Promise.all([
    evaluations.loadExecutions(
      run.pipelineId,
      learning.map((ref) => ({ id: ref.executionId, startedAt: ref.startedAt })),
    ),
    ...chain.map((ancestor) => evaluations.listResults(ancestor.id)),
  ]);
  const byId = new Map(executions.map((execution) => [execution.id, execution]));
  const cases = learning.flatMap((ref): LearningCase[] => {
    const execution = byId.get(ref.executionId);
    if (!execution) return [];
    return [
      {
        executionId: execution.id,
        status: execution.status,
        ...(execution.error === undefined ? {} : { error: execution.error }),
        ...(execution.input === undefined ? {} : { input: execution.input }),
      },
    ];
  });
  const trials = chain
    .map((ancestor, index): Trial => {
      const results = new Map<string, Map<string, ArmResult>>();
      for (const result of resultLists[index] ?? []) {
        if (!learningIds.has(result.executionId)) continue;
        const arms = results.get(result.executionId) ?? new Map<string, ArmResult>();
        arms.set(result.arm, { passed: result.passed, detail: result.detail, score: result.score });
        results.set(result.executionId, arms);
      }
      return { runId: ancestor.id, changes: ancestor.changes, results };
    })
    .reverse();
  return {
    evidence: {
      parentRunId: parent.id,
      rootRunId: run.rootRunId ?? parent.rootRunId ?? parent.id,
      cases,
      trials,
      heldOutCount: heldOutIds.size,
    },
    heldOutIds,
  };
}
