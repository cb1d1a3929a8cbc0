import { describe, expect, it } from 'vitest';
import {
  chartSummary,
  type Metric,
  metricName,
  signedDelta,
  thresholdLine,
} from '../../../web/src/metric-format.ts';

const metric = (over: Partial<Metric>): Metric => ({
  metric: 'failure_rate',
  kind: null,
  direction: 'lower_is_better',
  threshold: 0.01,
  unit: 'rate',
  base: { n: 1000, mean: 0.1 },
  applied: { n: 1000, mean: 0.104 },
  difference: 0.004,
  interval: [-0.003, 0.008],
  worseBound: 0.007,
  verdict: 'non_inferior',
  ...over,
});

describe('the effect metrics as people read them', () => {
  it('names each metric and writes its differences signed, in its unit', () => {
    expect(metricName(metric({}))).toBe('Failure rate');
    expect(metricName(metric({ metric: 'signal', kind: 'relevance' }))).toBe('Signal “relevance”');
    expect(signedDelta(metric({}), 0.012)).toBe('+1.20 points');
    expect(signedDelta(metric({}), -0.00001)).toBe('±0.00 points');
    expect(signedDelta(metric({ metric: 'duration_ms' }), -35.2)).toBe('−35 ms');
    expect(signedDelta(metric({ metric: 'signal' }), 0.05)).toBe('+0.050');
  });

  it('draws the threshold on the worse side: above 0 when lower is better, below when higher is', () => {
    expect(thresholdLine(metric({}))).toBe(0.01);
    expect(thresholdLine(metric({ direction: 'higher_is_better', threshold: 0.05 }))).toBe(-0.05);
  });

  it('names the chart by what it draws and where it ends', () => {
    const points = [
      { n: 100, step: 0, difference: 0.01, low: -0.05, high: 0.07 },
      { n: 1200, step: 0, difference: 0.004, low: -0.003, high: 0.008, bound: 0.007 },
    ];
    expect(chartSummary(metric({}), 'Failure rate', points)).toBe(
      'Failure rate, candidate minus base, over 2 judgements up to 1,200 candidate executions: now +0.40 points, interval −0.30 points to +0.80 points, at worst +0.70 points at 95 %; the threshold is +1.00 points, and its 95 % worst case lies within the threshold.',
    );
    expect(chartSummary(metric({ verdict: 'worse' }), 'Failure rate', points.slice(1))).toMatch(
      /over one judgement .*and the whole interval is on the worse side of 0\.$/,
    );
    expect(chartSummary(metric({ verdict: 'not_enough_data' }), 'Failure rate', [])).toBe(
      'Failure rate, candidate minus base: no interval yet; the threshold is +1.00 points.',
    );
  });
});
