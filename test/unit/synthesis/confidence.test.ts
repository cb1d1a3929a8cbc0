/** The evidence rule: thin and contradicted evidence is flagged, names the changes it weakens, and makes confidence low. */
import { describe, expect, it } from 'vitest';
import type { Execution, Signal } from '../../../lambdas/core/schemas/records.ts';
import {
  assessEvidence,
  EVIDENCE_RULE,
  type EvidenceInput,
  scoreConfidence,
} from '../../../lambdas/synthesis/confidence.ts';

const signal = (id: string, overrides: Partial<Signal> = {}): Signal => ({
  id,
  pipelineId: 'p-1',
  kind: 'error',
  severity: 'warning',
  message: `Output is not valid JSON (${id})`,
  slotId: 'generator',
  occurredAt: '2025-03-01T10:00:00Z',
  ...overrides,
});

/** `count` runs of the generator slot; the first `failing` fail there. */
const runs = (count: number, failing = 0): Execution[] =>
  Array.from({ length: count }, (_, i) => ({
    id: `run-${i}`,
    pipelineId: 'p-1',
    configurationId: 'c-1',
    status: i < failing ? 'failed' : 'succeeded',
    durationMs: 1_000,
    startedAt: new Date(Date.UTC(2025, 2, 1, 9, 59 - i)).toISOString(),
    slotResults: [{ slotId: 'generator', status: i < failing ? 'failed' : 'succeeded', durationMs: 900 }],
  }));

/** One finding citing `signals` and the runs `cited`, with change 1 resting on it and change 2 not. */
const input = (signals: Signal[], window: Execution[], cited: Execution[] = []): EvidenceInput => ({
  findings: [
    { id: '1', signalIds: signals.map((s) => s.id), executionIds: cited.map((run) => run.id) },
    { id: '2', signalIds: ['other-1', 'other-2', 'other-3'], executionIds: [] },
  ],
  changes: [
    { id: '1', findingIds: ['1'] },
    { id: '2', findingIds: ['2'] },
  ],
  shownSignals: [...signals, ...['other-1', 'other-2', 'other-3'].map((id) => signal(id, { slotId: 'kb' }))],
  allSignalsInWindow: signals,
  shownExecutions: cited,
  executionsInWindow: window,
});
const types = (assessed: ReturnType<typeof assessEvidence>) => assessed.warnings.map((w) => w.type);

describe('assessEvidence', () => {
  describe('thin evidence', () => {
    it('flags a finding with fewer than 3 signals and fewer than 3 runs, naming the changes resting on it', () => {
      const assessed = assessEvidence(input([signal('a'), signal('b')], runs(5, 5), runs(2, 2)));

      expect(assessed.thinFindingIds).toEqual(['1']);
      expect(assessed.warnings).toEqual([
        {
          type: 'thin_evidence',
          message: 'Finding 1 rests on thin evidence (finding 1: 2 signals, 2 runs). It weakens change 1.',
          changeIds: ['1'],
        },
      ]);
    });

    it('does not flag 3 signals, or 3 runs, or 1 signal repeated 3 times in the window', () => {
      expect(EVIDENCE_RULE.thinSignals).toBe(3);
      expect(EVIDENCE_RULE.thinExecutions).toBe(3);
      const threeSignals = assessEvidence(input([signal('a'), signal('b'), signal('c')], runs(5, 5)));
      const threeRuns = assessEvidence(input([], runs(5, 5), runs(3, 3)));
      const repeated = input([signal('a', { message: 'timed out' })], runs(5, 5));
      repeated.allSignalsInWindow = ['a', 'b', 'c'].map((id) => signal(id, { message: 'timed out' }));

      expect([threeSignals, threeRuns, assessEvidence(repeated)].map(types)).toEqual([[], [], []]);
    });
  });

  describe('contradicted evidence', () => {
    const two = [signal('a'), signal('b')];

    it('flags failure reports of a slot whose runs succeeded 9 times in 10 or more', () => {
      expect(EVIDENCE_RULE.contradictingRuns).toBe(10);
      const assessed = assessEvidence(input(two, runs(10, 1)));

      expect(assessed.contradictedFindingIds).toEqual(['1']);
      expect(assessed.warnings).toContainEqual({
        type: 'contradicted_evidence',
        message:
          'The run history contradicts finding 1 (finding 1 reports failures in slot "generator", where 9 of the 10 recent runs succeeded). It weakens change 1.',
        changeIds: ['1'],
      });
    });

    it('does not flag a slot that failed 2 runs in 10, or has fewer than 10 runs', () => {
      expect(assessEvidence(input(two, runs(10, 2))).contradictedFindingIds).toEqual([]);
      expect(assessEvidence(input(two, runs(9, 0))).contradictedFindingIds).toEqual([]);
    });

    it('does not flag a finding that cites a failed run, nor feedback that successful runs cannot refute', () => {
      const window = runs(20, 1);
      const citesFailure = assessEvidence(input(two, window, window.slice(0, 1)));
      const feedback = assessEvidence(
        input(
          ['a', 'b', 'c'].map((id) => signal(id, { kind: 'feedback', message: 'Unhelpful summary' })),
          window,
        ),
      );

      expect(citesFailure.contradictedFindingIds).toEqual([]);
      expect(feedback.contradictedFindingIds).toEqual([]);
    });
  });
});

describe('scoreConfidence', () => {
  const shown = Array.from({ length: 12 }, (_, i) => signal(`s${i}`, { severity: 'critical' }));
  const findings = [{ signalIds: shown.map((s) => s.id) }];

  it('is low whatever the points when the evidence is weak', () => {
    const strong = scoreConfidence({ findings, shownSignals: shown, allSignalsInWindow: shown, drops: 0 });
    const weak = scoreConfidence({
      findings,
      shownSignals: shown,
      allSignalsInWindow: shown,
      drops: 0,
      weakEvidence: true,
    });

    expect([strong.confidence, weak.confidence]).toEqual(['high', 'low']);
  });

  it('counts cited runs as support, failed ones as severe', () => {
    const window = runs(12, 12);
    const byRuns = scoreConfidence({
      findings: [{ signalIds: [], executionIds: window.map((run) => run.id) }],
      shownSignals: [],
      allSignalsInWindow: [],
      shownExecutions: window,
      drops: 0,
    });
    const byNothing = scoreConfidence({
      findings: [{ signalIds: [], executionIds: [] }],
      shownSignals: [],
      allSignalsInWindow: [],
      shownExecutions: window,
      drops: 0,
    });

    expect(byRuns).toMatchObject({ confidence: 'high', support: 12, severeShare: 1 });
    expect(byNothing.confidence).toBe('low');
  });
});
