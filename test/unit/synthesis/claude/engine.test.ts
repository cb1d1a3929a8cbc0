import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SynthesisFailure, TransientSynthesisError } from '../../../../lambdas/core/errors.ts';
import { createClaudeV1 } from '../../../../lambdas/synthesis/claude/engine.ts';
import { buildSynthesisPrompt, SYSTEM_PROMPT } from '../../../../lambdas/synthesis/claude/prompt.ts';
import { SUBMIT_SYNTHESIS_TOOL } from '../../../../lambdas/synthesis/claude/tool.ts';
import {
  errorReply,
  type FakeReply,
  hang,
  overloaded,
  rateLimited,
  serverError,
  toolReply,
  unauthorized,
} from '../../../support/anthropic-fake.ts';
import {
  API_KEY,
  context,
  countingKeys,
  engineAt,
  goodDraft,
  MODEL,
  ROTATED_KEY,
  SLOT_SECRET,
  settle,
  useAnthropicFake,
} from './harness.ts';

/**
 * claude-v1 as a run sees it: the requests it sends, the proposal it returns, and for every
 * refused, failing or slow request the error that fails the run (SynthesisFailure) or hands the
 * job back to the queue (TransientSynthesisError), with the number of model calls made.
 */

const fakeApi = useAnthropicFake();
const engine = (overrides: Parameters<typeof engineAt>[1] = {}) => engineAt(fakeApi().url, overrides);

afterEach(() => {
  vi.restoreAllMocks();
});

/** Generates the default context and returns what it settled with, the requests and the log. */
async function run(overrides: Parameters<typeof engineAt>[1] = {}, ...replies: FakeReply[]) {
  fakeApi().script(...replies);
  const { engine: claude, events } = engine(overrides);
  const started = Date.now();
  const outcome = await settle(claude.generate(context()));
  return { ...outcome, events, requests: [...fakeApi().requests], elapsedMs: Date.now() - started };
}

/** The key a request carried (the SDK sends it as x-api-key or as a bearer token). */
const keyOf = (request: { headers: Record<string, string | string[] | undefined> } | undefined) =>
  String(request?.headers['x-api-key'] ?? request?.headers.authorization ?? '').replace(/^Bearer /, '');

const gapMs = (requests: { receivedAt: number }[], index: number) =>
  (requests[index]?.receivedAt ?? 0) - (requests[index - 1]?.receivedAt ?? 0);

/** A reply whose body the test writes itself (usage fields, content blocks, stop reason). */
const message = (body: Record<string, unknown>): FakeReply => ({
  kind: 'message',
  body: {
    id: 'msg_unit',
    type: 'message',
    role: 'assistant',
    model: MODEL,
    content: [{ type: 'tool_use', id: 'toolu_unit', name: 'submit_synthesis', input: goodDraft() }],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5 },
    ...body,
  },
});

describe('claude-v1 with a well-formed reply', () => {
  it('maps the cited numbers to ids, applies the patch and reports what the call cost', async () => {
    const { value, requests } = await run(
      {},
      toolReply(goodDraft(), { inputTokens: 1_200, outputTokens: 300 }),
    );

    expect(requests).toHaveLength(1);
    expect(value?.diagnosis).toEqual({
      summary: 'Retrieval times out at 1.5 s.',
      findings: [
        {
          id: '1',
          description: 'Retrieval times out after 1500 ms.',
          signalIds: ['timeout-2', 'timeout-1'],
          executionIds: ['run-4'],
        },
      ],
    });
    expect(value?.changes).toMatchObject([{ id: '1', slotId: 'retrieve', findingIds: ['1'] }]);
    expect(value?.proposedSlots.map((slot) => [slot.id, slot.settings])).toEqual([
      ['retrieve', { topK: 8, timeoutMs: 4000 }],
      ['answer', { model: 'some-model', temperature: 0.9, maxTokens: 256, apiKey: SLOT_SECRET }],
    ]);
    // The shown signals, then the repeat finding 1 cites for [1]: the counts and the ids agree.
    expect(value?.analyzedSignalIds).toEqual(['timeout-2', 'trunc-1', 'timeout-1']);
    expect(value?.analyzedExecutionIds).toEqual(['run-4', 'run-3', 'run-2', 'run-1']);
    expect(value?.usage).toEqual({
      model: MODEL,
      inputTokens: 1_200,
      cacheReadInputTokens: 0,
      cacheWriteInputTokens: 0,
      outputTokens: 300,
      attempts: 1,
    });
  });

  it('sends one forced submit_synthesis call carrying the prompt, with the key in its header and no secret', async () => {
    const { requests } = await run({}, toolReply(goodDraft()));

    const [request] = requests;
    expect(request?.path).toBe('/v1/messages');
    expect(keyOf(request)).toBe(API_KEY);
    expect(request?.body).toEqual({
      model: MODEL,
      max_tokens: 2_048,
      system: [{ type: 'text', text: SYSTEM_PROMPT, cache_control: { type: 'ephemeral' } }],
      tools: [JSON.parse(JSON.stringify(SUBMIT_SYNTHESIS_TOOL))],
      tool_choice: { type: 'tool', name: 'submit_synthesis' },
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'text',
              text: buildSynthesisPrompt(context()).user,
              cache_control: { type: 'ephemeral' },
            },
          ],
        },
      ],
    });
    expect(request?.raw).not.toContain(SLOT_SECRET);
  });

  it('counts cached input tokens as input, over every request of the run', async () => {
    const { value } = await run(
      {},
      overloaded(),
      message({
        usage: {
          input_tokens: 100,
          cache_creation_input_tokens: 20,
          cache_read_input_tokens: 3,
          output_tokens: 7,
        },
      }),
    );

    expect(value?.usage).toEqual({
      model: MODEL,
      inputTokens: 123,
      cacheReadInputTokens: 3,
      cacheWriteInputTokens: 20,
      outputTokens: 7,
      attempts: 2,
    });
  });

  it('logs the cost under log-safe names, and never the key or the prompt', async () => {
    const { events } = await run({}, toolReply(goodDraft(), { inputTokens: 900, outputTokens: 90 }));

    expect(events).toEqual([
      {
        message: 'model synthesis generated',
        details: {
          cost: { model: MODEL, input: 900, output: 90, attempts: 1 },
          estimatedPromptSize: buildSynthesisPrompt(context()).estimatedTokens,
        },
      },
    ]);
    const logged = JSON.stringify(events);
    expect(logged).not.toContain(API_KEY);
    expect(logged).not.toContain('Retrieval timed out');
  });

  it('runs without a logger and with the default backoff', async () => {
    const { value, requests } = await run(
      { log: undefined, backoff: undefined },
      overloaded(),
      toolReply(goodDraft()),
    );

    expect(value?.usage?.attempts).toBe(2);
    // The default backoff starts at 500 ms, less up to a quarter of jitter.
    expect(gapMs(requests, 1)).toBeGreaterThanOrEqual(370);
  });

  it('serves several runs, each with its own usage', async () => {
    fakeApi().script(toolReply(goodDraft(), { inputTokens: 10, outputTokens: 1 }));
    fakeApi().script(toolReply(goodDraft(), { inputTokens: 20, outputTokens: 2 }));
    const { engine: claude } = engine();

    const first = await claude.generate(context());
    const second = await claude.generate(context());

    expect(first.usage).toEqual({
      model: MODEL,
      inputTokens: 10,
      cacheReadInputTokens: 0,
      cacheWriteInputTokens: 0,
      outputTokens: 1,
      attempts: 1,
    });
    expect(second.usage).toEqual({
      model: MODEL,
      inputTokens: 20,
      cacheReadInputTokens: 0,
      cacheWriteInputTokens: 0,
      outputTokens: 2,
      attempts: 1,
    });
    expect(claude.name).toBe('claude-v1');
  });
});

describe('claude-v1 without a key', () => {
  it('fails the run without calling the model, saying how to configure it', async () => {
    const { error, requests } = await run({ keys: undefined });

    expect(requests).toHaveLength(0);
    expect(error).toBeInstanceOf(SynthesisFailure);
    expect((error as Error).message).toBe(
      'claude-v1 is not configured: no Anthropic API key (set ANTHROPIC_API_KEY locally, or ' +
        'ANTHROPIC_SECRET_ARN on AWS). Start the run with synthesisHandler "heuristic-v1" instead.',
    );
  });

  it('passes on an error of the key source as it is, without a model call', async () => {
    const keys = {
      ...countingKeys(),
      get: async () => Promise.reject(new Error('secret store unreachable')),
    };

    const { error, requests, events } = await run({ keys });

    expect((error as Error).message).toBe('secret store unreachable');
    expect(error).not.toBeInstanceOf(SynthesisFailure);
    expect(error).not.toBeInstanceOf(TransientSynthesisError);
    expect(requests).toHaveLength(0);
    expect(events).toEqual([]);
  });
});

describe('claude-v1 fails a run the API refuses, after exactly one call', () => {
  it.each([
    [400, 'invalid_request_error', 'max_tokens: too large'],
    [403, 'permission_error', 'Your key cannot use this model'],
    [404, 'not_found_error', 'model: claude-unit-model'],
    [413, 'request_too_large', 'Request exceeds the maximum size'],
  ])('HTTP %i: the run fails with the API’s message', async (status, type, text) => {
    const { error, requests, events } = await run({}, errorReply(status, type, text), toolReply(goodDraft()));

    expect(requests).toHaveLength(1);
    expect(error).toBeInstanceOf(SynthesisFailure);
    expect((error as Error).message).toBe(`The model API refused the request (HTTP ${status}: ${text}).`);
    expect((error as SynthesisFailure).usage).toEqual({
      model: MODEL,
      inputTokens: 0,
      cacheReadInputTokens: 0,
      cacheWriteInputTokens: 0,
      outputTokens: 0,
      attempts: 1,
    });
    expect(events).toEqual([
      {
        message: 'model synthesis failed',
        details: {
          cost: { model: MODEL, input: 0, output: 0, attempts: 1 },
          reason: (error as Error).message,
        },
      },
    ]);
  });

  it('omits the detail when the API sends no message, and shortens a long one', async () => {
    const bare = await run({}, { kind: 'error', status: 403, errorType: 'permission_error' } as FakeReply);
    const long = await run({}, errorReply(400, 'invalid_request_error', `bad ${'x'.repeat(1_000)}`));

    expect((bare.error as Error).message).toBe('The model API refused the request (HTTP 403).');
    const detail = (long.error as Error).message.match(
      /^The model API refused the request \(HTTP 400: (.*)\)\.$/,
    )?.[1];
    expect(detail).toMatch(/^bad x+…\[truncated \d+ bytes\]$/);
    expect(Buffer.byteLength(detail ?? '')).toBeLessThanOrEqual(300);
    expect(Buffer.byteLength(detail ?? '')).toBeGreaterThan(250);
  });

  it('does not retry a server error the API says not to retry', async () => {
    const { error, requests } = await run(
      {},
      errorReply(500, 'api_error', 'do not retry', { 'x-should-retry': 'false' }),
      toolReply(goodDraft()),
    );

    expect(requests).toHaveLength(1);
    expect(error).toBeInstanceOf(SynthesisFailure);
    expect((error as Error).message).toBe('The model API refused the request (HTTP 500: do not retry).');
  });
});

describe('claude-v1 and a reply that is not JSON', () => {
  it('passes on the parse error instead of blaming the API, after one call', async () => {
    let calls = 0;
    const garbled = createServer((request, response) => {
      calls += 1;
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{"id": "msg_1", "content": [');
      });
    });
    await new Promise<void>((resolve) => garbled.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = garbled.address() as AddressInfo;
      const { engine: claude } = engineAt(`http://127.0.0.1:${port}`);

      const { error } = await settle(claude.generate(context()));

      expect(calls).toBe(1);
      // The worker reports it as an internal error (SyntaxError), not as a refusal by the API.
      expect(error).toBeInstanceOf(SyntaxError);
      expect((error as Error).message).toMatch(/JSON/);
    } finally {
      garbled.closeAllConnections();
      await new Promise<void>((resolve) => garbled.close(() => resolve()));
    }
  });
});

describe('claude-v1 and a rejected key', () => {
  it('reads the key again once, and fails naming where the key is configured when it did not change', async () => {
    const keys = countingKeys();

    const { error, requests } = await run({ keys }, unauthorized(), toolReply(goodDraft()));

    expect(requests).toHaveLength(1);
    expect(keys.refreshes).toBe(1);
    expect(error).toBeInstanceOf(SynthesisFailure);
    expect((error as Error).message).toBe(
      'The model API rejected the API key (HTTP 401); store a valid key in UNIT_KEY_SETTING and start a new run.',
    );
    expect((error as Error).message).not.toContain(API_KEY);
  });

  it('retries with a rotated key and succeeds', async () => {
    const keys = countingKeys(API_KEY, ROTATED_KEY);

    const { value, requests } = await run({ keys }, unauthorized(), toolReply(goodDraft()));

    expect(value?.usage?.attempts).toBe(2);
    expect(requests.map(keyOf)).toEqual([API_KEY, ROTATED_KEY]);
    expect(keys.refreshes).toBe(1);
  });

  it('refreshes once per run: a rotated key that is rejected too fails the run', async () => {
    const keys = countingKeys(API_KEY, ROTATED_KEY);

    const { error, requests } = await run({ keys }, unauthorized(), unauthorized(), toolReply(goodDraft()));

    expect(requests).toHaveLength(2);
    expect(keys.refreshes).toBe(1);
    expect((error as Error).message).toMatch(/^The model API rejected the API key \(HTTP 401\)/);
  });

  it('passes on a failed refresh', async () => {
    const keys = countingKeys(API_KEY, () => Promise.reject(new Error('secret deleted')));

    const { error, requests } = await run({ keys }, unauthorized());

    expect(requests).toHaveLength(1);
    expect((error as Error).message).toBe('secret deleted');
  });
});

describe('claude-v1 retries transient failures, then hands them to the queue', () => {
  it.each([
    ['rate limited (HTTP 429)', rateLimited(), 'rate_limited', 429],
    ['overloaded (HTTP 529)', overloaded(), 'overloaded', 529],
    ['server error (HTTP 500)', serverError(), 'server_error', 500],
  ])(
    'retries after %s, then succeeds; the failed call counts as an attempt',
    async (_label, failure, cause, status) => {
      const { value, requests, events } = await run(
        {},
        failure,
        toolReply(goodDraft(), { inputTokens: 700, outputTokens: 70 }),
      );

      expect(requests).toHaveLength(2);
      expect(value?.usage).toEqual({
        model: MODEL,
        inputTokens: 700,
        cacheReadInputTokens: 0,
        cacheWriteInputTokens: 0,
        outputTokens: 70,
        attempts: 2,
      });
      expect(events[0]).toEqual({
        message: 'model request failed',
        details: { cause, status, attempt: 1, remainingMs: expect.any(Number) },
      });
      const remaining = events[0]?.details.remainingMs as number;
      expect(remaining).toBeGreaterThan(3_000);
      expect(remaining).toBeLessThanOrEqual(5_000);
    },
  );

  it.each([
    ['The model API was rate limited (HTTP 429) on 1 attempt of the request.', rateLimited()],
    ['The model API was overloaded (HTTP 529) on 1 attempt of the request.', overloaded()],
    [
      'The model API failed with a server error (HTTP 503) on 1 attempt of the request.',
      errorReply(503, 'api_error', 'unavailable'),
    ],
    [
      'The model API failed with a server error (HTTP 409) on 1 attempt of the request.',
      errorReply(409, 'conflict_error', 'conflict'),
    ],
    ['The model API timed out on 1 attempt of the request.', errorReply(408, 'timeout_error', 'slow')],
    [
      'The model API failed with a server error (HTTP 400) on 1 attempt of the request.',
      errorReply(400, 'invalid_request_error', 'try again', { 'x-should-retry': 'true' }),
    ],
  ])('with no retries left, hands the job to the queue: %s', async (reason, failure) => {
    const { error, requests, events } = await run({ maxRetries: 0 }, failure, toolReply(goodDraft()));

    expect(requests).toHaveLength(1);
    expect(error).toBeInstanceOf(TransientSynthesisError);
    expect((error as TransientSynthesisError).message).toBe(reason);
    expect((error as TransientSynthesisError).retryAfterSeconds).toBeUndefined();
    expect((error as TransientSynthesisError).usage).toEqual({
      model: MODEL,
      inputTokens: 0,
      cacheReadInputTokens: 0,
      cacheWriteInputTokens: 0,
      outputTokens: 0,
      attempts: 1,
    });
    expect(events.at(-1)).toEqual({
      message: 'model synthesis will be retried',
      details: { cost: { model: MODEL, input: 0, output: 0, attempts: 1 }, reason },
    });
  });

  it('stops after maxRetries retries of one request', async () => {
    const { error, requests } = await run(
      { maxRetries: 2 },
      overloaded(),
      overloaded(),
      overloaded(),
      toolReply(goodDraft()),
    );

    expect(requests).toHaveLength(3);
    expect((error as Error).message).toBe(
      'The model API was overloaded (HTTP 529) on 3 attempts of the request.',
    );
  });

  it('hands an unreachable API to the queue', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const { engine: claude } = engineAt(`http://127.0.0.1:${port}`, { maxRetries: 1 });

    const { error } = await settle(claude.generate(context()));

    expect(error).toBeInstanceOf(TransientSynthesisError);
    expect((error as Error).message).toBe('The model API could not be reached on 2 attempts of the request.');
    expect((error as TransientSynthesisError).usage?.attempts).toBe(2);
  });

  it('times a hanging request out after requestTimeoutMs and retries it', async () => {
    const { error, requests } = await run({ requestTimeoutMs: 200, maxRetries: 1 }, hang(), hang());

    expect(requests).toHaveLength(2);
    expect((error as Error).message).toBe('The model API timed out on 2 attempts of the request.');
  });

  it('gives up when a hang outlasts the whole budget, at the budget and not the request timeout', async () => {
    const { error, requests, elapsedMs } = await run({ requestTimeoutMs: 4_000, timeBudgetMs: 400 }, hang());

    expect(requests).toHaveLength(1);
    expect(error).toBeInstanceOf(TransientSynthesisError);
    expect((error as Error).message).toBe(
      'The model API timed out, and the 0.4 s time budget of the attempt was spent after 1 request.',
    );
    expect(elapsedMs).toBeLessThan(2_500);
  });

  it('names the last failure when the budget runs out during a later request', async () => {
    const { error, requests } = await run(
      { requestTimeoutMs: 4_000, timeBudgetMs: 634 },
      overloaded(),
      hang(),
    );

    expect(requests).toHaveLength(2);
    expect((error as Error).message).toBe(
      'The model API was overloaded (HTTP 529), and the 0.6 s time budget of the attempt was spent after 2 requests.',
    );
  });

  it('gives up at once when the backoff would outlast the budget', async () => {
    const { error, requests, elapsedMs } = await run(
      { timeBudgetMs: 1_000, backoff: { initialMs: 5_000, maxMs: 5_000 } },
      overloaded(),
      toolReply(goodDraft()),
    );

    expect(requests).toHaveLength(1);
    expect(error).toBeInstanceOf(TransientSynthesisError);
    expect((error as Error).message).toBe(
      'The model API was overloaded (HTTP 529), and the 1 s time budget of the attempt was spent after 1 request.',
    );
    expect((error as TransientSynthesisError).retryAfterSeconds).toBeUndefined();
    expect(elapsedMs).toBeLessThan(900);
  });

  it('doubles the backoff with every retry', async () => {
    const { value, requests } = await run(
      { backoff: { initialMs: 200, maxMs: 10_000 } },
      overloaded(),
      overloaded(),
      toolReply(goodDraft()),
    );

    expect(value?.usage?.attempts).toBe(3);
    expect(gapMs(requests, 1)).toBeGreaterThanOrEqual(145);
    expect(gapMs(requests, 2)).toBeGreaterThanOrEqual(295);
  });

  it('caps the backoff at maxMs', async () => {
    const { value } = await run(
      { timeBudgetMs: 3_000, backoff: { initialMs: 10, maxMs: 4_000 } },
      overloaded(),
      toolReply(goodDraft()),
    );

    expect(value?.usage?.attempts).toBe(2);
  });

  it('takes up to a quarter off the backoff as jitter, never adds to it', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.99);

    const { value, requests } = await run(
      { timeBudgetMs: 600, backoff: { initialMs: 500, maxMs: 500 } },
      overloaded(),
      toolReply(goodDraft()),
    );

    // 500 ms × (1 − 0.99 × 0.25) ≈ 376 ms fits the 600 ms budget; 500 ms or more would not.
    expect(value?.usage?.attempts).toBe(2);
    expect(gapMs(requests, 1)).toBeGreaterThanOrEqual(370);
  });
});

describe('claude-v1 honours the wait the API asks for', () => {
  it('waits retry-after seconds, then succeeds', async () => {
    const { value, requests } = await run({}, rateLimited(1), toolReply(goodDraft()));

    expect(value?.usage?.attempts).toBe(2);
    expect(gapMs(requests, 1)).toBeGreaterThanOrEqual(950);
  });

  it('prefers retry-after-ms, even when it is 0', async () => {
    const { value, requests } = await run(
      { backoff: { initialMs: 2_000, maxMs: 2_000 } },
      errorReply(429, 'rate_limit_error', 'slow down', { 'retry-after-ms': '0', 'retry-after': '120' }),
      toolReply(goodDraft()),
    );

    expect(value?.usage?.attempts).toBe(2);
    expect(gapMs(requests, 1)).toBeLessThan(1_000);
  });

  it.each([['0'], ['0.0']])('retries at once after retry-after %s', async (seconds) => {
    const { value, requests } = await run(
      { backoff: { initialMs: 2_000, maxMs: 2_000 } },
      errorReply(429, 'rate_limit_error', 'slow down', { 'retry-after': seconds }),
      toolReply(goodDraft()),
    );

    expect(value?.usage?.attempts).toBe(2);
    expect(gapMs(requests, 1)).toBeLessThan(1_000);
  });

  it('waits retry-after-ms milliseconds', async () => {
    const { value, requests } = await run(
      {},
      errorReply(529, 'overloaded_error', 'Overloaded', { 'retry-after-ms': '300' }),
      toolReply(goodDraft()),
    );

    expect(value?.usage?.attempts).toBe(2);
    expect(gapMs(requests, 1)).toBeGreaterThanOrEqual(290);
  });

  it.each([
    ['an unreadable retry-after', { 'retry-after': 'soon' }],
    ['a negative retry-after', { 'retry-after': '-3.0' }],
    ['an endless retry-after', { 'retry-after': '1e400' }],
    ['a negative retry-after-ms', { 'retry-after-ms': '-5' }],
    ['an endless retry-after-ms', { 'retry-after-ms': 'Infinity' }],
  ])('falls back to the backoff after %s', async (_label, headers) => {
    const { value, requests } = await run(
      { backoff: { initialMs: 300, maxMs: 300 } },
      errorReply(429, 'rate_limit_error', 'slow down', headers),
      toolReply(goodDraft()),
    );

    expect(value?.usage?.attempts).toBe(2);
    expect(gapMs(requests, 1)).toBeGreaterThanOrEqual(220);
  });

  it('hands a wait that is exactly the budget left to the queue instead of waiting it out', async () => {
    // The clock stands still, so the budget left is exactly the 300 ms the API asks for.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const { error, requests } = await run(
        { timeBudgetMs: 300 },
        errorReply(429, 'rate_limit_error', 'slow down', { 'retry-after-ms': '300' }),
        toolReply(goodDraft()),
      );

      expect(requests).toHaveLength(1);
      expect(error).toBeInstanceOf(TransientSynthesisError);
      expect((error as Error).message).toBe(
        'The model API was rate limited (HTTP 429) and asked to retry after 1 s, beyond the 0.3 s time budget of the attempt.',
      );
      expect((error as TransientSynthesisError).retryAfterSeconds).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('reads retry-after as an HTTP date; a date in the past means now', async () => {
    const past = new Date(Date.now() - 60_000).toUTCString();

    const { value, requests } = await run(
      { backoff: { initialMs: 2_000, maxMs: 2_000 } },
      errorReply(429, 'rate_limit_error', 'slow down', { 'retry-after': past }),
      toolReply(goodDraft()),
    );

    expect(value?.usage?.attempts).toBe(2);
    expect(gapMs(requests, 1)).toBeLessThan(1_000);
  });

  it.each([
    ['retry-after seconds', () => ({ 'retry-after': '120' }), 120, 120],
    ['retry-after-ms', () => ({ 'retry-after-ms': '150500' }), 151, 151],
    ['an HTTP date', () => ({ 'retry-after': new Date(Date.now() + 125_000).toUTCString() }), 110, 125],
  ])('hands a wait beyond the budget (%s) to the queue as its delay', async (_label, headers, min, max) => {
    const { error, requests } = await run(
      {},
      errorReply(429, 'rate_limit_error', 'slow down', headers()),
      toolReply(goodDraft()),
    );

    expect(requests).toHaveLength(1);
    expect(error).toBeInstanceOf(TransientSynthesisError);
    const seconds = (error as TransientSynthesisError).retryAfterSeconds ?? 0;
    expect(seconds).toBeGreaterThanOrEqual(min);
    expect(seconds).toBeLessThanOrEqual(max);
    expect((error as Error).message).toBe(
      `The model API was rate limited (HTTP 429) and asked to retry after ${seconds} s, beyond the 5 s time budget of the attempt.`,
    );
  });
});

describe('claude-v1 and a slow key source', () => {
  it('fails like a slow API when reading the key outlasts the budget', async () => {
    const keys = {
      ...countingKeys(),
      get: (signal?: AbortSignal) =>
        new Promise<string>((_resolve, reject) => {
          signal?.addEventListener('abort', () => reject(new Error('aborted')));
        }),
    };

    const { error, requests } = await run({ keys, timeBudgetMs: 300 });

    expect(requests).toHaveLength(0);
    expect(error).toBeInstanceOf(TransientSynthesisError);
    expect((error as Error).message).toBe(
      'The model API did not answer in time, and the 0.3 s time budget of the attempt was spent after 0 requests.',
    );
  });

  it('makes no request when the key arrives after the budget is spent', async () => {
    const keys = {
      ...countingKeys(),
      get: () => new Promise<string>((resolve) => setTimeout(() => resolve(API_KEY), 400)),
    };

    const { error, requests } = await run({ keys, timeBudgetMs: 300 }, toolReply(goodDraft()));

    expect(requests).toHaveLength(0);
    expect((error as Error).message).toBe(
      'The model API did not answer in time, and the 0.3 s time budget of the attempt was spent after 0 requests.',
    );
    expect((error as TransientSynthesisError).usage?.attempts).toBe(0);
  });
});

describe('createClaudeV1', () => {
  it('builds an engine named claude-v1 without calling anything', () => {
    const claude = createClaudeV1({
      keys: countingKeys(),
      baseURL: fakeApi().url,
      model: MODEL,
      maxTokens: 100,
      timeBudgetMs: 1_000,
      requestTimeoutMs: 500,
      maxRetries: 0,
    });

    expect(claude.name).toBe('claude-v1');
    expect(fakeApi().requests).toHaveLength(0);
  });
});
