import { describe, expect, it } from 'vitest';
import { SynthesisFailure, TransientSynthesisError } from '../../../../lambdas/core/errors.ts';
import type { SynthesisDraft } from '../../../../lambdas/synthesis/draft.ts';
import { type FakeReply, overloaded, textReply, toolReply } from '../../../support/anthropic-fake.ts';
import { context, engineAt, goodDraft, MODEL, SLOT_SECRET, settle, useAnthropicFake } from './harness.ts';

/**
 * The submit_synthesis protocol of claude-v1 as a run sees it: the numbers the model cites become
 * ids, what does not resolve is dropped with a warning, a patch that copies a placeholder is
 * dropped, and a reply that breaks the schema gets exactly one repair call, never more.
 */

const fakeApi = useAnthropicFake();

async function run(replies: FakeReply[], overrides: Parameters<typeof engineAt>[1] = {}) {
  fakeApi().script(...replies);
  const { engine, events } = engineAt(fakeApi().url, overrides);
  const outcome = await settle(engine.generate(context()));
  return { ...outcome, events, requests: [...fakeApi().requests] };
}

/** A reply with the given content blocks and stop reason. */
const reply = (content: unknown[], stopReason = 'tool_use'): FakeReply => ({
  kind: 'message',
  body: {
    id: 'msg_unit',
    type: 'message',
    role: 'assistant',
    model: MODEL,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5 },
  },
});

const toolUse = (input: unknown, name = 'submit_synthesis', id = 'toolu_unit') => ({
  type: 'tool_use',
  id,
  name,
  input,
});

const withChanges = (changes: SynthesisDraft['changes']): SynthesisDraft => {
  const draft = goodDraft();
  return { ...draft, changes };
};

/** The text the repair call showed the model (a tool_result's content, or a plain user turn). */
function repairText(requests: { body: { messages: { content: unknown }[] } }[]): string {
  const content = requests[1]?.body.messages.at(-1)?.content;
  if (typeof content === 'string') return content;
  return String((content as { content: string }[])[0]?.content);
}

const errorLines = (text: string) => text.split('\n').filter((line) => line.startsWith('- '));

describe('claude-v1 maps the cited numbers and drops what does not resolve', () => {
  it('maps signalRefs and executionRefs to ids and drops unknown numbers with a warning', async () => {
    const draft = goodDraft();
    draft.diagnosis.findings[0] = {
      id: '1',
      description: 'Timeouts.',
      signalRefs: [1, 9, 0],
      executionRefs: [2, 7],
    };

    const { value } = await run([toolReply(draft)]);

    expect(value?.diagnosis.findings).toEqual([
      { id: '1', description: 'Timeouts.', signalIds: ['timeout-2', 'timeout-1'], executionIds: ['run-3'] },
    ]);
    const types = value?.structuredWarnings.map((warning) => warning.type);
    expect(types).toEqual(
      expect.arrayContaining(['dropped_signal_reference', 'dropped_execution_reference']),
    );
    const dropped = value?.structuredWarnings.find((warning) => warning.type === 'dropped_signal_reference');
    expect(dropped?.message).toContain('[9], [0]');
  });

  it('drops a finding that cites nothing that resolves, with the change that needed it', async () => {
    const draft = goodDraft();
    draft.diagnosis.findings[0] = { id: '1', description: 'Made up.', signalRefs: [42] };

    const { value } = await run([toolReply(draft)]);

    expect(value?.diagnosis.findings).toEqual([]);
    expect(value?.changes).toEqual([]);
    expect(value?.proposedSlots[0]?.settings).toEqual({ topK: 8, timeoutMs: 1500 });
  });
});

describe('claude-v1 drops a change that copies a placeholder the model was shown', () => {
  it('names the first three copied paths and keeps the other changes', async () => {
    const draft = withChanges([
      {
        id: '1',
        slotId: 'answer',
        description: 'Lower the temperature and drop the key header.',
        rationale: 'Steadier answers.',
        findingIds: ['1'],
        patch: { temperature: 0.2, headers: null },
      },
      {
        id: '2',
        slotId: 'answer',
        description: 'Copy everything back.',
        rationale: 'The model copied what it saw.',
        findingIds: ['1'],
        patch: {
          auth: { key: '[redacted]', retries: 2 },
          template: 'Answer…[truncated 120 bytes]',
          list: ['ok', 'Bearer [redacted]'],
          apiKey: '[redacted]',
        },
      },
    ]);

    const { value } = await run([toolReply(draft)]);

    expect(value?.changes.map((change) => change.id)).toEqual(['1']);
    expect(value?.structuredWarnings[0]).toEqual({
      type: 'invalid_patch',
      message:
        'Change 2 was dropped: its patch copies a value the model was shown redacted or shortened ' +
        '(auth.key, template, list.1), which would overwrite the real setting.',
    });
    expect(value?.proposedSlots[1]?.settings).toEqual({
      model: 'some-model',
      temperature: 0.2,
      maxTokens: 256,
      apiKey: SLOT_SECRET,
    });
  });

  it('names a single copied path alone', async () => {
    const draft = withChanges([
      {
        id: '1',
        slotId: 'answer',
        description: 'Reset the key.',
        rationale: 'The model copied what it saw.',
        findingIds: ['1'],
        patch: { apiKey: 'prefix [redacted] suffix' },
      },
    ]);

    const { value } = await run([toolReply(draft)]);

    expect(value?.changes).toEqual([]);
    expect(value?.structuredWarnings[0]?.message).toContain('shortened (apiKey), which');
    expect(value?.proposedSlots[1]?.settings.apiKey).toBe(SLOT_SECRET);
  });
});

describe('claude-v1 repairs a reply that breaks the schema, with one more call', () => {
  it('shows the model its errors as the failed tool call’s result, and uses the repaired reply', async () => {
    const broken = {
      diagnosis: { findings: [{ id: 'one', description: 'x', signalRefs: [1] }] },
      changes: [],
    };

    const { value, requests, events } = await run([
      toolReply(broken, { inputTokens: 1_000, outputTokens: 100 }),
      toolReply(goodDraft(), { inputTokens: 1_500, outputTokens: 300 }),
      toolReply(goodDraft()),
    ]);

    expect(requests).toHaveLength(2);
    expect(value?.usage).toEqual({
      model: MODEL,
      inputTokens: 2_500,
      cacheReadInputTokens: 0,
      cacheWriteInputTokens: 0,
      outputTokens: 400,
      attempts: 2,
    });
    expect(value?.changes).toHaveLength(1);
    const [first, repair] = requests.map((request) => request.body);
    expect(repair.tool_choice).toEqual({ type: 'tool', name: 'submit_synthesis' });
    expect(repair.tools).toEqual(first.tools);
    expect(repair.system).toEqual(first.system);
    expect(repair.model).toBe(MODEL);
    expect(repair.messages).toHaveLength(3);
    expect(repair.messages[0]).toEqual(first.messages[0]);
    const [sent] = repair.messages[1].content;
    expect(repair.messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: sent.id, name: 'submit_synthesis', input: broken }],
    });
    expect(repair.messages[2]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: sent.id, is_error: true, content: expect.any(String) }],
    });
    const text: string = repair.messages[2].content[0].content;
    expect(text).toBe(
      [
        'submit_synthesis was called with input that does not match its schema:',
        '- diagnosis.summary: Invalid input: expected string, received undefined',
        '- diagnosis.findings.0.id: must be a number written as a string: "1", "2", …',
        '- warnings: Invalid input: expected array, received undefined',
        'Call submit_synthesis again with the complete, corrected input.',
      ].join('\n'),
    );
    expect(events[0]).toEqual({
      message: 'model reply failed validation; asking for a repair',
      details: { errors: 3 },
    });
  });

  it('keeps the reply’s text beside its tool call in the assistant turn', async () => {
    const { requests } = await run([
      reply([{ type: 'text', text: 'Thinking aloud.' }, toolUse({ changes: 'wrong' })]),
      toolReply(goodDraft()),
    ]);

    expect(requests[1]?.body.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Thinking aloud.' },
        { type: 'tool_use', id: 'toolu_unit', name: 'submit_synthesis', input: { changes: 'wrong' } },
      ],
    });
  });

  it('asks a reply without the tool call to call it, in a plain user turn', async () => {
    const { value, requests } = await run([
      textReply('Here is my analysis: retrieval is slow.'),
      toolReply(goodDraft()),
    ]);

    expect(value?.changes).toHaveLength(1);
    const repair = requests[1]?.body;
    expect(repair.messages).toHaveLength(3);
    expect(repair.messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'Here is my analysis: retrieval is slow.' }],
    });
    expect(repair.messages[2]).toEqual({
      role: 'user',
      content:
        'submit_synthesis was called with input that does not match its schema:\n' +
        '- The reply did not call submit_synthesis.\n' +
        'Call submit_synthesis again with the complete, corrected input.',
    });
  });

  it('treats a call of another tool as no call, and sends that call back as it was', async () => {
    const { requests } = await run([
      reply([toolUse(goodDraft(), 'other_tool', 'toolu_other')]),
      toolReply(goodDraft()),
    ]);

    const repair = requests[1]?.body;
    expect(repair.messages[1].content).toEqual([
      { type: 'tool_use', id: 'toolu_other', name: 'other_tool', input: goodDraft() },
    ]);
    expect(repair.messages[2].content).toContain('- The reply did not call submit_synthesis.');
  });

  it('counts only a tool_use block as the call', async () => {
    const { requests } = await run([
      reply([{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'submit_synthesis', input: goodDraft() }]),
      toolReply(goodDraft()),
    ]);

    expect(requests).toHaveLength(2);
    expect(repairText(requests)).toContain('- The reply did not call submit_synthesis.');
  });

  it('sends no assistant turn for a reply with nothing to send back', async () => {
    const empty = await run([reply([], 'end_turn'), toolReply(goodDraft())]);
    fakeApi().reset();
    const blank = await run([reply([{ type: 'text', text: '  \n ' }], 'end_turn'), toolReply(goodDraft())]);

    for (const { requests, value } of [empty, blank]) {
      expect(value?.changes).toHaveLength(1);
      expect(requests[1]?.body.messages.map((turn: { role: string }) => turn.role)).toEqual(['user', 'user']);
    }
  });

  it('sends back an input that is not an object as an empty one, and names the input itself', async () => {
    const text = await run([reply([toolUse('just text')]), toolReply(goodDraft())]);
    fakeApi().reset();
    const none = await run([reply([toolUse(null)]), toolReply(goodDraft())]);

    for (const { requests } of [text, none]) {
      expect(requests[1]?.body.messages[1].content).toEqual([
        { type: 'tool_use', id: 'toolu_unit', name: 'submit_synthesis', input: {} },
      ]);
      expect(errorLines(repairText(requests))).toEqual([
        expect.stringMatching(/^- \(input\): Invalid input: expected object/),
      ]);
    }
  });

  it('says when the reply was cut off at max_tokens, first', async () => {
    const cut = await run([
      reply([toolUse({ diagnosis: { summary: 'Half' } })], 'max_tokens'),
      toolReply(goodDraft()),
    ]);
    fakeApi().reset();
    const uncalled = await run([
      reply([{ type: 'text', text: 'I was about to' }], 'max_tokens'),
      toolReply(goodDraft()),
    ]);

    const cutOff =
      '- The reply was cut off at the max_tokens limit (2048): submit a shorter synthesis ' +
      '(fewer findings and changes, shorter texts).';
    expect(errorLines(repairText(cut.requests))[0]).toBe(cutOff);
    expect(errorLines(repairText(cut.requests)).length).toBeGreaterThan(1);
    expect(errorLines(repairText(uncalled.requests))).toEqual([
      '- The reply did not call submit_synthesis.',
      cutOff,
    ]);
  });

  it('shows at most 20 errors and counts the rest', async () => {
    const findings = (count: number) =>
      Array.from({ length: count }, (_, i) => ({ id: String(i + 1), description: '', signalRefs: [1] }));
    const input = (count: number) => ({
      diagnosis: { summary: 's', findings: findings(count) },
      changes: [],
      warnings: [],
    });

    const twenty = await run([toolReply(input(20)), toolReply(goodDraft())]);
    fakeApi().reset();
    const twentyThree = await run([
      toolReply({ ...input(20), changes: 'x', warnings: 'y', extra: 1 }),
      toolReply(goodDraft()),
    ]);

    expect(errorLines(repairText(twenty.requests))).toHaveLength(20);
    expect(errorLines(repairText(twenty.requests)).at(-1)).toMatch(
      /^- diagnosis\.findings\.19\.description: /,
    );
    const lines = errorLines(repairText(twentyThree.requests));
    expect(lines).toHaveLength(21);
    expect(lines.at(-1)).toBe('- … and 3 more errors');
  });

  it('shortens a long error to 200 bytes', async () => {
    const key = `k${'x'.repeat(400)}`;

    const { requests } = await run([toolReply({ ...goodDraft(), [key]: 1 }), toolReply(goodDraft())]);

    const [line] = errorLines(repairText(requests));
    expect(line).toMatch(/^- \(input\): Unrecognized key: "kxxx+…\[truncated \d+ bytes\]$/);
    expect(Buffer.byteLength(line ?? '')).toBe(202);
  });
});

describe('claude-v1 never makes a third call for one reply', () => {
  it('fails the run with the first errors when the repaired reply breaks the schema too', async () => {
    const { error, requests, events } = await run([
      toolReply({ diagnosis: 'none' }),
      toolReply({ changes: 'still wrong', extra: 1 }),
      toolReply(goodDraft()),
    ]);

    expect(requests).toHaveLength(2);
    expect(error).toBeInstanceOf(SynthesisFailure);
    expect((error as Error).message).toBe(
      "The model's reply did not match the submit_synthesis schema, even after one repair attempt: " +
        'diagnosis: Invalid input: expected object, received undefined; ' +
        'changes: Invalid input: expected array, received string; ' +
        'warnings: Invalid input: expected array, received undefined',
    );
    // The fourth error, about "extra", is left out.
    expect((error as SynthesisFailure).usage).toEqual({
      model: MODEL,
      inputTokens: 2_000,
      cacheReadInputTokens: 0,
      cacheWriteInputTokens: 0,
      outputTokens: 400,
      attempts: 2,
    });
    expect(events.map((event) => event.message)).toEqual([
      'model reply failed validation; asking for a repair',
      'model synthesis failed',
    ]);
  });

  it('shortens the errors it names to 600 bytes', async () => {
    const key = `k${'y'.repeat(400)}`;
    const draft = goodDraft();
    // Three unknown keys in three objects: three errors of 200 bytes each, over 600 together.
    const broken = {
      ...draft,
      [key]: 1,
      diagnosis: {
        ...draft.diagnosis,
        [key]: 2,
        findings: [{ id: '1', description: 'd', signalRefs: [1], [key]: 3 }],
      },
    };

    const { error } = await run([toolReply({}), toolReply(broken)]);

    const detail = (error as Error).message.split('even after one repair attempt: ')[1] ?? '';
    // The first three errors, each shortened to 200 bytes, then all three to 600.
    expect(detail.split('; ').map((part) => part.split(':')[0])).toEqual([
      'diagnosis.findings.0',
      'diagnosis',
      '(input)',
    ]);
    expect(detail).toMatch(/y…\[truncated 28 bytes\]$/);
    expect(Buffer.byteLength(detail)).toBeLessThanOrEqual(600);
    expect(Buffer.byteLength(detail)).toBeGreaterThan(550);
  });

  it('hands a transient failure of the repair call to the queue, counting both calls', async () => {
    const { error, requests } = await run([toolReply({}), overloaded()], { maxRetries: 0 });

    expect(requests).toHaveLength(2);
    expect(error).toBeInstanceOf(TransientSynthesisError);
    expect((error as TransientSynthesisError).usage?.attempts).toBe(2);
  });
});
