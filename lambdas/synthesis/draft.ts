/* The draft every synthesis handler produces (findings, changes, warnings) and its limits:
   the schema the model's tool input and heuristic-v1's output are both checked against. */
import * as z from 'zod/mini';
import { emptyKeyPath, LIMITS } from '../core/schemas/common.ts';
import { findForbiddenKey } from './merge-patch.ts';

/**
 * The input of the `submit_synthesis` tool, the model's tool contract (see the README section on
 * claude-v1): what a synthesis handler drafts before code checks it. Signals and runs are cited by the numbers the prompt showed them under, never by id; the
 * code maps them, drops what does not resolve and computes the confidence (see finalize.ts).
 */

export const DRAFT_LIMITS = {
  summaryLength: 2_000,
  textLength: 1_000,
  rationaleLength: 2_000,
  findings: 20,
  changes: 20,
  warnings: 20,
  signalRefsPerFinding: 50,
  executionRefsPerFinding: 50,
  findingIdsPerChange: 20,
  changeIdsPerWarning: 20,
  slotIdLength: 64,
  warningTypeLength: 64,
} as const;

/** Finding and change ids are "1", "2", … as on the wire; the code renumbers nothing. */
const numberedId = (description: string) =>
  z
    .string()
    .check(
      z.regex(/^[1-9][0-9]{0,2}$/, 'must be a number written as a string: "1", "2", …'),
      z.meta({ description }),
    );
const sequenceIdSchema = numberedId('Position in its list, as a string: "1", "2", …');
const findingRefSchema = numberedId('The id of a finding of this diagnosis.');
const changeRefSchema = numberedId('The id of a change of this synthesis.');

const text = (max: number, description?: string) =>
  z
    .string()
    .check(z.trim(), z.minLength(1), z.maxLength(max), ...(description ? [z.meta({ description })] : []));

export const draftFindingSchema = z.strictObject({
  id: sequenceIdSchema,
  description: text(DRAFT_LIMITS.textLength, 'What is wrong, in one or two sentences.'),
  signalRefs: z
    .array(z.int())
    .check(
      z.maxLength(DRAFT_LIMITS.signalRefsPerFinding),
      z.meta({ description: 'Numbers of the shown signals this finding rests on, e.g. [1, 4].' }),
    ),
  executionRefs: z
    ._default(z.array(z.int()).check(z.maxLength(DRAFT_LIMITS.executionRefsPerFinding)), () => [])
    .check(
      z.meta({ description: 'Numbers of the shown runs this finding rests on: [E2] and [E7] are [2, 7].' }),
    ),
});

export const draftPatchSchema = z.record(z.string(), z.unknown()).check(
  z.refine((patch) => findForbiddenKey(patch) === undefined, {
    message: 'must not use the keys __proto__, constructor or prototype',
  }),
  // DynamoDB refuses an empty attribute name: a patch holding one could never be stored.
  z.refine((patch) => emptyKeyPath(patch) === undefined, {
    message: 'must not hold an empty key at any depth',
  }),
  z.refine((patch) => JSON.stringify(patch).length <= LIMITS.settingsBytes, {
    message: `must serialize to at most ${LIMITS.settingsBytes} bytes`,
  }),
  z.meta({
    description:
      "An RFC 7396 JSON Merge Patch of the slot's settings: keys to set, null to delete a key; " +
      'nested objects merge, arrays are replaced whole.',
  }),
);

export const draftChangeSchema = z.strictObject({
  id: sequenceIdSchema,
  slotId: z
    .string()
    .check(
      z.minLength(1),
      z.maxLength(DRAFT_LIMITS.slotIdLength),
      z.meta({ description: 'The id of a slot of the base configuration.' }),
    ),
  description: text(DRAFT_LIMITS.textLength, 'What the change does.'),
  rationale: text(DRAFT_LIMITS.rationaleLength, 'Why it fixes the findings it cites.'),
  findingIds: z
    .array(findingRefSchema)
    .check(
      z.minLength(1),
      z.maxLength(DRAFT_LIMITS.findingIdsPerChange),
      z.meta({ description: 'Ids of the findings this change addresses; every change cites one at least.' }),
    ),
  patch: draftPatchSchema,
});

export const draftWarningSchema = z.strictObject({
  type: z.string().check(
    z.minLength(1),
    z.maxLength(DRAFT_LIMITS.warningTypeLength),
    z.regex(/^[a-z][a-z0-9_]*$/, 'must be snake_case, e.g. speculative_change'),
    z.meta({
      description: 'snake_case kind of warning, e.g. thin_evidence, speculative_change, no_changes.',
    }),
  ),
  message: text(DRAFT_LIMITS.textLength),
  changeIds: z.optional(
    z
      .array(changeRefSchema)
      .check(
        z.maxLength(DRAFT_LIMITS.changeIdsPerWarning),
        z.meta({ description: 'Ids of the changes the warning is about, if any.' }),
      ),
  ),
});

/** Ids must run "1", "2", … in list order, so the wire ids can be the draft's ids unchanged. */
function checkSequence(
  ids: readonly string[],
  path: readonly (string | number)[],
  issues: {
    addIssue(issue: { code: 'custom'; path: (string | number)[]; message: string; input: unknown }): void;
  },
): void {
  ids.forEach((id, index) => {
    if (id !== String(index + 1)) {
      issues.addIssue({
        // Stryker disable next-line StringLiteral: nothing reads the issue code; the model is shown path and message
        code: 'custom',
        path: [...path, index, 'id'],
        message: `${path.at(-1)} ids must be "1", "2", … in order; expected "${index + 1}", got "${id}"`,
        input: id,
      });
    }
  });
}

export const synthesisDraftSchema = z
  .strictObject({
    diagnosis: z.strictObject({
      summary: text(DRAFT_LIMITS.summaryLength, 'The diagnosis in a few sentences.'),
      findings: z.array(draftFindingSchema).check(z.maxLength(DRAFT_LIMITS.findings)),
    }),
    changes: z.array(draftChangeSchema).check(z.maxLength(DRAFT_LIMITS.changes)),
    warnings: z.array(draftWarningSchema).check(z.maxLength(DRAFT_LIMITS.warnings)),
  })
  .check(
    z.superRefine((draft, ctx) => {
      checkSequence(
        draft.diagnosis.findings.map((finding) => finding.id),
        ['diagnosis', 'findings'],
        ctx,
      );
      checkSequence(
        draft.changes.map((change) => change.id),
        ['changes'],
        ctx,
      );
    }),
  );

/** A draft as a handler writes it (optional fields may be left out; finalize reads them with defaults). */
export type SynthesisDraft = z.input<typeof synthesisDraftSchema>;
export type DraftFinding = z.input<typeof draftFindingSchema>;
export type DraftChange = z.infer<typeof draftChangeSchema>;
export type DraftWarning = z.infer<typeof draftWarningSchema>;

/**
 * JSON Schema of the draft, for the `submit_synthesis` tool's `input_schema` (built when first
 * asked: only claude-v1 needs it, and heuristic-v1's jobs do not pay for building it). Refinements
 * (id order, reserved keys, patch size) cannot be expressed in it; the zod parse enforces them.
 */
export function synthesisDraftJsonSchema(): Record<string, unknown> {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(synthesisDraftSchema, { io: 'input' });
  return schema;
}
