import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AnthropicClaudeV1Options, createClaudeV1 } from '../../../lambdas/synthesis/claude/engine.ts';
import { PROMPT_LIMITS } from '../../../lambdas/synthesis/claude/prompt.ts';
import { synthesisDraftJsonSchema } from '../../../lambdas/synthesis/draft.ts';
import { staticApiKeySource } from '../../../lambdas/wiring/anthropic.ts';
import {
  type AnthropicFake,
  errorReply,
  hang,
  overloaded,
  promptText,
  rateLimited,
  serverError,
  startAnthropicFake,
  textReply,
  toolReply,
  unauthorized,
} from '../../support/anthropic-fake.ts';
import { ANTHROPIC_KEY_PREFIX } from '../../support/fake-secrets.ts';
import {
  type ClaudeTestBed,
  FIXTURE_SLOTS,
  generatorWith,
  goodDraft,
  PLANTED_SECRETS,
  seedPendingRun,
  setUpStore,
} from './fixtures.ts';

const API_KEY = `${ANTHROPIC_KEY_PREFIX}test-KEY-used-by-the-engine-0001`;
const MODEL = 'claude-test-model';

let fake: AnthropicFake;
let bed: ClaudeTestBed;

beforeAll(async () => {
  [fake, bed] = await Promise.all([startAnthropicFake(), setUpStore()]);
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
});

/** A claude-v1 engine against the fake, with a budget small enough for tests. */
function engine(overrides: Partial<AnthropicClaudeV1Options> = {}) {
  return createClaudeV1({
    keys: staticApiKeySource(API_KEY),
    baseURL: fake.url,
    model: MODEL,
    maxTokens: 2_048,
    timeBudgetMs: 5_000,
    requestTimeoutMs: 2_000,
    maxRetries: 2,
    backoff: { initialMs: 10, maxMs: 50 },
    ...overrides,
  });
}

/** Generates the seeded run with `options` and returns it as stored, with its proposed configuration. */
async function generate(options: Partial<AnthropicClaudeV1Options> = {}) {
  const seeded = await seedPendingRun(bed);
  const generateRun = generatorWith(bed, engine(options));
  const result = await generateRun({ runId: seeded.run.id, jobId: seeded.run.jobId });
  const outcome = result.outcome;
  const run = await bed.runs.get(seeded.run.id);
  if (run === null) throw new Error('the run disappeared');
  const proposed =
    run.proposedConfigurationId === null
      ? null
      : await bed.pipelines.getConfiguration(run.pipelineId, run.proposedConfigurationId);
  return { outcome, result, run, proposed, seeded, generateRun };
}

const settingsOf = (slots: { id: string; settings: Record<string, unknown> }[] | undefined, id: string) =>
  slots?.find((slot) => slot.id === id)?.settings;

const warningTypes = (run: { structuredWarnings: { type: string }[] }) =>
  run.structuredWarnings.map((w) => w.type);

describe('claude-v1 with a well-formed reply', () => {
  it('maps the cited numbers to signal ids, stores the patched configuration and records the usage', async () => {
    fake.script(toolReply(goodDraft(), { inputTokens: 3_210, outputTokens: 456 }));

    const { outcome, run, proposed } = await generate();

    expect(outcome).toBe('generated');
    expect(run).toMatchObject({
      status: 'generated',
      synthesisHandler: 'claude-v1',
      errorMessage: null,
      // Finding 2 reports truncation in "answer-model", whose 10 runs all succeeded: contradicted, so low.
      confidence: 'low',
      usage: {
        model: MODEL,
        inputTokens: 3_210,
        cacheReadInputTokens: 0,
        cacheWriteInputTokens: 0,
        outputTokens: 456,
        attempts: 1,
      },
    });
    expect(run.diagnosis?.findings).toEqual([
      {
        id: '1',
        description: 'Retrieval times out after 1500 ms.',
        // Signal [1] stands for its four repeats in the window: the finding cites every one it counts.
        signalIds: ['timeout-5', 'timeout-4', 'timeout-3', 'timeout-2', 'timeout-1'],
        executionIds: ['exec-9', 'exec-6'],
      },
      {
        id: '2',
        description: 'Answers stop at max_tokens.',
        signalIds: ['trunc-3', 'trunc-2', 'trunc-1'],
        executionIds: [],
      },
    ]);
    // What the findings count, the run read: the shown signals and every repeat cited for them.
    expect(run.analyzedSignalIds).toEqual([
      'timeout-5',
      'trunc-3',
      'leaky-feedback',
      'timeout-4',
      'timeout-3',
      'timeout-2',
      'timeout-1',
      'trunc-2',
      'trunc-1',
    ]);
    expect(run.analyzedExecutionIds).toEqual(Array.from({ length: 10 }, (_, i) => `exec-${9 - i}`));
    expect(run.changes.map((change) => [change.id, change.slotId, change.findingIds])).toEqual([
      ['1', 'retrieve', ['1']],
      ['2', 'answer-model', ['2']],
    ]);
    expect(run.structuredWarnings).toEqual([
      { type: 'speculative_change', message: 'The token budget is a guess.', changeIds: ['2'] },
      {
        type: 'contradicted_evidence',
        message:
          'The run history contradicts finding 2 (finding 2 reports failures in slot "answer-model", where 10 of the 10 recent runs succeeded). It weakens change 2.',
        changeIds: ['2'],
      },
    ]);
    expect(run.warnings[0]).toBe('The token budget is a guess.');
    expect(proposed).toMatchObject({ version: 2, source: 'synthesis', synthesisRunId: run.id });
    expect(settingsOf(proposed?.slots, 'retrieve')).toEqual({ topK: 8, timeoutMs: 4000 });
    // The secret the model never saw is kept as it was, not replaced by the redaction marker.
    expect(settingsOf(proposed?.slots, 'answer-model')).toEqual({
      ...FIXTURE_SLOTS[2]?.settings,
      maxTokens: 1024,
    });
  });

  it('sends one forced submit_synthesis call with the generated schema, numbered signals and no secrets', async () => {
    fake.script(toolReply(goodDraft()));

    await generate();

    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request?.path).toBe('/v1/messages');
    expect(request?.headers.authorization ?? request?.headers['x-api-key']).toContain(API_KEY);
    const body = request?.body;
    expect(body).toMatchObject({ model: MODEL, max_tokens: 2_048 });
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'submit_synthesis' });
    expect(body.tools).toHaveLength(1);
    expect(body.tools[0].name).toBe('submit_synthesis');
    expect(body.tools[0].input_schema).toEqual(synthesisDraftJsonSchema());
    expect(body.messages).toHaveLength(1);
    const prompt: string = promptText(body);
    expect(prompt).toMatch(/^\[1\] critical \| timeout \| slot "retrieve" \| .+ \| ×5$/m);
    expect(prompt).toMatch(/^\[2\] warning \| truncation \| slot "answer-model" \| .+ \| ×3$/m);
    expect(prompt).toMatch(/^\[3\] info \| feedback \| /m);
    expect(prompt).not.toContain('[4]');
    expect(prompt).toContain('Slot "retrieve" (kind retrieval');
    expect(prompt).toMatch(/^ {2}settings: \{("topK":8,"timeoutMs":1500|"timeoutMs":1500,"topK":8)\}$/m);
    expect(prompt).toContain('The 10 most recent runs');
    expect(prompt).toMatch(
      /slot "retrieve": 10 runs, 4 failed \(40%\); p50 \d+ ms, p90 \d+ ms, p99 \d+ ms; errors: "Retrieval timed out after # ms \(query #\)" ×4/,
    );
    for (const secret of [API_KEY, ...Object.values(PLANTED_SECRETS)]) {
      expect(request?.raw).not.toContain(secret);
    }
    expect(prompt).toContain('"apiKey":"[redacted]"');
  });
});

describe('claude-v1 drops what does not resolve, with a warning naming it', () => {
  it('drops signal references beyond the shown signals', async () => {
    const draft = goodDraft();
    draft.diagnosis.findings[0] = { id: '1', description: 'Timeouts.', signalRefs: [1, 99, 0] };
    fake.script(toolReply(draft));

    const { run } = await generate();

    expect(run.status).toBe('generated');
    expect(run.diagnosis?.findings[0]?.signalIds).toEqual([
      'timeout-5',
      'timeout-4',
      'timeout-3',
      'timeout-2',
      'timeout-1',
    ]);
    const dropped = run.structuredWarnings.find((warning) => warning.type === 'dropped_signal_reference');
    expect(dropped?.message).toContain('[99], [0]');
    expect(dropped?.message).toContain('only 3 signals were shown');
  });

  it('ends a reply proposing no change as a generated run with nothing to approve', async () => {
    fake.script(toolReply({ ...goodDraft(), changes: [], warnings: [] }));

    const { outcome, run, proposed } = await generate();

    expect(outcome).toBe('generated');
    expect(run).toMatchObject({ status: 'generated', changes: [], proposedConfigurationId: null });
    expect(proposed).toBeNull();
    expect(warningTypes(run)).toContain('no_changes');
  });

  it('drops a change to a slot that is not in the base configuration', async () => {
    const draft = goodDraft();
    draft.changes[0] = { ...(draft.changes[0] as (typeof draft.changes)[number]), slotId: 'reranker' };
    fake.script(toolReply(draft));

    const { run, proposed } = await generate();

    expect(run.status).toBe('generated');
    expect(run.changes.map((change) => change.slotId)).toEqual(['answer-model']);
    expect(warningTypes(run)).toContain('unknown_slot');
    expect(run.structuredWarnings.find((w) => w.type === 'unknown_slot')?.message).toContain('"reranker"');
    expect(settingsOf(proposed?.slots, 'retrieve')).toEqual({ topK: 8, timeoutMs: 1500 });
  });

  it('drops references to findings that do not exist, and a change left citing none', async () => {
    const draft = goodDraft();
    draft.changes[0] = { ...(draft.changes[0] as (typeof draft.changes)[number]), findingIds: ['1', '7'] };
    draft.changes[1] = { ...(draft.changes[1] as (typeof draft.changes)[number]), findingIds: ['9'] };
    fake.script(toolReply(draft));

    const { run, proposed } = await generate();

    expect(run.status).toBe('generated');
    expect(run.changes).toHaveLength(1);
    expect(run.changes[0]).toMatchObject({ id: '1', findingIds: ['1'] });
    expect(warningTypes(run)).toEqual(
      expect.arrayContaining(['unknown_finding', 'uncited_change', 'dropped_change_reference']),
    );
    expect(run.structuredWarnings.find((w) => w.type === 'unknown_finding')?.message).toContain('finding 7');
    expect(run.structuredWarnings.find((w) => w.type === 'uncited_change')?.message).toContain('finding 9');
    expect(settingsOf(proposed?.slots, 'answer-model')?.maxTokens).toBe(256);
  });

  it('drops a change that would overwrite a redacted secret with the redaction marker', async () => {
    const draft = goodDraft();
    draft.changes[1] = {
      ...(draft.changes[1] as (typeof draft.changes)[number]),
      patch: { maxTokens: 1024, apiKey: '[redacted]' },
    };
    fake.script(toolReply(draft));

    const { run, proposed } = await generate();

    expect(run.changes.map((change) => change.id)).toEqual(['1']);
    expect(run.structuredWarnings.find((w) => w.type === 'invalid_patch')?.message).toContain('apiKey');
    expect(settingsOf(proposed?.slots, 'answer-model')?.apiKey).toBe(PLANTED_SECRETS.slotApiKey);
  });
});

describe('claude-v1 repairs a reply that breaks the schema once', () => {
  it('shows the model its errors as the failed tool call’s result, and uses the repaired reply', async () => {
    const broken = {
      diagnosis: { findings: [{ id: 'one', description: 'x', signalRefs: [1] }] },
      changes: [],
    };
    fake.script(
      toolReply(broken, { inputTokens: 1_000, outputTokens: 100 }),
      toolReply(goodDraft(), { inputTokens: 1_500, outputTokens: 300 }),
    );

    const { run } = await generate();

    expect(run.status).toBe('generated');
    expect(run.usage).toEqual({
      model: MODEL,
      inputTokens: 2_500,
      cacheReadInputTokens: 0,
      cacheWriteInputTokens: 0,
      outputTokens: 400,
      attempts: 2,
    });
    expect(fake.requests).toHaveLength(2);
    const [first, repair] = fake.requests.map((request) => request.body);
    expect(repair.tool_choice).toEqual({ type: 'tool', name: 'submit_synthesis' });
    expect(repair.tools).toEqual(first.tools);
    expect(repair.messages).toHaveLength(3);
    expect(repair.messages[0]).toEqual(first.messages[0]);
    const toolUse = repair.messages[1].content.find((block: { type: string }) => block.type === 'tool_use');
    expect(repair.messages[1].role).toBe('assistant');
    expect(toolUse).toMatchObject({ name: 'submit_synthesis', input: broken });
    expect(repair.messages[2].role).toBe('user');
    const [result] = repair.messages[2].content;
    expect(result).toMatchObject({ type: 'tool_result', tool_use_id: toolUse.id, is_error: true });
    expect(result.content).toContain('diagnosis.summary');
    expect(result.content).toContain('diagnosis.findings.0.id');
    expect(result.content).toContain('warnings');
  });

  it('asks a reply without the tool call to call it, in a plain user turn', async () => {
    fake.script(textReply('Here is my analysis: retrieval is slow.'), toolReply(goodDraft()));

    const { run } = await generate();

    expect(run.status).toBe('generated');
    const repair = fake.requests[1]?.body;
    expect(repair.messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'Here is my analysis: retrieval is slow.' }],
    });
    expect(repair.messages[2].content).toContain('did not call submit_synthesis');
  });

  it('fails the run with a clear message when the repaired reply breaks the schema too', async () => {
    fake.script(toolReply({ diagnosis: 'none' }), toolReply({ changes: 'still wrong' }));

    const { outcome, run } = await generate();

    expect(outcome).toBe('failed');
    expect(fake.requests).toHaveLength(2);
    // The two paid calls are on record even though the run failed.
    expect(run).toMatchObject({
      status: 'failed',
      proposedConfigurationId: null,
      usage: {
        model: 'claude-test-model',
        attempts: 2,
        inputTokens: 2000,
        cacheReadInputTokens: 0,
        cacheWriteInputTokens: 0,
        outputTokens: 400,
      },
    });
    expect(run.errorMessage).toMatch(
      /^The model's reply did not match the submit_synthesis schema, even after one repair attempt: .*diagnosis/,
    );
  });
});

describe('claude-v1 retries transient failures inside its time budget, then hands them to the queue', () => {
  it('honours retry-after on 429, then succeeds', async () => {
    fake.script(rateLimited(1), toolReply(goodDraft()));

    const { run } = await generate();

    expect(run.status).toBe('generated');
    expect(run.usage?.attempts).toBe(2);
    const [first, second] = fake.requests;
    // The backoff configured here is 10 ms, so a gap of a second can only come from retry-after.
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(900);
  });

  it.each([
    ['529 overloaded', overloaded()],
    ['500 server error', serverError()],
  ])('retries after %s, then succeeds', async (_label, failure) => {
    fake.script(failure, toolReply(goodDraft(), { inputTokens: 700, outputTokens: 70 }));

    const { run } = await generate();

    expect(run.status).toBe('generated');
    // A failed request costs nothing but counts as an attempt.
    expect(run.usage).toEqual({
      model: MODEL,
      inputTokens: 700,
      cacheReadInputTokens: 0,
      cacheWriteInputTokens: 0,
      outputTokens: 70,
      attempts: 2,
    });
    expect(fake.requests).toHaveLength(2);
  });

  it('asks the queue to retry the job when the API stays overloaded through every retry', async () => {
    fake.script(overloaded(), overloaded(), overloaded());

    const { outcome, run, result } = await generate({ maxRetries: 2 });

    expect(outcome).toBe('retry');
    expect(fake.requests).toHaveLength(3);
    // Released for its retry, saying why it is late.
    expect(run).toMatchObject({
      status: 'pending',
      errorMessage: null,
      retryReason: 'The model API was overloaded (HTTP 529) on 3 attempts of the request.',
    });
    expect(result).toMatchObject({ error: { name: 'TransientSynthesisError' } });
  });

  it('asks the queue to retry the job when the API stays overloaded until the time budget is spent', async () => {
    fake.script(...Array.from({ length: 200 }, () => overloaded()));

    const { outcome, run } = await generate({
      maxRetries: 10,
      timeBudgetMs: 600,
      backoff: { initialMs: 100, maxMs: 100 },
    });

    expect(outcome).toBe('retry');
    expect(run.retryReason).toMatch(
      /^The model API was overloaded \(HTTP 529\), and the 0\.6 s time budget of the attempt was spent after \d+ requests?\.$/,
    );
    expect(fake.requests.length).toBeLessThan(11);
  });

  it('hands a retry-after beyond the budget to the queue, as the delay before the next attempt', async () => {
    fake.script(rateLimited(120));

    const { run, result } = await generate();

    expect(fake.requests).toHaveLength(1);
    expect(run.status).toBe('pending');
    expect(run.retryReason).toContain('was rate limited (HTTP 429) and asked to retry after 120 s');
    expect(result).toMatchObject({ outcome: 'retry', retryAfterSeconds: 120 });
  });

  it('asks the queue to retry the job when the API hangs past the request timeout on every attempt', async () => {
    fake.script(hang(), hang());

    const { outcome, run } = await generate({ requestTimeoutMs: 300, maxRetries: 1 });

    expect(outcome).toBe('retry');
    expect(fake.requests).toHaveLength(2);
    expect(run.retryReason).toBe('The model API timed out on 2 attempts of the request.');
  });

  it('asks the queue to retry the job when a hang outlasts the whole budget', async () => {
    fake.script(hang());

    const { outcome, run } = await generate({ requestTimeoutMs: 5_000, timeBudgetMs: 400 });

    expect(outcome).toBe('retry');
    expect(run.retryReason).toMatch(
      /^The model API timed out, and the 0\.4 s time budget of the attempt was spent/,
    );
  });
});

describe('claude-v1 fails runs it cannot generate, with the cause', () => {
  it('reports a refused request with the API’s message and does not retry it', async () => {
    fake.script(errorReply(404, 'not_found_error', 'model: claude-test-model'));

    const { run } = await generate();

    expect(fake.requests).toHaveLength(1);
    expect(run).toMatchObject({
      status: 'failed',
      errorMessage: 'The model API refused the request (HTTP 404: model: claude-test-model).',
    });
  });

  it('reports a rejected key without naming it, after one refresh of a key that cannot change', async () => {
    fake.script(unauthorized());

    const { run } = await generate();

    expect(fake.requests).toHaveLength(1);
    expect(run.errorMessage).toBe(
      'The model API rejected the API key (HTTP 401); store a valid key in ANTHROPIC_API_KEY and start a new run.',
    );
  });

  it('fails without calling the model when no key is configured', async () => {
    const { run } = await generate({ keys: undefined });

    expect(fake.requests).toHaveLength(0);
    expect(run.status).toBe('failed');
    expect(run.errorMessage).toContain('claude-v1 is not configured');
  });
});

describe('claude-v1 and redelivered jobs', () => {
  it('does not call the model again for a job whose run already finished', async () => {
    fake.script(toolReply(goodDraft()));
    const { run, generateRun, seeded } = await generate();
    expect(run.status).toBe('generated');

    fake.script(toolReply(goodDraft()));
    const again = await generateRun({ runId: seeded.run.id, jobId: seeded.run.jobId });

    expect(again).toMatchObject({ outcome: 'skipped', reason: 'finished' });
    expect(fake.requests).toHaveLength(1);
    expect(await bed.runs.get(seeded.run.id)).toEqual(run);
  });

  it('does not call the model again for a job whose run failed', async () => {
    fake.script(toolReply({}), toolReply({}));
    const { run, generateRun, seeded } = await generate();
    expect(run.status).toBe('failed');

    const again = await generateRun({ runId: seeded.run.id, jobId: seeded.run.jobId });

    expect(again).toMatchObject({ outcome: 'skipped', reason: 'finished' });
    expect(fake.requests).toHaveLength(2);
  });
});

describe('the fake in local-stack mode', () => {
  it('answers unscripted requests with a valid synthesis built from the prompt', async () => {
    const auto = await startAnthropicFake({ autoReply: true });
    try {
      const { run, proposed } = await generate({ baseURL: auto.url });

      expect(run.status).toBe('generated');
      expect(run.diagnosis?.findings[0]?.signalIds).toEqual([
        'timeout-5',
        'trunc-3',
        'leaky-feedback',
        'timeout-4',
        'timeout-3',
        'timeout-2',
        'timeout-1',
        'trunc-2',
        'trunc-1',
      ]);
      expect(run.analyzedSignalIds).toEqual(
        expect.arrayContaining(run.diagnosis?.findings[0]?.signalIds ?? []),
      );
      expect(run.changes).toMatchObject([{ slotId: 'answer-model', patch: { temperature: 0.45 } }]);
      expect(settingsOf(proposed?.slots, 'answer-model')?.temperature).toBe(0.45);
    } finally {
      await auto.close();
    }
  });
});

describe('the prompt bound', () => {
  it('keeps the fixture prompt far below the bound', async () => {
    fake.script(toolReply(goodDraft()));
    await generate();
    const raw = fake.requests[0]?.raw ?? '';
    // The request body over-counts the prompt (JSON escaping, field names), so this is conservative.
    expect(Math.ceil(Buffer.byteLength(raw) / 3)).toBeLessThan(PROMPT_LIMITS.maxInputTokens);
  });
});
