import { describe, expect, it } from 'vitest';
import type { Slot } from '../../../../lambdas/core/schemas/pipelines.ts';
import type { Signal } from '../../../../lambdas/core/schemas/records.ts';
import {
  buildSynthesisPrompt,
  FRAMING_BYTES,
  PROMPT_LIMITS,
  SYSTEM_PROMPT,
  USER_PROMPT_BYTES,
} from '../../../../lambdas/synthesis/claude/prompt.ts';
import { context, SLOT_SECRET } from './harness.ts';

/**
 * The prompt claude-v1 sends, as the model reads it: the layout of the user message, the lines
 * that number the signals, the settings of every slot within the byte budget, and the estimate of
 * its size. (prompt.test.ts covers selection, redaction and the overall bound.)
 */

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
const MARKER = /…\[truncated \d+ bytes\]/g;

/** The text of one `## ` section of the user message. */
function section(user: string, heading: string): string {
  const start = user.indexOf(`## ${heading}\n`);
  if (start < 0) throw new Error(`no section ${heading}`);
  const body = user.slice(start + heading.length + 4);
  const end = body.search(/\n\n## |\n<\/pipeline-data>/);
  return end < 0 ? body : body.slice(0, end);
}

/** The settings line of a slot, parsed when it is whole JSON. */
function settingsLine(user: string, slotId: string): string {
  const match = user.match(new RegExp(`^Slot "${slotId}" .*\\n {2}settings: (.*)$`, 'm'));
  if (match?.[1] === undefined) throw new Error(`no slot ${slotId}`);
  return match[1];
}

const signal = (id: string, overrides: Partial<Signal> = {}): Signal => ({
  id,
  pipelineId: 'p-1',
  kind: 'error',
  severity: 'warning',
  message: `failure ${id}`,
  slotId: 'retrieve',
  occurredAt: '2025-03-01T10:00:00Z',
  ...overrides,
});

describe('which configuration each signal belongs to', () => {
  it('marks signals recorded before the base became active and names the settings its activation changed', () => {
    const base = context({
      signals: [
        signal('old', { occurredAt: '2025-03-01T09:00:00Z', message: 'truncated at max_tokens (128)' }),
        signal('new', { occurredAt: '2025-03-01T11:00:00Z', message: 'truncated at max_tokens (256)' }),
      ],
    });
    const previous = {
      ...base.baseConfiguration,
      id: 'c-0',
      slots: base.baseConfiguration.slots.map((slot) =>
        slot.id === 'retrieve' ? { ...slot, settings: { ...slot.settings, topK: 4 } } : slot,
      ),
    };

    const { user } = buildSynthesisPrompt({
      ...base,
      activeSince: '2025-03-01T10:00:00.000Z',
      previousConfiguration: previous,
    });

    const signalLines = section(user, 'Signals').split('\n');
    const lineOf = (text: string) => signalLines.findIndex((line) => line.includes(text)) - 1;
    expect(signalLines[lineOf('(128)')]).toContain('earlier configuration');
    expect(signalLines[lineOf('(256)')]).not.toContain('earlier configuration');
    expect(section(user, 'Last activation')).toContain('"retrieve".topK');
    expect(section(user, 'Last activation')).toContain('active since 2025-03-01T10:00Z');
  });
});

describe('the user message of claude-v1', () => {
  it('asks for the synthesis, then frames five sections as data', () => {
    const { user } = buildSynthesisPrompt(context());
    const lines = user.split('\n');

    expect(lines.slice(0, 6)).toEqual([
      'Diagnose the pipeline "answer bot" from the data below and submit the synthesis with submit_synthesis.',
      '<pipeline-data>',
      '## Base configuration',
      '2 slots; patch a slot by its id.',
      'Slot "retrieve" (kind retrieval, name "Retrieve documents")',
      '  settings: {"topK":8,"timeoutMs":1500}',
    ]);
    expect(lines.at(-1)).toBe('</pipeline-data>');
    const headings = lines.flatMap((line, index) =>
      line.startsWith('## ') ? [[lines[index - 1], line]] : [],
    );
    expect(headings).toEqual([
      ['<pipeline-data>', '## Base configuration'],
      ['', '## Last activation'],
      ['', '## Signals'],
      ['', '## Run history'],
      ['', '## Runs'],
    ]);
    expect(section(user, 'Signals').split('\n')[0]).toBe(
      'Showing 2 of all 3 signals: one per distinct kind, slot and message (×N counts its repeats), ' +
        'most severe first, then newest. Cite them by number.',
    );
    expect(section(user, 'Runs')).toMatch(/^.*\n\[E1\] /);
    expect(section(user, 'Last activation')).toContain('active since the pipeline was created');
    expect(user).not.toContain(SLOT_SECRET);
  });

  it('counts one slot as "1 slot"', () => {
    const { user } = buildSynthesisPrompt(
      context({ slots: [{ id: 'only', name: 'Only', kind: 'tool', settings: {} }] }),
    );

    expect(section(user, 'Base configuration')).toBe(
      '1 slot; patch a slot by its id.\nSlot "only" (kind tool, name "Only")\n  settings: {}',
    );
  });

  it('names a signal’s slot only when it has one, and shows its value', () => {
    const { user } = buildSynthesisPrompt(
      context({
        signals: [
          signal('eval', { kind: 'eval', slotId: undefined, value: 0.42, message: 'score dropped' }),
          signal('gone', { slotId: 'reranker', message: 'reranker failed' }),
        ],
      }),
    );

    expect(section(user, 'Signals').split('\n').slice(1)).toEqual([
      '[1] warning | eval | 2025-03-01T10:00Z | value 0.42',
      '    "score dropped"',
      '[2] warning | error | slot "reranker" (not in the base configuration) | 2025-03-01T10:00Z',
      '    "reranker failed"',
    ]);
  });

  it('counts the system prompt, the tool and the user message in the size estimate', () => {
    const prompt = buildSynthesisPrompt(context());

    expect(prompt.system).toBe(SYSTEM_PROMPT);
    expect(prompt.estimatedTokens).toBeGreaterThan(
      Math.ceil(bytes(prompt.user) / 3) +
        Math.ceil(bytes(SYSTEM_PROMPT) / 3) +
        PROMPT_LIMITS.toolUseOverheadTokens,
    );
    expect(prompt.estimatedTokens).toBeLessThan(PROMPT_LIMITS.maxInputTokens);
  });

  it('fits its capped sections and their headings in the byte budget of the user message', () => {
    const { configurationBytes, signalsBytes, historyBytes, runsBytes } = PROMPT_LIMITS;

    const sections = configurationBytes + signalsBytes + historyBytes + runsBytes;

    expect(sections + FRAMING_BYTES).toBeLessThanOrEqual(USER_PROMPT_BYTES);
  });
});

describe('the settings claude-v1 shows', () => {
  it('shortens every long string, in lists and nested objects too, so the other settings stay readable', () => {
    const slot: Slot = {
      id: 'gen',
      name: 'Generate',
      kind: 'model',
      settings: {
        instructions: 'a'.repeat(1_000),
        examples: ['b'.repeat(1_000), 'short'],
        nested: { deep: 'c'.repeat(1_000), stop: null },
        temperature: 0.3,
      },
    };

    const { user } = buildSynthesisPrompt(context({ slots: [slot] }));

    const shown = JSON.parse(settingsLine(user, 'gen'));
    for (const value of [shown.instructions, shown.examples[0], shown.nested.deep]) {
      expect(value).toMatch(/^(a+|b+|c+)…\[truncated \d+ bytes\]$/);
      expect(bytes(value)).toBeLessThanOrEqual(PROMPT_LIMITS.settingsStringBytes);
      expect(bytes(value)).toBeGreaterThan(PROMPT_LIMITS.settingsStringBytes - 10);
    }
    expect(shown.examples).toEqual([expect.any(String), 'short']);
    expect(shown.nested.stop).toBeNull();
    expect(shown.temperature).toBe(0.3);
  });

  it('shows at most slotSettingsBytes of one slot’s settings, however much room is left', () => {
    const settings = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`k${i}`, 'x'.repeat(500)]));

    const { user } = buildSynthesisPrompt(
      context({ slots: [{ id: 'big', name: 'Big', kind: 'prompt', settings }] }),
    );

    const line = settingsLine(user, 'big');
    expect(bytes(line)).toBeLessThanOrEqual(PROMPT_LIMITS.slotSettingsBytes);
    expect(bytes(line)).toBeGreaterThan(PROMPT_LIMITS.slotSettingsBytes - 10);
    expect(line.match(MARKER)).toHaveLength(1);
  });

  it('shows small slots whole and shares the rest of the budget evenly among the large ones', () => {
    const large = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, 'x'.repeat(580)]));
    const slots: Slot[] = [
      ...Array.from({ length: 8 }, (_, i) => ({
        id: `large-${i}`,
        name: `Large ${i}`,
        kind: 'prompt',
        settings: large,
      })),
      { id: 'small', name: 'Small', kind: 'model', settings: { temperature: 0.5 } },
    ];

    const { user } = buildSynthesisPrompt(context({ slots }));

    const configuration = section(user, 'Base configuration');
    expect(settingsLine(user, 'small')).toBe('{"temperature":0.5}');
    const sizes = slots.slice(0, 8).map((slot) => bytes(settingsLine(user, slot.id)));
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    // Every large slot is shortened once; the whole section fills its budget without a final cut.
    expect(configuration.match(MARKER)).toHaveLength(8);
    expect(bytes(configuration)).toBeLessThanOrEqual(PROMPT_LIMITS.configurationBytes);
    expect(bytes(configuration)).toBeGreaterThan(PROMPT_LIMITS.configurationBytes - 20);
  });
});

describe('the signals claude-v1 numbers', () => {
  it('numbers signals while they fit in the section, to the byte, and stops at the first that does not', () => {
    const longSlot = `slot-${'s'.repeat(55)}`;
    const at = (index: number) => new Date(Date.UTC(2025, 2, 1, 10, 59 - index)).toISOString();
    const lineBytes = (n: number, message: string) =>
      bytes(
        `[${n}] warning | error | slot "${longSlot}" (not in the base configuration) | ${at(0).slice(0, 16)}Z\n    ${JSON.stringify(message)}`,
      ) + 1;
    const budget = PROMPT_LIMITS.signalsBytes - 400;
    const messages: string[] = [];
    let used = 0;
    // Lines of about 370 bytes while two more fit, then two lines that fill the budget exactly.
    let n = 1;
    const standard = (index: number) => `m${index} ${'x'.repeat(250)}`;
    while (budget - used > 2 * lineBytes(n, standard(n))) {
      messages.push(standard(n));
      used += lineBytes(n, standard(n));
      n += 1;
    }
    const half = 'x'.repeat(Math.floor((budget - used) / 2) - lineBytes(n, ''));
    messages.push(half);
    used += lineBytes(n, half);
    const last = 'y'.repeat(budget - used - lineBytes(n + 1, ''));
    messages.push(last);
    used += lineBytes(n + 1, last);
    expect(Math.max(...messages.map((message) => message.length))).toBeLessThanOrEqual(280);
    expect(used).toBe(budget);
    const signals = [
      ...messages.map((message, index) =>
        signal(`s${index}`, { slotId: longSlot, message, occurredAt: at(index) }),
      ),
      // A short line that would fit if the budget were counted loosely.
      signal('tiny', { slotId: undefined, kind: 'e', message: 'x', occurredAt: at(58) }),
    ];

    const prompt = buildSynthesisPrompt(context({ signals }));

    expect(prompt.shownSignals.map((shown) => shown.id)).toEqual(messages.map((_, index) => `s${index}`));
    const text = section(prompt.user, 'Signals');
    expect(text.split('\n')[0]).toMatch(
      new RegExp(`^Showing ${messages.length} of all ${signals.length} signals: `),
    );
    expect(text).not.toMatch(MARKER);
  });
});
