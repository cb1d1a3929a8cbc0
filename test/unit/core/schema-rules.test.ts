/** The rules of the request schemas at their edges: event dates, settings size, unique ids in a batch. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { emptyKeyPath, LIMITS, MAX_FUTURE_SKEW_MS } from '../../../lambdas/core/schemas/common.ts';
import { recordEvaluationsBodySchema } from '../../../lambdas/core/schemas/evaluation.ts';
import { createPipelineBodySchema } from '../../../lambdas/core/schemas/pipelines.ts';
import {
  recordExecutionsBodySchema,
  recordSignalsBodySchema,
} from '../../../lambdas/core/schemas/records.ts';
import { approveBodySchema } from '../../../lambdas/core/schemas/review.ts';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const signal = (fields: Record<string, unknown> = {}) => ({
  kind: 'error',
  severity: 'warning',
  message: 'Timed out.',
  ...fields,
});
const accepts = (schema: { safeParse(value: unknown): { success: boolean } }, value: unknown) =>
  schema.safeParse(value).success;

describe('when a client says an event happened', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(NOW);
  });
  afterEach(() => vi.useRealTimers());

  it('may be from 2000-01-01 on, not before', () => {
    expect(
      accepts(recordSignalsBodySchema, { signals: [signal({ occurredAt: '2000-01-01T00:00:00.000Z' })] }),
    ).toBe(true);
    expect(
      accepts(recordSignalsBodySchema, { signals: [signal({ occurredAt: '1999-12-31T23:59:59.999Z' })] }),
    ).toBe(false);
  });

  it('may be up to 24 hours after the server’s now, not later', () => {
    const at = (ms: number) => new Date(ms).toISOString();
    expect(MAX_FUTURE_SKEW_MS).toBe(24 * 3_600_000);
    expect(accepts(recordSignalsBodySchema, { signals: [signal({ occurredAt: at(NOW + 3_600_000) })] })).toBe(
      true,
    );
    expect(
      accepts(recordExecutionsBodySchema, {
        executions: [{ status: 'succeeded', durationMs: 5, startedAt: at(NOW + MAX_FUTURE_SKEW_MS) }],
      }),
    ).toBe(true);
    expect(
      accepts(recordExecutionsBodySchema, {
        executions: [{ status: 'succeeded', durationMs: 5, startedAt: at(NOW + MAX_FUTURE_SKEW_MS + 1) }],
      }),
    ).toBe(false);
  });
});

describe('a batch of signals or executions', () => {
  it('may leave every id to the server', () => {
    expect(accepts(recordSignalsBodySchema, { signals: [signal(), signal(), signal()] })).toBe(true);
  });

  it('may give distinct ids, some of them', () => {
    expect(
      accepts(recordSignalsBodySchema, { signals: [signal({ id: 'a' }), signal({ id: 'b' }), signal()] }),
    ).toBe(true);
  });

  it('is refused when two records give the same id', () => {
    const result = recordSignalsBodySchema.safeParse({
      signals: [signal({ id: 'a' }), signal(), signal({ id: 'a' })],
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.message)).toEqual([
      'signal ids in a batch must be unique',
    ]);
    const executions = [
      { id: 'e1', status: 'failed', durationMs: 1 },
      { id: 'e1', status: 'succeeded', durationMs: 2 },
    ];
    expect(accepts(recordExecutionsBodySchema, { executions })).toBe(false);
  });
});

describe('a new pipeline’s slots', () => {
  const slot = (id: string, settings: Record<string, unknown> = {}) => ({
    id,
    name: id,
    kind: 'model',
    settings,
  });

  it('must have distinct ids', () => {
    expect(accepts(createPipelineBodySchema, { name: 'p', slots: [slot('a'), slot('b')] })).toBe(true);
    const result = createPipelineBodySchema.safeParse({ name: 'p', slots: [slot('a'), slot('a')] });
    expect(result.error?.issues.map((issue) => issue.message)).toEqual(['slot ids must be unique']);
  });

  it('may not hold an empty key at any depth, which DynamoDB cannot store: the issue says where', () => {
    const issuesOf = (settings: Record<string, unknown>) =>
      createPipelineBodySchema.safeParse({ name: 'p', slots: [slot('a'), slot('b', settings)] }).error
        ?.issues;
    const refusal = (path: Array<string | number>) => [
      {
        code: 'custom',
        path: ['slots', 1, 'settings', ...path],
        message: 'is an empty key, which cannot be stored: give every key a name',
      },
    ];

    expect(issuesOf({ '': 1 })).toMatchObject(refusal(['']));
    expect(issuesOf({ tools: [{ search: { depth: 2, '': true } }] })).toMatchObject(
      refusal(['tools', 0, 'search', '']),
    );
    expect(
      issuesOf({
        model: 'm',
        tools: [{ search: { depth: 2 } }, 'text', null, 3],
        nested: { a: { b: null } },
      }),
    ).toBeUndefined();
  });

  it('may carry settings up to 16 000 bytes of JSON, not one more', () => {
    // {"notes":"…"} is 12 characters around the value.
    const settings = (length: number) => ({ notes: 'x'.repeat(length - 12) });
    expect(JSON.stringify(settings(LIMITS.settingsBytes))).toHaveLength(16_000);
    expect(accepts(createPipelineBodySchema, { name: 'p', slots: [slot('a', settings(16_000))] })).toBe(true);
    expect(accepts(createPipelineBodySchema, { name: 'p', slots: [slot('a', settings(16_001))] })).toBe(
      false,
    );
  });
});

describe('finding an empty key', () => {
  it('names the path to the first one, array positions as numbers, or nothing when there is none', () => {
    expect(emptyKeyPath({ a: [1, { b: { '': 0 } }], '': 1 })).toEqual(['a', 1, 'b', '']);
    expect(emptyKeyPath([{ x: 'y' }, [{ '': null }]])).toEqual([1, 0, '']);
    for (const clean of [null, 'text', 42, true, [], {}, { a: 'b', c: [null, 'd'] }])
      expect(emptyKeyPath(clean)).toBeUndefined();
  });
});

describe('a batch that names the same thing twice', () => {
  it('is refused when an approval names a change twice', () => {
    expect(accepts(approveBodySchema, { changeIds: ['c1', 'c2'] })).toBe(true);
    const refused = approveBodySchema.safeParse({ changeIds: ['c1', 'c2', 'c1'] });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.message).toBe('must not repeat a change id');
  });

  it('is refused when evaluation results give one case and arm twice', () => {
    const result = (executionId: string, arm: string) => ({ executionId, arm, passed: true });
    const distinct = [result('e1', 'base'), result('e1', 'candidate'), result('e2', 'base')];
    expect(accepts(recordEvaluationsBodySchema, { results: distinct })).toBe(true);
    const refused = recordEvaluationsBodySchema.safeParse({ results: [...distinct, result('e1', 'base')] });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.message).toBe('a case and arm may appear once in a batch');
  });
});
