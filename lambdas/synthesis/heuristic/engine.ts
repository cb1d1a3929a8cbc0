/**
 * heuristic-v1: a deterministic, offline synthesis composed from the table of fault rules. Its draft
 * numbers references as a model's would, and finalizeProposal checks it the same way.
 */
import type { SynthesisContext, SynthesisEngine, SynthesisProposal } from '../../core/ports/synthesis.ts';
import type { Slot } from '../../core/schemas/pipelines.ts';
import type { Execution, Signal } from '../../core/schemas/records.ts';
import { DRAFT_LIMITS, type DraftFinding, type SynthesisDraft, synthesisDraftSchema } from '../draft.ts';
import { type ConfigurationInForce, configurationInForce } from '../evidence/configuration-in-force.ts';
import { newestFirst } from '../evidence/executions.ts';
import { numberShown } from '../evidence/numbering.ts';
import { selectShownSignals } from '../evidence/signals.ts';
import { EXECUTION_IDS_PER_FINDING, finalizeProposal } from '../finalize.ts';
import { detectFindings, type Finding } from './detect.ts';
import { HEURISTIC_V1_LIMITS as L } from './limits.ts';
import { planChanges } from './patches.ts';
import { refineDraft } from './refine.ts';
import { describeFinding, renderOutcome } from './render.ts';
import { HEURISTIC_RULES } from './rules.ts';
import { readWindow } from './window.ts';

/**
 * Drafts heuristic-v1's diagnosis and changes, with the signals and runs its references number. It
 * reads only the bounded windows of its context, so its cost does not grow with history.
 */
export function draftHeuristicSynthesis(context: SynthesisContext): {
  draft: SynthesisDraft;
  shownSignals: Signal[];
  shownExecutions: Execution[];
} {
  const slots = context.baseConfiguration.slots;
  const shownSignals = selectShownSignals(context.signals);
  const shownExecutions = newestFirst(context.executions);
  const numbering = numberShown(shownSignals, shownExecutions);

  const { window, staleSlotIds } = readWindow(context, HEURISTIC_RULES);
  const inForce = configurationInForce(context);
  const detected = detectFindings(window, HEURISTIC_RULES);
  // Evidence about an earlier configuration alone does not ask again for a setting changed since.
  const superseded = detected.filter((finding) => supersededFinding(finding, slots, inForce));
  const found = detected.filter((finding) => !superseded.includes(finding));
  const reported = found.slice(0, L.findings);
  const findings: DraftFinding[] = reported.map((finding, index) => ({
    id: String(index + 1),
    description: describeFinding(finding),
    signalRefs: numbering.signalRefs(finding.evidence.signals),
    // Refs follow the newest-first numbering, so the lowest refs are the most recent runs.
    executionRefs: numbering.executionRefs(finding.evidence.executions, EXECUTION_IDS_PER_FINDING),
  }));
  const plan = planChanges(reported, slots);
  const { summary, warnings } = renderOutcome({
    signalCount: context.signals.length,
    executionCount: context.executions.length,
    findings: reported,
    foundCount: found.length,
    plan,
    staleSlotIds,
  });

  for (const finding of superseded) {
    warnings.push({
      type: 'superseded_evidence',
      message:
        `Not proposed again: ${describeFinding(finding)} All of it was recorded before ${inForce.label} changed this setting; only new evidence on the active configuration can show it is still wrong.`.slice(
          0,
          DRAFT_LIMITS.textLength,
        ),
    });
  }

  // Parsing our own draft keeps heuristic-v1 honest to the schema a model is held to.
  const draft = synthesisDraftSchema.parse({
    diagnosis: { summary, findings },
    changes: plan.changes,
    warnings,
  });
  return { draft, shownSignals, shownExecutions };
}

/**
 * A finding whose evidence all predates the configuration in force and whose change would touch a
 * setting the last activation changed: the change it asks for was (probably) that activation.
 */
function supersededFinding(finding: Finding, slots: readonly Slot[], inForce: ConfigurationInForce): boolean {
  const { signals, executions } = finding.evidence;
  if (inForce.activeSince === null) return false;
  const fresh =
    signals.some((signal) => !inForce.signalIsEarlier(signal)) ||
    executions.some((execution) => !inForce.executionIsEarlier(execution));
  if (fresh) return false;
  return planChanges([finding], slots).changes.some((change) =>
    Object.keys(change.patch).some((key) => inForce.changedKeys(change.slotId).has(key)),
  );
}

/**
 * Runs heuristic-v1 on a context: draft (revised from the chain's evaluation on a refinement),
 * then the shared checks of finalizeProposal; a refinement's findings name the cases they rest on.
 */
export function synthesizeHeuristically(context: SynthesisContext): SynthesisProposal {
  const fresh = draftHeuristicSynthesis(context);
  const { shownSignals, shownExecutions } = fresh;
  const refined = context.refinement
    ? refineDraft(fresh.draft, context.refinement, context.baseConfiguration.slots, shownExecutions)
    : null;
  const proposal = finalizeProposal(refined?.draft ?? fresh.draft, {
    shownSignals,
    shownExecutions,
    baseConfiguration: context.baseConfiguration,
    allSignalsInWindow: context.signals,
  });
  if (!refined) return proposal;
  const findings = proposal.diagnosis.findings.map((finding) => {
    const caseIds = refined.caseIds.get(finding.id);
    return caseIds === undefined ? finding : { ...finding, caseIds };
  });
  return { ...proposal, diagnosis: { ...proposal.diagnosis, findings } };
}

/** The offline, deterministic synthesis engine. */
export const heuristicV1: SynthesisEngine = {
  name: 'heuristic-v1',
  async generate(context: SynthesisContext): Promise<SynthesisProposal> {
    return synthesizeHeuristically(context);
  },
};
