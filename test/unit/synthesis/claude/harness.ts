import { afterAll, afterEach, beforeAll, beforeEach, expect, vi } from 'vitest';
import type { SynthesisContext } from '../../../../lambdas/core/ports/synthesis.ts';
import type { Slot } from '../../../../lambdas/core/schemas/pipelines.ts';
import type { Execution, Signal } from '../../../../lambdas/core/schemas/records.ts';
import {
  type AnthropicClaudeV1Options,
  type ApiKeySource,
  createClaudeV1,
} from '../../../../lambdas/synthesis/claude/engine.ts';
import type { SynthesisDraft } from '../../../../lambdas/synthesis/draft.ts';
import { type AnthropicFake, startAnthropicFake } from '../../../support/anthropic-fake.ts';
import { ANTHROPIC_KEY_PREFIX } from '../../../support/fake-secrets.ts';

/**
 * Shared set-up of the claude-v1 unit tests: the engine against the local Messages API fake
 * (127.0.0.1 only: any other host is refused by a guard around fetch), an in-memory pipeline and a
 * key source that counts its reads. No DynamoDB: the engine's proposal is asserted directly.
 */

export const API_KEY = `${ANTHROPIC_KEY_PREFIX}unit-KEY-of-the-engine-000001`;
export const ROTATED_KEY = `${ANTHROPIC_KEY_PREFIX}unit-KEY-after-rotation-00002`;
export const MODEL = 'claude-unit-model';
/** A credential in the pipeline's own settings: it must never reach the model. */
export const SLOT_SECRET = `${ANTHROPIC_KEY_PREFIX}api03-SLOTsecret0123456789abcdef`;

export interface CountingKeys extends ApiKeySource {
  gets: number;
  refreshes: number;
}

/** A key source returning `key`, and `refreshed` (the same key by default) when asked to refresh. */
export function countingKeys(
  key = API_KEY,
  refreshed: string | (() => Promise<string>) = key,
  description = 'UNIT_KEY_SETTING',
): CountingKeys {
  const source: CountingKeys = {
    description,
    gets: 0,
    refreshes: 0,
    get: async () => {
      source.gets += 1;
      return key;
    },
    refresh: async () => {
      source.refreshes += 1;
      return typeof refreshed === 'string' ? refreshed : refreshed();
    },
  };
  return source;
}

export const SLOTS: Slot[] = [
  { id: 'retrieve', name: 'Retrieve documents', kind: 'retrieval', settings: { topK: 8, timeoutMs: 1500 } },
  {
    id: 'answer',
    name: 'Answer model',
    kind: 'model',
    settings: { model: 'some-model', temperature: 0.9, maxTokens: 256, apiKey: SLOT_SECRET },
  },
];

const at = (minute: number) => new Date(Date.UTC(2025, 2, 1, 9, minute)).toISOString();

/** [1] the newest of two critical retrieval timeouts, [2] a truncation warning of `answer`. */
export const SIGNALS: Signal[] = [
  {
    id: 'timeout-2',
    pipelineId: 'p-1',
    kind: 'timeout',
    severity: 'critical',
    message: 'Retrieval timed out after 1500 ms',
    slotId: 'retrieve',
    occurredAt: at(50),
  },
  {
    id: 'timeout-1',
    pipelineId: 'p-1',
    kind: 'timeout',
    severity: 'critical',
    message: 'Retrieval timed out after 1500 ms',
    slotId: 'retrieve',
    occurredAt: at(40),
  },
  {
    id: 'trunc-1',
    pipelineId: 'p-1',
    kind: 'truncation',
    severity: 'warning',
    message: 'stop_reason max_tokens',
    slotId: 'answer',
    occurredAt: at(30),
  },
];

/** Four runs, newest first; [E1] is run-4 (failed in retrieve), [E2] run-3. */
export const EXECUTIONS: Execution[] = [4, 3, 2, 1].map((n) => ({
  id: `run-${n}`,
  pipelineId: 'p-1',
  configurationId: 'c-1',
  status: n % 2 === 0 ? 'failed' : 'succeeded',
  durationMs: 1_000 + n,
  startedAt: at(n),
  ...(n % 2 === 0 ? { error: 'retrieve failed' } : {}),
  slotResults: [
    {
      slotId: 'retrieve',
      status: n % 2 === 0 ? 'failed' : 'succeeded',
      durationMs: 1_500,
      ...(n % 2 === 0 ? { error: 'Retrieval timed out after 1500 ms' } : {}),
    },
  ],
}));

export function context(parts: { slots?: Slot[]; signals?: Signal[]; executions?: Execution[] } = {}) {
  return {
    pipeline: {
      id: 'p-1',
      teamId: 't-1',
      name: 'answer bot',
      activeConfigurationId: 'c-1',
      createdAt: '2025-01-01T00:00:00Z',
    },
    baseConfiguration: {
      id: 'c-1',
      pipelineId: 'p-1',
      version: 1,
      slots: parts.slots ?? SLOTS,
      source: 'manual',
      createdAt: '2025-01-01T00:00:00Z',
      createdBy: 'u-1',
    },
    signals: parts.signals ?? SIGNALS,
    executions: parts.executions ?? EXECUTIONS,
  } satisfies SynthesisContext;
}

/** A valid draft for `context()`: finding 1 cites [1] and [E1], change 1 raises retrieve's timeout. */
export function goodDraft(): SynthesisDraft {
  return {
    diagnosis: {
      summary: 'Retrieval times out at 1.5 s.',
      findings: [
        { id: '1', description: 'Retrieval times out after 1500 ms.', signalRefs: [1], executionRefs: [1] },
      ],
    },
    changes: [
      {
        id: '1',
        slotId: 'retrieve',
        description: 'Raise timeoutMs from 1500 to 4000.',
        rationale: 'Retrieval needs more than 1.5 s under load.',
        findingIds: ['1'],
        patch: { timeoutMs: 4000 },
      },
    ],
    warnings: [],
  };
}

export interface LogEvent {
  message: string;
  details: Record<string, unknown>;
}

/** Hosts the SDK tried to reach other than 127.0.0.1: refused, and a failure of the test. */
const refusedHosts: string[] = [];

/**
 * Starts the fake for the calling test file and returns a getter for it. fetch is wrapped so
 * that a request to any host but 127.0.0.1 fails as a dropped connection and fails the test.
 */
export function useAnthropicFake(): () => AnthropicFake {
  let fake: AnthropicFake | undefined;
  beforeAll(async () => {
    const realFetch = globalThis.fetch;
    vi.stubGlobal('fetch', (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : input);
      if (url.hostname !== '127.0.0.1') {
        refusedHosts.push(url.hostname);
        return Promise.reject(new TypeError(`fetch failed: ${url.hostname} is not 127.0.0.1`));
      }
      return realFetch(input, init);
    });
    fake = await startAnthropicFake();
  });
  afterAll(async () => {
    await fake?.close();
    vi.unstubAllGlobals();
  });
  beforeEach(() => {
    fake?.reset();
    refusedHosts.length = 0;
  });
  afterEach(() => {
    expect(refusedHosts, 'hosts other than 127.0.0.1 the engine tried to reach').toEqual([]);
  });
  return () => {
    if (fake === undefined) throw new Error('the Anthropic fake is not started');
    return fake;
  };
}

/** A claude-v1 engine against `baseURL`, with a budget small enough for tests; `log` collects events. */
export function engineAt(baseURL: string, overrides: Partial<AnthropicClaudeV1Options> = {}) {
  const events: LogEvent[] = [];
  const engine = createClaudeV1({
    keys: countingKeys(),
    baseURL,
    model: MODEL,
    maxTokens: 2_048,
    timeBudgetMs: 5_000,
    requestTimeoutMs: 2_000,
    maxRetries: 2,
    backoff: { initialMs: 10, maxMs: 50 },
    log: (message, details) => {
      events.push({ message, details });
    },
    ...overrides,
  });
  return { engine, events };
}

/** What generate settled with: the proposal or the error, never an unhandled rejection. */
export async function settle<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  try {
    return { value: await promise };
  } catch (error) {
    return { error };
  }
}
