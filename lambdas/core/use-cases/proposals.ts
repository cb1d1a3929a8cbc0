/*
 * Changes made by hand: a person's own patches of the active configuration become a synthesis run
 * (`synthesisHandler: "manual"`), generated at once, with no model and no cost. Each change is
 * checked by the very rules a model's changes pass (synthesis/drops/changes.ts): a change they would
 * drop is a 400 naming it. From there the run is evaluated, approved and rolled out like any.
 */
import * as z from 'zod/mini';
import { CHANGE_RULES, underReview } from '../../synthesis/drops/changes.ts';
import { review } from '../../synthesis/drops/rule.ts';
import type { JsonObject } from '../../synthesis/merge-patch.ts';
import { ConflictError, ValidationError } from '../errors.ts';
import { actorOf, runEvent } from '../events.ts';
import { legacyWarnings, renderExplanation } from '../explanation.ts';
import type { Clock, IdGenerator } from '../ports/common.ts';
import type { PipelineReads } from '../ports/pipelines.ts';
import type { RunRepository } from '../ports/runs.ts';
import { assertCanWrite, type Principal } from '../principal.ts';
import { newPendingRun } from '../run-state.ts';
import { boundedString, SETTINGS_BYTES } from '../schemas/common.ts';
import type { Configuration } from '../schemas/pipelines.ts';
import type { Change, StructuredWarning, SynthesisRun } from '../schemas/runs.ts';
import { loadConfiguration, loadOwnedPipeline } from './pipelines.ts';

/** The handler name a run made by hand carries. */
export const MANUAL_HANDLER = 'manual';
export const CHANGES_PER_PROPOSAL = 20;
/** All patches of one proposal together: the run that holds them must fit one DynamoDB item. */
export const PROPOSAL_PATCH_BYTES = 64_000;

export const proposalBodySchema = /* @__PURE__ */ z.strictObject({
  changes: /* @__PURE__ */ z
    .array(
      /* @__PURE__ */ z.strictObject({
        slotId: /* @__PURE__ */ boundedString(1, 64),
        description: /* @__PURE__ */ boundedString(1, 500),
        rationale: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedString(0, 2_000)),
        patch: /* @__PURE__ */ z.record(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.unknown()).check(
          /* @__PURE__ */ z.refine((patch) => JSON.stringify(patch).length <= SETTINGS_BYTES, {
            error: () => `must serialize to at most ${SETTINGS_BYTES} bytes`,
          }),
        ),
      }),
    )
    .check(
      /* @__PURE__ */ z.minLength(1, 'must hold at least one change'),
      /* @__PURE__ */ z.maxLength(CHANGES_PER_PROPOSAL),
      /* @__PURE__ */ z.refine(
        (changes) => JSON.stringify(changes.map((change) => change.patch)).length <= PROPOSAL_PATCH_BYTES,
        { error: () => `the patches together must serialize to at most ${PROPOSAL_PATCH_BYTES} bytes` },
      ),
    ),
  /** What the person says the proposal is for: the run's diagnosis summary. */
  note: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedString(1, 2_000)),
});
export type ProposalBody = z.infer<typeof proposalBodySchema>;

export interface ProposeDeps {
  runs: Pick<RunRepository, 'create' | 'claim' | 'completeGenerated'>;
  pipelines: PipelineReads;
  clock: Clock;
  ids: IdGenerator;
}

/**
 * Checks every change against the active configuration with the synthesis drop rules (a change
 * cites no finding here, so the finding rules do not apply) and answers the changes and the
 * proposed slots; the first change a rule would drop is a 400 naming it and why.
 */
export function checkManualChanges(body: ProposalBody, base: Pick<Configuration, 'slots'>) {
  const settingsBySlot = new Map<string, JsonObject>(
    base.slots.map((slot) => [slot.id, structuredClone(slot.settings)]),
  );
  const rules = CHANGE_RULES.filter(
    (rule) => rule.type !== 'uncited_change' && rule.type !== 'unknown_finding',
  );
  const changes: Change[] = [];
  for (const [index, input] of body.changes.entries()) {
    const id = String(index + 1);
    const draft = {
      id,
      slotId: input.slotId,
      description: input.description,
      rationale: input.rationale ?? '',
      findingIds: [],
      patch: input.patch,
    };
    const drops: StructuredWarning[] = [];
    const kept = review(
      underReview(draft, settingsBySlot),
      rules,
      { findingIds: new Set<string>(), settingsBySlot },
      drops,
    );
    if (kept === undefined) {
      const why = drops
        .map((drop) =>
          drop.message
            .replace(' was dropped', ' is refused')
            .replace('base configuration', 'active configuration'),
        )
        .join(' ');
      throw new ValidationError(why, {
        details: [{ path: `changes.${index}`, message: why, type: drops[0]?.type }],
      });
    }
    settingsBySlot.set(input.slotId, kept.after);
    changes.push({ ...draft, patch: structuredClone(input.patch) });
  }
  const slots = base.slots.map((slot) => ({
    ...structuredClone(slot),
    settings: structuredClone(settingsBySlot.get(slot.id) ?? slot.settings),
  }));
  return { changes, slots };
}

/** Makes the person's changes a generated run on the active configuration; answers the run. */
export function makeProposeChanges({ runs, pipelines, clock, ids }: ProposeDeps) {
  return async (principal: Principal, pipelineId: string, body: ProposalBody): Promise<SynthesisRun> => {
    assertCanWrite(principal);
    const pipeline = await loadOwnedPipeline(pipelines, principal, pipelineId);
    const base = await loadConfiguration(pipelines, pipelineId, pipeline.activeConfigurationId);
    const { changes, slots } = checkManualChanges(body, base);
    const createdAt = clock.now().toISOString();
    const run = newPendingRun({
      id: ids.newId(),
      pipelineId,
      teamId: pipeline.teamId,
      synthesisHandler: MANUAL_HANDLER,
      baseConfigurationId: base.id,
      jobId: MANUAL_HANDLER,
      createdAt,
      triggeredBy: principal.userId,
      estimatedCostUsd: 0,
    });
    await runs.create(run);
    // The same two steps a worker takes, at once: the run is never seen pending for long.
    const claimed = await runs.claim(run.id, createdAt, createdAt);
    if (claimed.outcome !== 'claimed')
      throw new ConflictError(`Run ${run.id} could not be generated; try again.`);
    const diagnosis = { summary: body.note ?? `Changes made by hand (${changes.length}).`, findings: [] };
    const generated: SynthesisRun = {
      ...claimed.run,
      status: 'generated',
      proposedConfigurationId: ids.newId(),
      diagnosis,
      changes,
      structuredWarnings: [],
      confidence: null,
      explanation: renderExplanation(diagnosis, changes),
      warnings: legacyWarnings([]),
      generationCompletedAt: createdAt,
      usage: null,
      costUsd: 0,
    };
    return runs.completeGenerated(
      generated,
      {
        id: generated.proposedConfigurationId as string,
        pipelineId,
        slots,
        source: 'synthesis',
        synthesisRunId: run.id,
        createdAt,
        createdBy: principal.userId,
      },
      claimed.run.generationStartedAt ?? createdAt,
      runEvent(run, 'generated', createdAt, actorOf(principal), {
        configurationId: generated.proposedConfigurationId as string,
      }),
    );
  };
}
