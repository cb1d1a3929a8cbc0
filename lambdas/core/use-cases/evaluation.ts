/* Checking a proposal before approval: the run's evaluation set, chosen once, and its results. */

import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import { chooseEvaluationCases, summarizeEvaluation } from '../evaluation.ts';
import { actorOf, newEvent } from '../events.ts';
import { holdOut } from '../held-out.ts';
import { retentionWindow, type TeamSettingsStore } from '../lifecycle.ts';
import type { Clock } from '../ports/common.ts';
import type { EvaluationStore, StoredEvaluationSet } from '../ports/evaluation.ts';
import type { PipelineReads } from '../ports/pipelines.ts';
import type { EvidenceStore, RunRepository } from '../ports/runs.ts';
import { assertCanWrite, type Principal } from '../principal.ts';
import { nothingToChange } from '../run-state.ts';
import type {
  EvaluationCase,
  EvaluationResult,
  EvaluationSet,
  EvaluationSummary,
  StoredEvaluationResult,
} from '../schemas/evaluation.ts';
import type { Execution } from '../schemas/records.ts';
import type { SynthesisRun } from '../schemas/runs.ts';
import { makeGetSynthesisRun } from './synthesis.ts';

export interface EvaluationDeps {
  runs: RunRepository;
  pipelines: PipelineReads;
  evidence: EvidenceStore;
  evaluations: EvaluationStore;
  clock: Clock;
  /** The teams' retention windows: executions now outside them are neither chosen nor shown. */
  settings: TeamSettingsStore;
}

function notGenerated(run: SynthesisRun, what: string): ConflictError {
  return new ConflictError(`The run is ${run.status}; ${what} only for a generated run.`);
}

/**
 * The run's evaluation set: chosen on the first read (the cited executions, then up to 50 failed
 * and 50 succeeded spread over time, one in five held out) and stored, so every later reader gets
 * the same cases. A refinement takes its parent's set: every round of a chain replays the same cases.
 */
export function makeGetEvaluationSet(deps: EvaluationDeps) {
  const { runs, pipelines, evidence, evaluations, clock, settings } = deps;
  const getRun = makeGetSynthesisRun({ runs });
  return async (principal: Principal, runId: string): Promise<EvaluationSet> => {
    const run = await getRun(principal, runId);
    const since = retentionWindow(await settings.get(run.teamId), clock.now()).executionsSince;
    const [stored, cited] = await Promise.all([
      evaluations.getSet(runId),
      evidence
        .load(runId)
        .then((found) => found.executions.filter((execution) => execution.startedAt >= since)),
    ]);
    const nothing = nothingToChange(run, 'to evaluate');
    if (nothing) throw nothing;
    const set = stored ?? (await chooseSet(deps, run, cited, since));
    if (!run.proposedConfigurationId) throw notGenerated(run, 'an evaluation set is chosen');
    const citedById = new Map(cited.map((execution) => [execution.id, execution]));
    const others = set.cases.filter((ref) => !citedById.has(ref.executionId) && ref.startedAt >= since);
    const [base, candidate, loaded, results] = await Promise.all([
      pipelines.getConfiguration(run.pipelineId, run.baseConfigurationId),
      pipelines.getConfiguration(run.pipelineId, run.proposedConfigurationId),
      evaluations.loadExecutions(
        run.pipelineId,
        others.map((ref) => ({ id: ref.executionId, startedAt: ref.startedAt })),
      ),
      evaluations.listResults(runId),
    ]);
    if (!base || !candidate) throw new NotFoundError(`A configuration of run ${runId} no longer exists.`);
    const resultsOf = caseResults(results);
    const byId = new Map<string, Execution>([...citedById, ...loaded.map((e) => [e.id, e] as const)]);
    const cases = set.cases.flatMap((ref): EvaluationCase[] => {
      const execution = byId.get(ref.executionId);
      if (!execution) return [];
      return [
        {
          executionId: execution.id,
          reason: ref.reason,
          status: execution.status,
          startedAt: execution.startedAt,
          ...(ref.heldOut === undefined ? {} : { heldOut: ref.heldOut }),
          ...(execution.error === undefined ? {} : { error: execution.error }),
          ...(execution.input === undefined ? {} : { input: execution.input }),
          ...(resultsOf.has(execution.id) ? { results: resultsOf.get(execution.id) } : {}),
        },
      ];
    });
    return {
      runId,
      baseConfiguration: base,
      candidateConfiguration: candidate,
      cases,
      chosenAt: set.chosenAt,
      chainRootRunId: set.rootRunId ?? runId,
    };
  };
}

/**
 * Chooses and stores a generated run's set: its parent's for a refinement, else the cited
 * executions and a sample of the history, with one case in five held out for the chain.
 */
async function chooseSet(
  { evaluations, clock }: EvaluationDeps,
  run: SynthesisRun,
  cited: readonly Execution[],
  since: string,
): Promise<StoredEvaluationSet> {
  if (run.status !== 'generated' || !run.proposedConfigurationId)
    throw notGenerated(run, 'an evaluation set is chosen');
  const parentSet = run.parentRunId ? await evaluations.getSet(run.parentRunId) : null;
  if (parentSet) {
    const rootRunId = parentSet.rootRunId ?? run.parentRunId ?? undefined;
    return evaluations.saveSetOnce(run.id, { ...parentSet, rootRunId });
  }
  const sample = await evaluations.sampleExecutions(run.pipelineId, since);
  const rootRunId = run.rootRunId ?? run.id;
  return evaluations.saveSetOnce(run.id, {
    chosenAt: clock.now().toISOString(),
    cases: holdOut(chooseEvaluationCases(cited, sample), rootRunId),
    rootRunId,
  });
}

/** Each case's latest results: the base's, the candidate's and each change arm's by change id. */
function caseResults(results: readonly StoredEvaluationResult[]) {
  const resultsOf = new Map<string, NonNullable<EvaluationCase['results']>>();
  for (const result of results) {
    const entry = resultsOf.get(result.executionId) ?? {};
    if (result.arm === 'base' || result.arm === 'candidate') entry[result.arm] = result;
    else {
      entry.changes ??= {};
      entry.changes[result.arm.slice('change:'.length)] = result;
    }
    resultsOf.set(result.executionId, entry);
  }
  return resultsOf;
}

/**
 * Stores a runner's results (a later one for a case and arm replaces the earlier) and answers the
 * run's evaluation summary, which the run then carries. Nothing is stored when any result is refused.
 */
export function makeRecordEvaluations({
  runs,
  evaluations,
  clock,
}: Pick<EvaluationDeps, 'runs' | 'evaluations' | 'clock'>) {
  const getRun = makeGetSynthesisRun({ runs });
  return async (
    principal: Principal,
    runId: string,
    results: EvaluationResult[],
  ): Promise<EvaluationSummary> => {
    const run = await getRun(principal, runId);
    assertCanWrite(principal);
    if (run.status !== 'generated') throw notGenerated(run, 'results are accepted');
    const nothing = nothingToChange(run, 'to evaluate');
    if (nothing) throw nothing;
    const set = await evaluations.getSet(runId);
    if (!set) {
      throw new ConflictError(
        'The run has no evaluation set yet: read GET /synthesis-runs/{id}/evaluation-set first and replay its cases.',
      );
    }
    assertKnownArms(run, results);
    const caseIds = set.cases.map((ref) => ref.executionId);
    const inSet = new Set(caseIds);
    const outside = results.flatMap((result, index) => (inSet.has(result.executionId) ? [] : [index]));
    if (outside.length > 0) {
      throw new ValidationError(
        `These executions are not cases of the run's evaluation set: ${[...new Set(outside.map((i) => results[i]?.executionId))].join(', ')}. Nothing was stored.`,
        {
          details: outside.map((index) => ({
            path: `results.${index}.executionId`,
            message: 'is not a case of the evaluation set',
          })),
        },
      );
    }
    const at = clock.now().toISOString();
    return evaluations.recordResults(
      runId,
      results.map((result) => ({ ...result, recordedAt: at })),
      (all) =>
        summarizeEvaluation(caseIds, all, clock.now().toISOString(), {
          changeIds: run.changes.map((change) => change.id),
          ...(set.cases.some((ref) => ref.heldOut !== undefined)
            ? { heldOut: new Set(set.cases.flatMap((ref) => (ref.heldOut ? [ref.executionId] : []))) }
            : {}),
        }),
      (sequence) =>
        newEvent(
          'synthesis_run.evaluated',
          {
            teamId: run.teamId,
            pipelineId: run.pipelineId,
            runId: run.id,
            status: run.status,
            actor: actorOf(principal),
          },
          // One event per stored summary: the run's summary count makes its id.
          { at, key: `${run.id}_${sequence}` },
        ),
    );
  };
}

/** A change arm must name a change of the run: 400 naming the unknown ones, nothing stored. */
function assertKnownArms(run: SynthesisRun, results: readonly EvaluationResult[]): void {
  const known = new Set(run.changes.map((change) => `change:${change.id}`));
  const unknown = results.flatMap((result, index) =>
    result.arm === 'base' || result.arm === 'candidate' || known.has(result.arm) ? [] : [index],
  );
  if (unknown.length === 0) return;
  const arms = [...new Set(unknown.map((index) => results[index]?.arm))].join(', ');
  throw new ValidationError(
    `These arms name no change of the run (its changes are ${run.changes.map((change) => change.id).join(', ') || 'none'}): ${arms}. Nothing was stored.`,
    {
      details: unknown.map((index) => ({
        path: `results.${index}.arm`,
        message: 'names no change of the run',
      })),
    },
  );
}
