/*
 * What a refinement run learns from, pure: the chain's earlier rounds (each run's changes and its
 * results on the cases that are not held out), and what each change did in each round.
 */
import type { SynthesisProposal } from './ports/synthesis.ts';
import type { Change } from './schemas/runs.ts';

/** The rounds a refinement reads: its parent and up to this many runs before it. */
export const REFINEMENT_TRIALS = 4;
/** Runs one chain may hold (its first run and its refinements). */
export const MAX_CHAIN_RUNS = 20;

/** One result of a case on one arm, as the runner reported it. */
export interface ArmResult {
  passed: boolean;
  detail?: string | undefined;
  score?: number | undefined;
}

/** A case a refinement may learn from (never a held-out one): the execution as recorded. */
export interface LearningCase {
  executionId: string;
  status: 'succeeded' | 'failed';
  error?: string | undefined;
  input?: unknown;
}

/** One earlier round: a run's changes and its results per case and arm (learning cases only). */
export interface Trial {
  runId: string;
  changes: Change[];
  /** By execution id, then by arm: `base`, `candidate`, `change:<id>`. */
  results: ReadonlyMap<string, ReadonlyMap<string, ArmResult>>;
}

/** The evidence of a refinement run beside the signals and executions. */
export interface RefinementEvidence {
  parentRunId: string;
  rootRunId: string;
  /** The set's cases that are not held out, in the set's order. */
  cases: LearningCase[];
  /** Oldest first; the last is the parent's. */
  trials: Trial[];
  /** How many cases of the set are held out (their ids, inputs and results are not given). */
  heldOutCount: number;
}

/** What a change did in a round, against the base, over the learning cases. */
export interface ChangeEffect {
  change: Change;
  /** From its own arm (`change:<id>`), or only inferred from the candidate. */
  replayedAlone: boolean;
  fixed: string[];
  broken: string[];
  /** Failed with the change (alone, or in the candidate): the runner's detail says why. */
  failing: string[];
}

/** What the candidate of a round did against its base, over the learning cases. */
export interface CandidateEffect {
  fixed: string[];
  regressed: string[];
  stillFailing: string[];
  passing: string[];
}

export function candidateEffect(trial: Trial): CandidateEffect {
  const effect: CandidateEffect = { fixed: [], regressed: [], stillFailing: [], passing: [] };
  for (const [id, arms] of trial.results) {
    const base = arms.get('base');
    const candidate = arms.get('candidate');
    if (!base || !candidate) continue;
    if (!base.passed && candidate.passed) effect.fixed.push(id);
    else if (base.passed && !candidate.passed) effect.regressed.push(id);
    else if (!candidate.passed) effect.stillFailing.push(id);
    else effect.passing.push(id);
  }
  return effect;
}

/** Each change's effect in a round: from its own arm when it was replayed alone. */
export function changeEffects(trial: Trial): ChangeEffect[] {
  return trial.changes.map((change) => {
    const arm = `change:${change.id}`;
    const alone = [...trial.results.values()].some((arms) => arms.has(arm));
    const effect: ChangeEffect = { change, replayedAlone: alone, fixed: [], broken: [], failing: [] };
    for (const [id, arms] of trial.results) {
      const base = arms.get('base');
      const withChange = arms.get(alone ? arm : 'candidate');
      if (!base || !withChange) continue;
      if (!base.passed && withChange.passed) effect.fixed.push(id);
      if (base.passed && !withChange.passed) effect.broken.push(id);
      if (!withChange.passed) effect.failing.push(id);
    }
    return effect;
  });
}

/** The runner's detail of a case on an arm, when it gave one. */
export function detailOf(trial: Trial, executionId: string, arm: string): string | undefined {
  return trial.results.get(executionId)?.get(arm)?.detail;
}

/**
 * A refinement's proposal with each finding naming the evaluation cases it rests on: those it gave,
 * or else the cases among the runs it cites. A run that is no refinement is left as it is.
 */
export function citeEvaluationCases(
  proposal: SynthesisProposal,
  evidence: RefinementEvidence | undefined,
): SynthesisProposal {
  if (!evidence) return proposal;
  const cases = new Set(evidence.cases.map((entry) => entry.executionId));
  const findings = proposal.diagnosis.findings.map((finding) => {
    if (finding.caseIds !== undefined) return finding;
    const cited = finding.executionIds.filter((id) => cases.has(id));
    return cited.length === 0 ? finding : { ...finding, caseIds: cited };
  });
  return { ...proposal, diagnosis: { ...proposal.diagnosis, findings } };
}
