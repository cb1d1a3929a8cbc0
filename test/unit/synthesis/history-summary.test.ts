import { describe, expect, it } from 'vitest';
import type { Execution, Slot } from '../../../lambdas/core/schemas.ts';
import { percentile } from '../../../lambdas/synthesis/evidence/executions.ts';
import { errorKind, summarizeHistory } from '../../../lambdas/synthesis/evidence/history-summary.ts';
import { byteLength } from '../../../lambdas/synthesis/text-budget.ts';

const slots: Slot[] = [
  { id: 'retrieve', name: 'Retrieve', kind: 'retrieval', settings: {} },
  { id: 'answer', name: 'Answer', kind: 'model', settings: {} },
  { id: 'format', name: 'Format', kind: 'tool', settings: {} },
];

const run = (index: number, overrides: Partial<Execution> = {}): Execution => ({
  id: `e${index}`,
  pipelineId: 'p-1',
  configurationId: 'c-1',
  status: 'succeeded',
  durationMs: (index + 1) * 100,
  startedAt: new Date(Date.UTC(2025, 2, 1, 10, index)).toISOString(),
  ...overrides,
});

describe('summarizeHistory', () => {
  it('reports failure rates, latency percentiles and grouped error kinds per slot, most failures first', () => {
    const executions = Array.from({ length: 10 }, (_, i) =>
      run(i, {
        status: i < 4 ? 'failed' : 'succeeded',
        slotResults: [
          {
            slotId: 'retrieve',
            status: i < 3 ? 'failed' : 'succeeded',
            durationMs: (i + 1) * 10,
            ...(i < 3 ? { error: `timed out after ${1500 + i} ms` } : {}),
          },
          { slotId: 'answer', status: 'succeeded', durationMs: 50 },
        ],
        ...(i === 3 ? { error: 'post-processing crashed' } : {}),
      }),
    );

    const text = summarizeHistory(executions, slots, 'c-1', 8_000);

    expect(text).toContain(
      'The 10 most recent runs (2025-03-01T10:00:00.000Z to 2025-03-01T10:09:00.000Z): 4 failed (40%); p50 500 ms, p90 900 ms, p99 1000 ms',
    );
    const lines = text.split('\n');
    expect(lines.findIndex((line) => line.includes('slot "retrieve"'))).toBeLessThan(
      lines.findIndex((line) => line.includes('slot "answer"')),
    );
    expect(text).toContain(
      '- slot "retrieve": 10 runs, 3 failed (30%); p50 50 ms, p90 90 ms, p99 100 ms; errors: "timed out after # ms" ×3',
    );
    expect(text).toContain('- slot "answer": 10 runs, 0 failed (0%)');
    expect(text).toContain('- failed runs naming no failed slot: 1; errors: "post-processing crashed" ×1');
    expect(text).toContain('- slots no run reported results for: "format"');
  });

  it('notes runs of other configurations and results of slots the configuration no longer has', () => {
    const executions = [
      run(0, {
        configurationId: 'c-0',
        slotResults: [{ slotId: 'legacy', status: 'succeeded', durationMs: 5 }],
      }),
      run(1),
    ];

    const text = summarizeHistory(executions, slots, 'c-1', 8_000);

    expect(text).toContain('1 of them ran another configuration than the base one.');
    expect(text).toContain('results for 1 slot not in the base configuration ("legacy") were left out');
  });

  it('stays within its byte cap, leaving whole lines out', () => {
    const many: Slot[] = Array.from({ length: 50 }, (_, i) => ({
      id: `slot-${i}`,
      name: 'x',
      kind: 'tool',
      settings: {},
    }));
    const executions = Array.from({ length: 200 }, (_, i) =>
      run(i, {
        status: 'failed',
        slotResults: many.map((slot, position) => ({
          slotId: slot.id,
          status: 'failed' as const,
          durationMs: 10,
          error: `kind ${String.fromCharCode(97 + ((i + position) % 26))} ${'detail '.repeat(50)}`,
        })),
      }),
    );

    const text = summarizeHistory(executions, many, 'c-1', 4_000);

    expect(byteLength(text)).toBeLessThanOrEqual(4_000);
    expect(text).toMatch(/\(\d+ more lines left out for length\)$/);
  });

  it('says so when there is no history', () => {
    expect(summarizeHistory([], slots, 'c-1', 8_000)).toBe('No runs were reported.');
  });
});

describe('errorKind and percentile', () => {
  it('blanks numbers, quoted values and ids, and redacts credentials', () => {
    expect(
      errorKind('Request 123e4567-e89b-12d3-a456-426614174000 failed with 503 for "user@example.com"'),
    ).toBe('Request <id> failed with # for "…"');
    expect(errorKind('auth failed for Bearer abcdefghijklmnopqrstuvwxyz')).toBe(
      'auth failed for Bearer [redacted]',
    );
    expect(errorKind('   ')).toBe('(no message)');
  });

  it('uses the nearest rank', () => {
    expect(percentile([5, 1, 4, 2, 3], 0.5)).toBe(3);
    expect(percentile([5, 1, 4, 2, 3], 0.99)).toBe(5);
    expect(percentile([], 0.5)).toBeUndefined();
  });
});
