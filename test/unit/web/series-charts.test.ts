import { describe, expect, it } from 'vitest';
import {
  type Annotation,
  annotationX,
  BOX,
  type Bucket,
  bucketTime,
  chartMetrics,
  chartSummary,
  figureWords,
  labelGroups,
  linesOf,
  linesWithFigures,
  type MetricsAnswer,
  nearestIndex,
  niceCeiling,
  rangeQuery,
  runsOf,
  versionsOf,
  xOf,
  yOf,
} from '../../../web/src/charts/series.ts';

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

const HOURS = ['2026-12-03T10:00:00.000Z', '2026-12-03T11:00:00.000Z', '2026-12-03T12:00:00.000Z'];

/** Three hours: 16 executions (2 failed) at 10:00, none at 11:00, 4 (1 failed) at 12:00. */
const whole: MetricsAnswer = {
  step: 'hour',
  from: HOURS[0] as string,
  to: '2026-12-03T13:00:00.000Z',
  series: [
    {
      buckets: [
        bucket(HOURS[0] as string, {
          executions: 16,
          failed: 2,
          failureRate: 0.125,
          durationMs: { mean: 300, p50: 280, p95: 420.4, p99: 500 },
          tokens: { input: 16_000, output: 3_200 },
          scores: { relevance: { count: 40, mean: 0.8125 }, accuracy: { count: 0, mean: null } },
        }),
        bucket(HOURS[1] as string),
        bucket(HOURS[2] as string, {
          executions: 4,
          failed: 1,
          failureRate: 0.25,
          durationMs: { mean: 900, p50: 800, p95: 1_450, p99: 1_500 },
          tokens: { input: 4_000, output: 1_000 },
          scores: { helpfulness: { count: 3, mean: 0.5 } },
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
      by: 'usr-1',
      byName: 'ana@example.com',
      label: 'Version 2 activated',
    },
  ],
};

/** The answer with groupBy=configuration: the whole first, then a series per configuration. */
const byConfiguration = (ids: string[]): MetricsAnswer => ({
  ...whole,
  series: [
    ...whole.series,
    ...ids.map((configurationId, index) => ({
      configurationId,
      buckets: [
        bucket(HOURS[0] as string, index === 0 ? { executions: 16, failed: 2, failureRate: 0.125 } : {}),
        bucket(HOURS[2] as string, index === 0 ? {} : { executions: 4, failed: 1, failureRate: 0.25 }),
      ],
    })),
  ],
});

/** A chart of the fixture's by id. */
function metricOf(id: string) {
  const metric = chartMetrics(whole).find((candidate) => candidate.id === id);
  if (!metric) throw new Error(`no chart ${id}`);
  return metric;
}

describe('the ranges of the pipeline charts', () => {
  it('asks whole hours for a day and a week, whole UTC days for 30 days, ending after the hour or day now runs in', () => {
    const now = Date.parse('2026-12-03T14:25:10Z');
    expect(rangeQuery('24h', now)).toEqual({
      from: '2026-12-02T15:00:00.000Z',
      to: '2026-12-03T15:00:00.000Z',
      step: 'hour',
    });
    expect(rangeQuery('7d', now)).toEqual({
      from: '2026-11-26T15:00:00.000Z',
      to: '2026-12-03T15:00:00.000Z',
      step: 'hour',
    });
    expect(rangeQuery('30d', now)).toEqual({
      from: '2026-11-04T00:00:00.000Z',
      to: '2026-12-04T00:00:00.000Z',
      step: 'day',
    });
  });
});

describe('what each chart draws', () => {
  it('charts the failure rate, the p95 duration, the tokens and each score kind that has scores, by name', () => {
    const metrics = chartMetrics(whole);
    expect(metrics.map((metric) => metric.title)).toEqual([
      'Failure rate',
      'p95 duration',
      'Tokens per execution (input + output)',
      'Signal “helpfulness”, mean',
      'Signal “relevance”, mean',
    ]);
  });

  it('writes each figure in its unit with what it rests on, and an hour without executions as no data', () => {
    const failure = metricOf('failure_rate');
    const duration = metricOf('duration_p95');
    const tokens = metricOf('tokens_mean');
    const relevance = metricOf('signal_mean:relevance');
    const first = whole.series[0]?.buckets[0];
    expect(figureWords(failure, first)).toBe('12.50 % (2 of 16 failed)');
    expect(figureWords(duration, first)).toBe('420 ms (16 executions)');
    expect(figureWords(tokens, first)).toBe('1,200 tokens (16,000 in + 3,200 out, 16 executions)');
    expect(figureWords(relevance, first)).toBe('0.813 (n\u00a0=\u00a040)');
    expect(figureWords(failure, whole.series[0]?.buckets[1])).toBe('no data');
    expect(figureWords(tokens, whole.series[0]?.buckets[1])).toBe('no data');
    expect(figureWords(failure, null)).toBe('no data');
  });
});

describe('the lines of a chart', () => {
  it('draws the whole and one line per configuration that ran, by version, lined up on the whole hours', () => {
    const versions = versionsOf(whole.annotations, new Map([['cfg-a', 1]]));
    const lines = linesOf(byConfiguration(['cfg-b', 'cfg-a']), versions);
    expect(lines.map((line) => line.name)).toEqual(['All executions', 'version 1', 'version 2']);
    // Neither configuration's series has an 11:00 bucket: that hour is a gap, not a zero.
    expect(lines[1]?.buckets.map((b) => b?.executions ?? null)).toEqual([0, null, 4]);
    expect(lines[2]?.buckets.map((b) => b?.executions ?? null)).toEqual([16, null, 0]);
    expect(lines[2]?.buckets[0]?.at).toBe(HOURS[0]);
  });

  it('draws only the whole, named by its configuration, when one configuration ran; an unknown one by its id', () => {
    const lines = linesOf(byConfiguration(['cfg-7f3a9c1d2e']), new Map());
    expect(lines.map((line) => line.name)).toEqual(['All executions (configuration cfg-7f3a)']);
  });

  it('draws a configuration only where it has figures: signals name no configuration, so scores are the whole alone', () => {
    const lines = linesOf(byConfiguration(['cfg-a', 'cfg-b']), new Map());
    expect(linesWithFigures(metricOf('failure_rate'), lines)).toHaveLength(3);
    expect(linesWithFigures(metricOf('signal_mean:relevance'), lines).map((line) => line.name)).toEqual([
      'All executions',
    ]);
  });

  it('takes no version 0 (a moment that did not record one) as a name', () => {
    const versions = versionsOf([{ ...(whole.annotations[0] as Annotation), version: 0 }], new Map());
    expect(versions.has('cfg-b')).toBe(false);
  });
});

describe('the geometry of a chart', () => {
  it('rounds the value axis up to 1, 2, 2.5 or 5 times a power of ten', () => {
    expect(niceCeiling(0.25)).toBe(0.25);
    expect(niceCeiling(0.26)).toBe(0.5);
    expect(niceCeiling(1_450)).toBe(2_000);
    expect(niceCeiling(1_200)).toBe(2_000);
    expect(niceCeiling(2_400)).toBe(2_500);
    expect(niceCeiling(0)).toBe(1);
    expect(niceCeiling(Number.NaN)).toBe(1);
  });

  it('spreads the buckets over the plot and finds the one nearest to a pointer', () => {
    expect(xOf(0, 3)).toBe(BOX.left);
    expect(xOf(2, 3)).toBe(BOX.right);
    expect(xOf(0, 1)).toBe((BOX.left + BOX.right) / 2);
    expect(yOf(0, 2)).toBe(BOX.bottom);
    expect(yOf(2, 2)).toBe(BOX.top);
    expect(yOf(5, 2)).toBe(BOX.top);
    expect(nearestIndex(BOX.left - 50, 24)).toBe(0);
    expect(nearestIndex(xOf(7, 24) + 2, 24)).toBe(7);
    expect(nearestIndex(BOX.right + 50, 24)).toBe(23);
  });

  it('breaks a line where a bucket has no figure, so a gap is not drawn as a zero', () => {
    const runs = runsOf([0.1, 0.2, null, 0.3, null, null, 0.1, 0.1], 1);
    expect(runs.map((run) => run.length)).toEqual([2, 1, 2]);
    expect(runs[1]?.[0]).toEqual([xOf(3, 8), yOf(0.3, 1)]);
  });

  it('puts a change at its moment between the hours, and leaves out one outside the chart', () => {
    expect(annotationX('2026-12-03T11:30:00.000Z', HOURS, 'hour')).toBeCloseTo((xOf(1, 3) + xOf(2, 3)) / 2);
    // In the last hour, after its start: at the last point.
    expect(annotationX('2026-12-03T12:30:00.000Z', HOURS, 'hour')).toBe(xOf(2, 3));
    expect(annotationX('2026-12-03T09:59:00.000Z', HOURS, 'hour')).toBeNull();
    expect(annotationX('2026-12-03T14:00:01.000Z', HOURS, 'hour')).toBeNull();
  });
});

describe('the markers of a chart', () => {
  it('gives close markers one label, so their numbers never print over each other', () => {
    const at = (x: number, number: number) => ({ x, number });
    expect(labelGroups([at(10, 1), at(100, 2), at(105, 3), at(200, 4), at(201, 5), at(202, 6)])).toEqual([
      { x: 10, text: '1' },
      { x: 100, text: '2, 3' },
      { x: 200, text: '4–6' },
    ]);
    expect(labelGroups([])).toEqual([]);
  });
});

describe('the words of a chart', () => {
  it('names a bucket by its time, hours with the time and days without', () => {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (zone === 'UTC' || zone === 'Etc/UTC') {
      expect(bucketTime(HOURS[0] as string, 'hour')).toBe('Dec 3, 10:00');
      expect(bucketTime('2026-12-03T00:00:00.000Z', 'day')).toBe('Dec 3');
    }
    expect(bucketTime('not a time', 'hour')).toBe('not a time');
  });

  it('sums a chart up with each line’s latest figure', () => {
    const failure = metricOf('failure_rate');
    const lines = linesOf(
      byConfiguration(['cfg-a', 'cfg-b']),
      versionsOf(whole.annotations, new Map([['cfg-a', 1]])),
    );
    expect(chartSummary(failure, lines, 'the last 24 hours')).toBe(
      'Failure rate over the last 24 hours, 3 lines: All executions last 25.00 % (1 of 4 failed); version 1 last 12.50 % (2 of 16 failed); version 2 last 25.00 % (1 of 4 failed). The table below the chart has every figure.',
    );
  });
});
