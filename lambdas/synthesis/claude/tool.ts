/**
 * The protocol of claude-v1's one tool, submit_synthesis: its definition, the check of a reply
 * against the draft schema, the repair round-trip, and the patches dropped for copying placeholders.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { z } from 'zod';
import type { StructuredWarning } from '../../core/schemas/runs.ts';
import { type SynthesisDraft, synthesisDraftSchema } from '../draft.ts';
import { REDACTED } from '../redact.ts';
import { shorten, TRUNCATION_MARKER } from '../text-budget.ts';
// The draft's JSON Schema, written from the zod schema by write-draft-json-schema.ts (see there why).
import draftJsonSchema from './draft-json-schema.json' with { type: 'json' };

export const SUBMIT_SYNTHESIS_TOOL_NAME = 'submit_synthesis';

/** The one tool the model must call; its input schema is generated from the zod draft schema. */
export const SUBMIT_SYNTHESIS_TOOL: Anthropic.Messages.Tool = {
  name: SUBMIT_SYNTHESIS_TOOL_NAME,
  description:
    'Submit the diagnosis of the pipeline (findings citing the numbered signals and runs), the proposed changes ' +
    '(each a JSON Merge Patch of one slot’s settings, citing the findings it fixes) and any warnings. ' +
    'Call it exactly once with the complete synthesis.',
  input_schema: { ...(draftJsonSchema as Record<string, unknown>), type: 'object' },
};

const REPAIR_ERRORS = 20;
const REPAIR_ERROR_BYTES = 200;

/** Keeps the outcome of a reply check: the draft, or the errors to show the model. */
export type DraftCheck = { ok: true; draft: SynthesisDraft } | { ok: false; errors: string[] };

function formatIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  const lines = issues
    .slice(0, REPAIR_ERRORS)
    .map((issue) =>
      shorten(
        `${issue.path.length > 0 ? issue.path.join('.') : '(input)'}: ${issue.message}`,
        REPAIR_ERROR_BYTES,
      ),
    );
  if (issues.length > REPAIR_ERRORS) lines.push(`… and ${issues.length - REPAIR_ERRORS} more errors`);
  return lines;
}

function toolCall(message: Anthropic.Messages.Message): Anthropic.Messages.ToolUseBlock | undefined {
  return message.content.find(
    (block): block is Anthropic.Messages.ToolUseBlock =>
      block.type === 'tool_use' && block.name === SUBMIT_SYNTHESIS_TOOL_NAME,
  );
}

/** Checks a reply: it must call the tool with input the draft schema accepts. */
export function checkReply(message: Anthropic.Messages.Message, maxTokens: number): DraftCheck {
  const call = toolCall(message);
  const cutOff =
    message.stop_reason === 'max_tokens'
      ? [
          `The reply was cut off at the max_tokens limit (${maxTokens}): submit a shorter synthesis ` +
            '(fewer findings and changes, shorter texts).',
        ]
      : [];
  if (call === undefined)
    return { ok: false, errors: [`The reply did not call ${SUBMIT_SYNTHESIS_TOOL_NAME}.`, ...cutOff] };
  const parsed = synthesisDraftSchema.safeParse(call.input);
  if (parsed.success) return { ok: true, draft: parsed.data };
  return { ok: false, errors: [...cutOff, ...formatIssues(parsed.error.issues)] };
}

/** The assistant turn to send back: the reply's text and tool calls, as request blocks. */
export function assistantTurn(
  message: Anthropic.Messages.Message,
): Anthropic.Messages.MessageParam | undefined {
  const content: Anthropic.Messages.ContentBlockParam[] = [];
  for (const block of message.content) {
    if (block.type === 'text' && block.text.trim() !== '') content.push({ type: 'text', text: block.text });
    if (block.type === 'tool_use') {
      const input = block.input !== null && typeof block.input === 'object' ? block.input : {};
      content.push({ type: 'tool_use', id: block.id, name: block.name, input });
    }
  }
  return content.length > 0 ? { role: 'assistant', content } : undefined;
}

/** The user turn of the repair round-trip: the validation errors, as the failed tool call's result. */
export function repairTurn(
  message: Anthropic.Messages.Message,
  errors: readonly string[],
): Anthropic.Messages.MessageParam {
  const text =
    `${SUBMIT_SYNTHESIS_TOOL_NAME} was called with input that does not match its schema:\n` +
    `${errors.map((error) => `- ${error}`).join('\n')}\n` +
    `Call ${SUBMIT_SYNTHESIS_TOOL_NAME} again with the complete, corrected input.`;
  const call = toolCall(message);
  return call === undefined
    ? { role: 'user', content: text }
    : {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: call.id, is_error: true, content: text }],
      };
}

/** Dotted paths of the values in a patch that copy a redacted or shortened value from the prompt. */
function copiedPlaceholders(value: unknown, path: string): string[] {
  if (typeof value === 'string') {
    return value.includes(REDACTED) || value.includes(TRUNCATION_MARKER) ? [path] : [];
  }
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, child]) =>
      copiedPlaceholders(child, path === '' ? key : `${path}.${key}`),
    );
  }
  return [];
}

/**
 * Drops changes whose patch would store a placeholder the prompt showed instead of a real value
 * (a redacted secret, a shortened text): applying one would silently destroy the real setting.
 */
export function withoutPlaceholderPatches(draft: SynthesisDraft): {
  draft: SynthesisDraft;
  warnings: StructuredWarning[];
} {
  const warnings: StructuredWarning[] = [];
  const changes = draft.changes.filter((change) => {
    const paths = copiedPlaceholders(change.patch, '');
    if (paths.length === 0) return true;
    warnings.push({
      type: 'invalid_patch',
      message:
        `Change ${change.id} was dropped: its patch copies a value the model was shown redacted or shortened ` +
        `(${paths.slice(0, 3).join(', ')}), which would overwrite the real setting.`,
    });
    return false;
  });
  return { draft: { ...draft, changes }, warnings };
}
