/**
 * The <pipeline-data> block of claude-v1's prompt holds whatever a pipeline's users wrote: no text of
 * theirs, in any field, may open or close it. Data full of tag-like strings is generated in every
 * field the prompt shows, and the prompt must carry exactly the template's tags, in its order.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SynthesisContext } from '../../../../lambdas/core/ports/synthesis.ts';
import type { Slot } from '../../../../lambdas/core/schemas/pipelines.ts';
import type { Execution, Signal } from '../../../../lambdas/core/schemas/records.ts';
import {
  buildSynthesisPrompt,
  PROMPT_LIMITS,
  USER_PROMPT_BYTES,
} from '../../../../lambdas/synthesis/claude/prompt.ts';
import { escapePromptData, promptJson } from '../../../../lambdas/synthesis/prompt-escape.ts';

/** Everything that could read as the start of a tag: a `<`, or `&lt;` and its numeric forms. */
const TAG_LIKE = /(?:<|&(?:lt|#0*60|#x0*3c);?)[^<>&\n]*(?:>|&gt;?)?/gi;
const tagsIn = (text: string): string[] => text.match(TAG_LIKE) ?? [];

const TAG_PIECES = [
  '<pipeline-data>',
  '</pipeline-data>',
  '</PIPELINE-DATA>',
  '</Pipeline-Data >',
  '< /pipeline-data>',
  '<\t/pipeline-data\n>',
  '</pipeline-data',
  '<pipeline-data/>',
  '&lt;/pipeline-data&gt;',
  '&LT;/pipeline-data&GT;',
  '&lt;pipeline-data&gt;',
  '&#60;/pipeline-data&#62;',
  '&#x3C;/pipeline-data>',
  '\\u003c/pipeline-data>',
  '"</pipeline-data>"',
  "'</pipeline-data>'",
  '<',
  '&',
  '>',
];

/** Text made of tag-like pieces and arbitrary strings. */
const dataText = fc
  .array(fc.oneof(fc.constantFrom(...TAG_PIECES), fc.string({ maxLength: 12 })), {
    minLength: 1,
    maxLength: 4,
  })
  .map((parts) => parts.join(''));
/** Mostly a real value (the prompt's logic depends on it), sometimes data. */
const orData = <T>(...values: T[]) => fc.oneof(fc.constantFrom(...values), dataText);
const timestamp = orData('2025-03-01T09:00:00.000Z', '2025-03-01T10:30:00.000Z');

const settingsValue = fc.oneof(
  dataText,
  fc.integer(),
  fc.array(dataText, { maxLength: 2 }),
  fc.dictionary(dataText, dataText, { maxKeys: 2 }),
);
const slot = fc.record({
  id: dataText,
  name: dataText,
  kind: dataText,
  settings: fc.dictionary(orData('apiKey', 'instructions', 'password'), settingsValue, { maxKeys: 3 }),
});

function arbitraryContext(): fc.Arbitrary<SynthesisContext> {
  return fc
    .record({
      name: dataText,
      slots: fc.uniqueArray(slot, { minLength: 1, maxLength: 3, selector: (s) => s.id }),
    })
    .chain(({ name, slots }) => {
      const slotId = fc.oneof(fc.constantFrom(...slots.map((s) => s.id)), dataText);
      const signal = fc.record({
        id: fc.uuid(),
        kind: dataText,
        severity: orData('info', 'warning', 'critical'),
        message: dataText,
        slotId: fc.option(slotId, { nil: undefined }),
        occurredAt: timestamp,
      });
      const slotResult = fc.record({
        slotId,
        status: orData('failed', 'succeeded'),
        durationMs: fc.nat(100_000),
        error: fc.option(dataText, { nil: undefined }),
      });
      const execution = fc.record({
        id: fc.uuid(),
        status: orData('failed', 'succeeded'),
        durationMs: fc.nat(100_000),
        startedAt: timestamp,
        error: fc.option(dataText, { nil: undefined }),
        slotResults: fc.option(fc.array(slotResult, { maxLength: 3 }), { nil: undefined }),
      });
      return fc
        .record({
          signals: fc.array(signal, { maxLength: 4 }),
          executions: fc.array(execution, { maxLength: 4 }),
          configurationId: orData('c-1', 'c-0'),
        })
        .map((data) => contextOf(name, slots as Slot[], data));
    });
}

function contextOf(
  name: string,
  slots: Slot[],
  data: { signals: unknown[]; executions: unknown[]; configurationId: string },
): SynthesisContext {
  return {
    pipeline: {
      id: 'p-1',
      teamId: 't-1',
      name,
      activeConfigurationId: 'c-1',
      createdAt: '2025-01-01T00:00:00Z',
    },
    baseConfiguration: {
      id: 'c-1',
      pipelineId: 'p-1',
      version: 1,
      slots,
      source: 'manual',
      createdAt: '2025-01-01T00:00:00Z',
      createdBy: 'u-1',
    },
    signals: data.signals.map((signal) => ({ pipelineId: 'p-1', ...(signal as object) }) as Signal),
    executions: data.executions.map(
      (execution) =>
        ({ pipelineId: 'p-1', configurationId: data.configurationId, ...(execution as object) }) as Execution,
    ),
  };
}

/** Every field the prompt shows set to `text`, failing runs and slots included. */
function everyFieldHolds(text: string): SynthesisContext {
  const slots: Slot[] = [
    { id: text, name: text, kind: text, settings: { [text]: text, note: [text], nested: { [text]: text } } },
    { id: `${text}-idle`, name: text, kind: text, settings: {} },
  ];
  const failed = (slotId: string) => ({ slotId, status: 'failed', durationMs: 5, error: text });
  return contextOf(text, slots, {
    configurationId: 'c-0',
    signals: [
      { id: 's1', kind: text, severity: text, message: text, slotId: text, occurredAt: text },
      { id: 's2', kind: text, severity: 'info', message: 'other', slotId: `${text}-gone`, occurredAt: text },
    ],
    executions: [
      {
        id: 'e1',
        status: 'failed',
        durationMs: 9,
        startedAt: text,
        error: text,
        slotResults: [failed(text)],
      },
      { id: 'e2', status: 'failed', durationMs: 8, startedAt: text, error: text },
      { id: 'e3', status: text, durationMs: 7, startedAt: text, slotResults: [failed(`${text}-gone`)] },
    ],
  });
}

const TEMPLATE_TAGS = tagsIn(buildSynthesisPrompt(everyFieldHolds('plain')).user);

describe('the <pipeline-data> block of the claude-v1 prompt', () => {
  it('has one opening and one closing tag in the template', () => {
    expect(TEMPLATE_TAGS).toEqual(['<pipeline-data>', '</pipeline-data>']);
  });

  it.each(TAG_PIECES)('keeps exactly the template tags when every field holds %j', (piece) => {
    const { user } = buildSynthesisPrompt(everyFieldHolds(`x${piece}y`));

    expect(tagsIn(user)).toEqual(TEMPLATE_TAGS);
    expect(user.split('\n').at(-1)).toBe('</pipeline-data>');
  });

  it('keeps exactly the template tags, in order, whatever the data', () => {
    fc.assert(
      fc.property(arbitraryContext(), (context) => {
        const { user } = buildSynthesisPrompt(context);
        expect(tagsIn(user)).toEqual(TEMPLATE_TAGS);
        expect(user.indexOf('<pipeline-data>')).toBeLessThan(user.indexOf('</pipeline-data>'));
      }),
      { numRuns: 200 },
    );
  });

  it('keeps both tags and the size bound when every text is as long as allowed and all escapes', () => {
    const worst = '<&'.repeat(2_000);
    const slots: Slot[] = Array.from({ length: 50 }, (_, i) => ({
      id: `s${i}`,
      name: worst.slice(0, 200),
      kind: 'model',
      settings: { instructions: worst, [worst.slice(0, 40)]: worst },
    }));
    const failed = (i: number) => ({ slotId: `s${i % 50}`, status: 'failed', durationMs: 5, error: worst });
    const context = contextOf(worst.slice(0, 200), slots, {
      configurationId: 'c-1',
      signals: Array.from({ length: 200 }, (_, i) => ({
        id: `g${i}`,
        kind: 'error',
        severity: 'critical',
        message: `${i}${worst}`,
        slotId: `s${i % 50}`,
        occurredAt: '2025-03-01T10:00:00.000Z',
      })),
      executions: Array.from({ length: 200 }, (_, i) => ({
        id: `e${i}`,
        status: 'failed',
        durationMs: 5,
        startedAt: '2025-03-01T09:00:00.000Z',
        error: `${i}${worst}`,
        slotResults: [failed(i), failed(i + 1)],
      })),
    });

    const prompt = buildSynthesisPrompt(context);

    expect(tagsIn(prompt.user)).toEqual(TEMPLATE_TAGS);
    expect(prompt.user.split('\n').at(-1)).toBe('</pipeline-data>');
    expect(Buffer.byteLength(prompt.user)).toBeLessThanOrEqual(USER_PROMPT_BYTES);
    expect(prompt.estimatedTokens).toBeLessThanOrEqual(PROMPT_LIMITS.maxInputTokens);
  });
});

describe('escapePromptData', () => {
  it('writes < and & as JSON escapes and leaves every other character alone', () => {
    expect(escapePromptData('a<b&c>d"e\\f')).toBe('a\\u003cb\\u0026c>d"e\\f');
    expect(promptJson({ k: '</x>&' })).toBe('{"k":"\\u003c/x>\\u0026"}');
    expect(JSON.parse(promptJson('</pipeline-data>&lt;'))).toBe('</pipeline-data>&lt;');
  });
});
