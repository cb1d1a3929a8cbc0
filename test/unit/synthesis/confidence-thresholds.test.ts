/**
 * The confidence rule and the evidence rule at each threshold: exactly at it and on either side,
 * so that moving a threshold by one, or comparing with > instead of >=, changes an outcome here.
 */
import { describe, expect, it } from 'vitest';
import type { Execution, Severity, Signal } from '../../../lambdas/core/schemas/records.ts';
import {
  assessEvidence,
  CONFIDENCE_RULE,
  type ConfidenceInput,
  EVIDENCE_RULE,
  type EvidenceInput,
  scoreConfidence,
} from '../../../lambdas/synthesis/confidence.ts';

/** A signal with a message of its own, so that no two signals are repeats of each other. */
const signal = (id: string, overrides: Partial<Signal> = {}): Signal => ({
  id,
  pipelineId: 'p-1',
  kind: 'feedback',
  severity: 'info',
  message: `Reviewer note ${id}`,
  slotId: 'generator',
  occurredAt: '2025-03-01T10:00:00Z',
  ...overrides,
});
const signals = (count: number, prefix: string, severity: Severity = 'info'): Signal[] =>
  Array.from({ length: count }, (_, i) => signal(`${prefix}${i}`, { severity }));

const run = (id: string, status: Execution['status'], slotStatus = status): Execution => ({
  id,
  pipelineId: 'p-1',
  configurationId: 'c-1',
  status,
  durationMs: 1_000,
  startedAt: '2025-03-01T09:00:00Z',
  slotResults: [
    { slotId: 'generator', status: slotStatus === 'failed' ? 'failed' : 'succeeded', durationMs: 900 },
  ],
});

/** Scores findings that each cite the given signals and runs, all of them shown and in the window. */
const score = (
  findings: { signals?: Signal[]; runs?: Execution[] }[],
  extra: Partial<ConfidenceInput> = {},
): ReturnType<typeof scoreConfidence> => {
  const shownSignals = findings.flatMap((finding) => finding.signals ?? []);
  return scoreConfidence({
    findings: findings.map((finding) => ({
      signalIds: (finding.signals ?? []).map((s) => s.id),
      executionIds: (finding.runs ?? []).map((r) => r.id),
    })),
    shownSignals,
    shownExecutions: findings.flatMap((finding) => finding.runs ?? []),
    allSignalsInWindow: shownSignals,
    drops: 0,
    ...extra,
  });
};

describe('scoreConfidence at its thresholds', () => {
  it('gives a support point from 3 signals and two from 10, none below 3', () => {
    expect([CONFIDENCE_RULE.someSupport, CONFIDENCE_RULE.strongSupport]).toEqual([3, 10]);
    // Informational signals in one finding: no severity point, one corroboration point.
    const scores = [2, 3, 9, 10].map((count) => score([{ signals: signals(count, 's') }]));

    expect(scores.map(({ support, points, confidence }) => ({ support, points, confidence }))).toEqual([
      { support: 2, points: 1, confidence: 'low' },
      { support: 3, points: 2, confidence: 'medium' },
      { support: 9, points: 2, confidence: 'medium' },
      { support: 10, points: 3, confidence: 'medium' },
    ]);
  });

  it('gives a severity point when exactly half of the support is severe, not when less', () => {
    const half = score([{ signals: [...signals(2, 'w', 'warning'), ...signals(2, 'i')] }]);
    const quarter = score([{ signals: [...signals(1, 'c', 'critical'), ...signals(3, 'i')] }]);

    expect([half.severeShare, half.points]).toEqual([0.5, 3]);
    expect([quarter.severeShare, quarter.points]).toEqual([0.25, 2]);
  });

  it('counts failed runs as severe and successful runs as support only', () => {
    const failed = score([{ signals: signals(2, 'i'), runs: [run('r1', 'failed'), run('r2', 'failed')] }]);
    const succeeded = score([
      { signals: signals(2, 'i'), runs: [run('r1', 'succeeded'), run('r2', 'succeeded')] },
    ]);

    expect([failed.support, failed.severeShare, failed.points]).toEqual([4, 0.5, 3]);
    expect([succeeded.support, succeeded.severeShare, succeeded.points]).toEqual([4, 0, 2]);
  });

  it('reports a severe share of 0, not NaN, and low confidence when nothing supports the findings', () => {
    const none = score([{ signals: [] }]);

    expect(none).toEqual({
      confidence: 'low',
      points: 0,
      support: 0,
      severeShare: 0,
      corroboratedFindings: 0,
      drops: 0,
    });
  });

  it('counts a finding as corroborated from 2 signals or runs, not from 1', () => {
    expect(CONFIDENCE_RULE.corroboratingSignals).toBe(2);

    const corroborated = [
      score([{ signals: signals(1, 'a') }]),
      score([{ signals: signals(2, 'a') }]),
      score([{ signals: signals(1, 'a'), runs: [run('r1', 'succeeded')] }]),
      score([{ runs: [run('r1', 'succeeded'), run('r2', 'succeeded')] }]),
    ].map((result) => result.corroboratedFindings);

    expect(corroborated).toEqual([0, 1, 1, 1]);
  });

  it('gives the agreement point when exactly half of the findings are corroborated, not a third', () => {
    expect(CONFIDENCE_RULE.corroboratedShare).toBe(0.5);
    // 3 to 5 informational signals in all: one support point; agreement decides medium or low.
    const half = score([{ signals: signals(2, 'a') }, { signals: signals(1, 'b') }]);
    const third = score([
      { signals: signals(2, 'a') },
      { signals: signals(1, 'b') },
      { signals: signals(1, 'c') },
    ]);
    const twoThirds = score([
      { signals: signals(2, 'a') },
      { signals: signals(2, 'b') },
      { signals: signals(1, 'c') },
    ]);

    expect([half.corroboratedFindings, half.points, half.confidence]).toEqual([1, 2, 'medium']);
    expect([third.corroboratedFindings, third.points, third.confidence]).toEqual([1, 1, 'low']);
    expect([twoThirds.corroboratedFindings, twoThirds.points]).toEqual([2, 2]);
  });

  it('is high from exactly 4 points, medium from 2, low below', () => {
    expect([CONFIDENCE_RULE.highAt, CONFIDENCE_RULE.mediumAt]).toEqual([4, 2]);
    const four = score([{ signals: signals(10, 'c', 'critical') }]);
    const three = score([{ signals: signals(10, 'c', 'critical') }], { drops: 1 });
    const two = score([{ signals: signals(10, 'c', 'critical') }], { drops: 3 });
    const one = score([{ signals: signals(10, 'i') }], { drops: 3 });

    expect([four, three, two, one].map(({ points, confidence }) => [points, confidence])).toEqual([
      [4, 'high'],
      [3, 'medium'],
      [2, 'medium'],
      [1, 'low'],
    ]);
  });

  it('counts every repeat of a cited signal in the window, the first of them included', () => {
    const repeats = ['r0', 'r1', 'r2'].map((id) => signal(id, { message: 'Same note' }));
    const cited = repeats[2];
    if (cited === undefined) throw new Error('fixture has three repeats');

    const result = scoreConfidence({
      findings: [{ signalIds: [cited.id] }],
      shownSignals: [cited],
      allSignalsInWindow: repeats,
      drops: 0,
    });

    expect(result.support).toBe(3);
  });

  it('counts a cited signal even when the window does not hold it', () => {
    const shown = signals(3, 's');

    const result = scoreConfidence({
      findings: [{ signalIds: shown.map((s) => s.id) }],
      shownSignals: shown,
      allSignalsInWindow: [],
      drops: 0,
    });

    expect(result.support).toBe(3);
  });

  it('ignores ids of signals and runs that were not shown', () => {
    const shown = signals(2, 's');

    const result = scoreConfidence({
      findings: [{ signalIds: ['s0', 'ghost'], executionIds: ['ghost-run'] }],
      shownSignals: shown,
      shownExecutions: [run('r1', 'failed')],
      allSignalsInWindow: shown,
      drops: 0,
    });

    expect([result.support, result.corroboratedFindings]).toEqual([1, 0]);
  });
});

/** Findings citing the given signals and runs, with changes resting on them; no run history unless given. */
const evidence = (parts: Partial<EvidenceInput> & Pick<EvidenceInput, 'findings'>): EvidenceInput => ({
  changes: [],
  shownSignals: [],
  allSignalsInWindow: [],
  shownExecutions: [],
  executionsInWindow: [],
  ...parts,
});

describe('assessEvidence messages and edges', () => {
  it('names every thin finding and every change resting on any of them, in the plural', () => {
    const shownSignals = [signal('a'), signal('b'), signal('c'), ...signals(3, 'x')];
    const shownExecutions = [run('r1', 'failed')];

    const assessed = assessEvidence(
      evidence({
        findings: [
          { id: '1', signalIds: ['a'], executionIds: [] },
          { id: '2', signalIds: ['b', 'c'], executionIds: ['r1'] },
          { id: '3', signalIds: ['x0', 'x1', 'x2'], executionIds: [] },
        ],
        changes: [
          { id: '1', findingIds: ['1'] },
          { id: '2', findingIds: ['3', '2'] },
          { id: '3', findingIds: ['3'] },
        ],
        shownSignals,
        allSignalsInWindow: shownSignals,
        shownExecutions,
      }),
    );

    expect(assessed.thinFindingIds).toEqual(['1', '2']);
    expect(assessed.warnings).toEqual([
      {
        type: 'thin_evidence',
        message:
          'Findings 1, 2 rest on thin evidence (finding 1: 1 signal, 0 runs; finding 2: 2 signals, 1 run). ' +
          'It weakens changes 1, 2.',
        changeIds: ['1', '2'],
      },
    ]);
  });

  it('says when no change rests on a thin finding, and links none', () => {
    const assessed = assessEvidence(
      evidence({
        findings: [{ id: '1', signalIds: ['a'], executionIds: [] }],
        changes: [{ id: '1', findingIds: ['2'] }],
        shownSignals: [signal('a')],
      }),
    );

    expect(assessed.warnings).toEqual([
      {
        type: 'thin_evidence',
        message: 'Finding 1 rests on thin evidence (finding 1: 1 signal, 0 runs). No change rests on it.',
      },
    ]);
  });

  it('does not count cited ids of signals and runs that were not shown', () => {
    const assessed = assessEvidence(
      evidence({
        findings: [{ id: '1', signalIds: ['a', 'b', 'ghost'], executionIds: ['ghost-run'] }],
        shownSignals: [signal('a'), signal('b')],
        shownExecutions: [run('r1', 'failed')],
      }),
    );

    expect(assessed.thinFindingIds).toEqual(['1']);
    expect(assessed.warnings[0]?.message).toContain('(finding 1: 2 signals, 0 runs)');
  });

  it('cuts a long warning to the 1000 characters a warning may hold', () => {
    const findings = Array.from({ length: 60 }, (_, i) => ({
      id: String(i + 1),
      signalIds: [],
      executionIds: [],
    }));

    const [warning] = assessEvidence(evidence({ findings })).warnings;

    expect(warning?.message).toHaveLength(1_000);
    expect(warning?.message.startsWith('Findings 1, 2, 3')).toBe(true);
  });

  describe('contradiction', () => {
    const failures = [
      signal('e1', { kind: 'error', message: 'Output is not valid JSON' }),
      signal('e2', { kind: 'error', message: 'Request timed out' }),
    ];
    const history = Array.from({ length: EVIDENCE_RULE.contradictingRuns }, (_, i) =>
      run(`h${i}`, 'succeeded'),
    );

    it('flags failure reports of one slot even when the finding cites runs, if none of them failed', () => {
      const cited = [run('ok-1', 'succeeded'), run('ok-2', 'succeeded')];

      const assessed = assessEvidence(
        evidence({
          findings: [{ id: '1', signalIds: ['e1', 'e2'], executionIds: cited.map((r) => r.id) }],
          shownSignals: failures,
          allSignalsInWindow: failures,
          shownExecutions: cited,
          executionsInWindow: history,
        }),
      );

      expect(assessed.contradictedFindingIds).toEqual(['1']);
    });

    it('does not flag failure reports spread over two slots: the history of one slot cannot refute them', () => {
      const twoSlots = [
        failures[0],
        signal('e3', { kind: 'error', message: 'Parse error', slotId: 'kb' }),
      ].flatMap((s) => s ?? []);

      const assessed = assessEvidence(
        evidence({
          findings: [{ id: '1', signalIds: twoSlots.map((s) => s.id), executionIds: [] }],
          shownSignals: twoSlots,
          allSignalsInWindow: twoSlots,
          executionsInWindow: history,
        }),
      );

      expect(assessed.contradictedFindingIds).toEqual([]);
    });
  });
});
