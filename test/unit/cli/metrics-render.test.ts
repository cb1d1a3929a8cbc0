import { describe, expect, it } from 'vitest';
import { metricsQuery, parseSince } from '../../../cli/metrics-command.ts';
import { renderMetrics, sparkline } from '../../../cli/metrics-render.ts';
import type { MetricsAnswer } from '../../../lambdas/core/schemas/metrics.ts';

type Bucket = MetricsAnswer['series'][number]['buckets'][number];
const bucket = (at: string, over: Partial<Bucket> = {}): Bucket => ({
  at,
  executions: 0,
  failed: 0,
  failureRate: null,
  durationMs: { mean: null, p50: null, p95: null, p99: null },
  tokens: { input: 0, output: 0 },
  signals: { info: 0, warning: 0, critical: 0 },
  scores: {},
  ...over,
});

describe('the metrics sparkline', () => {
  it('draws 0 as the lowest bar, the largest as the highest, and a bucket without a figure as a blank', () => {
    expect(sparkline([0, 1, 2, 4, 8])).toBe('▁▂▃▅█');
    expect(sparkline([0.1, null, 0.2])).toBe('▅ █');
    expect(sparkline([0, 0])).toBe('▁▁');
    expect(sparkline([])).toBe('');
  });

  it('averages more buckets than it has room for into its width', () => {
    const line = sparkline(
      Array.from({ length: 720 }, (_, i) => (i < 360 ? 1 : 2)),
      48,
    );
    expect(line).toHaveLength(48);
    expect(line).toBe(`${'▅'.repeat(24)}${'█'.repeat(24)}`);
  });
});

describe('the metrics range', () => {
  const now = Date.parse('2026-12-03T14:25:10Z');

  it('reads --since as a duration back from now or as a UTC time, and refuses anything else by naming both', () => {
    expect(parseSince('24h', now)).toBe(now - 24 * 3_600_000);
    expect(parseSince('90m', now)).toBe(now - 90 * 60_000);
    expect(parseSince('7d', now)).toBe(now - 7 * 86_400_000);
    expect(parseSince('2026-12-01T00:00:00Z', now)).toBe(Date.parse('2026-12-01T00:00:00Z'));
    expect(() => parseSince('yesterday', now)).toThrow(/90m, 24h or 7d, or a UTC time/);
    expect(() => parseSince('24', now)).toThrow(/got "24"/);
  });

  it('asks whole buckets, up to the end of the one running now', () => {
    expect(metricsQuery(parseSince('24h', now), now, 'hour')).toEqual({
      from: '2026-12-02T14:00:00.000Z',
      to: '2026-12-03T15:00:00.000Z',
      step: 'hour',
    });
    expect(metricsQuery(parseSince('30d', now), now, 'day')).toEqual({
      from: '2026-11-03T00:00:00.000Z',
      to: '2026-12-04T00:00:00.000Z',
      step: 'day',
    });
    // A start in the future still asks the bucket running now.
    expect(metricsQuery(now + 3_600_000, now, 'minute').from).toBe('2026-12-03T14:25:00.000Z');
  });
});

describe('the metrics table', () => {
  const answer: MetricsAnswer = {
    step: 'hour',
    from: '2026-12-03T10:00:00.000Z',
    to: '2026-12-03T13:00:00.000Z',
    series: [
      {
        configurationId: 'cfg-b',
        buckets: [
          bucket('2026-12-03T10:00:00.000Z', {
            executions: 16,
            failed: 2,
            failureRate: 0.125,
            durationMs: { mean: 300, p50: 280, p95: 420.4, p99: 500 },
            tokens: { input: 16_000, output: 3_200 },
            signals: { info: 1, warning: 2, critical: 0 },
            scores: { relevance: { count: 40, mean: 0.8125 } },
          }),
          bucket('2026-12-03T11:00:00.000Z'),
          bucket('2026-12-03T12:00:00.000Z', {
            executions: 4,
            failed: 1,
            failureRate: 0.25,
            durationMs: { mean: 900, p50: 800, p95: 1_450, p99: 1_500 },
            tokens: { input: 4_000, output: 1_000 },
          }),
        ],
      },
    ],
    annotations: [
      {
        at: '2026-12-03T12:30:00.000Z',
        type: 'activation',
        configurationId: 'cfg-b',
        version: 2,
        byName: 'ana@example.com',
        by: 'usr-1',
        label: 'Version 2 activated',
      },
    ],
  };

  it('leaves the score columns out of a configuration’s series, as signals name no configuration', () => {
    const grouped: MetricsAnswer = {
      ...answer,
      series: [
        { buckets: answer.series[0]?.buckets ?? [] },
        {
          configurationId: 'cfg-b',
          buckets: (answer.series[0]?.buckets ?? []).map((b) => ({ ...b, scores: {} })),
        },
      ],
    };
    const [whole, configuration] = renderMetrics(grouped).split('Configuration cfg-b (version 2):');
    expect(whole).toMatch(/^relevance {5}█ {2}$/m);
    expect(configuration).not.toContain('relevance');
    expect(configuration).toMatch(
      /^AT {16}EXECUTIONS {2}FAILED {2}FAILURE_RATE {2}P95_MS {2}TOKENS {2}SIGNALS$/m,
    );
  });

  it('prints a sparkline per column above the buckets that hold records, then the changes with their people', () => {
    expect(renderMetrics(answer).split('\n')).toEqual([
      "By hour, 2026-12-03 10:00 to 2026-12-03 13:00 UTC; sparklines from 0 (▁) to each column's largest (█), a blank where a bucket has none.",
      '',
      'Configuration cfg-b (version 2):',
      'executions    █▁▃',
      'failure_rate  ▅ █',
      'p95_ms        ▃ █',
      'tokens        █▁▃',
      'signals       █▁▁',
      'relevance     █  ',
      '',
      'AT                EXECUTIONS  FAILED  FAILURE_RATE  P95_MS  TOKENS  SIGNALS  RELEVANCE',
      '2026-12-03 10:00  16          2       12.50%        420     19200   3        0.813',
      '2026-12-03 12:00  4           1       25.00%        1450    5000    0        -',
      '(1 hour without records left out)',
      '',
      'Changes:',
      '  2026-12-03 12:30  Version 2 activated (by ana@example.com)',
    ]);
  });
});
