/** finalizeProposal's drop tables, one rule at a time: what each keeps, what it drops, and the warning it writes. */
import { describe, expect, it } from 'vitest';
import type { Execution, Signal } from '../../../lambdas/core/schemas/records.ts';
import type { DraftChange } from '../../../lambdas/synthesis/draft.ts';
import {
  CHANGE_RULES,
  type ChangeContext,
  underReview as changeUnderReview,
  invalidPatch,
  noOpChange,
  uncitedChange,
  unknownFinding,
  unknownSlot,
} from '../../../lambdas/synthesis/drops/changes.ts';
import {
  FINDING_RULES,
  type FindingContext,
  uncitedFinding,
  unknownExecutionRefs,
  unknownSignalRefs,
} from '../../../lambdas/synthesis/drops/findings.ts';
import { DROP_WARNING_TYPES } from '../../../lambdas/synthesis/drops/rule.ts';
import { droppedChangeReference, WARNING_RULES } from '../../../lambdas/synthesis/drops/warnings.ts';

const signal = (id: string): Signal => ({
  id,
  pipelineId: 'pipe-1',
  kind: 'error',
  severity: 'critical',
  message: `failure ${id}`,
  occurredAt: '2025-03-01T10:00:00Z',
});
const execution = (id: string): Execution => ({
  id,
  pipelineId: 'pipe-1',
  configurationId: 'config-1',
  status: 'failed',
  durationMs: 1_000,
  startedAt: '2025-03-01T11:00:00Z',
});
const shown: FindingContext = { shownSignals: [signal('sig-a')], shownExecutions: [execution('exec-1')] };
const finding = (signalRefs: number[], executionRefs: number[] = []) => ({
  draft: { id: '1', description: 'finding 1', signalRefs, executionRefs },
  signals: [],
  executions: [],
});

const draftChange = (overrides: Partial<DraftChange> = {}): DraftChange => ({
  id: '1',
  slotId: 'generator',
  description: 'change 1',
  rationale: 'because',
  findingIds: ['1'],
  patch: { temperature: 0.2 },
  ...overrides,
});
const slots: ChangeContext = {
  findingIds: new Set(['1']),
  settingsBySlot: new Map([['generator', { model: 'model-a', temperature: 0.8 }]]),
};
const change = (overrides: Partial<DraftChange> = {}) =>
  changeUnderReview(draftChange(overrides), slots.settingsBySlot);

describe('the drop tables', () => {
  it('have one rule per drop warning type', () => {
    const rules = [...FINDING_RULES, ...CHANGE_RULES, ...WARNING_RULES];

    expect(rules.map((rule) => rule.type).sort()).toEqual([...DROP_WARNING_TYPES].sort());
  });
});

describe('finding rules', () => {
  it('unknownSignalRefs keeps the shown signals and names the numbers it dropped', () => {
    const ruling = unknownSignalRefs.judge(finding([1, 2]), shown);

    expect(ruling).toEqual({
      keep: { ...finding([1, 2]), signals: [signal('sig-a')] },
      warning: 'Finding 1 cited signal [2], but only 1 signal was shown; the reference was dropped.',
    });
  });

  it('unknownExecutionRefs keeps the shown runs and names the numbers it dropped', () => {
    const ruling = unknownExecutionRefs.judge(finding([], [1, 3, 4]), shown);

    expect(ruling).toEqual({
      keep: { ...finding([], [1, 3, 4]), executions: [execution('exec-1')] },
      warning: 'Finding 1 cited runs [E3], [E4], but only 1 run was shown; those references were dropped.',
    });
  });

  it('uncitedFinding drops a finding left citing no shown signal or run', () => {
    expect(uncitedFinding.judge(finding([7]), shown)).toEqual({
      drop: 'Finding 1 was dropped: it cites no shown signal or run, so a reviewer could not check it.',
    });
    expect(uncitedFinding.judge({ ...finding([]), executions: [execution('exec-1')] }, shown)).toEqual({
      keep: { ...finding([]), executions: [execution('exec-1')] },
    });
  });
});

describe('change rules', () => {
  it('unknownSlot drops a change on a slot the base does not have', () => {
    expect(unknownSlot.judge(change({ slotId: 'reranker' }), slots)).toEqual({
      drop: 'Change 1 was dropped: it targets slot "reranker", which is not in the base configuration.',
    });
  });

  it('uncitedChange drops a change that cites no finding of the diagnosis, naming the ids it cited', () => {
    expect(uncitedChange.judge(change({ findingIds: ['4', '5'] }), slots)).toEqual({
      drop: 'Change 1 was dropped: it cites no finding of the diagnosis (it named finding 4, finding 5).',
    });
  });

  it('unknownFinding keeps the known finding ids and names the others', () => {
    const ruling = unknownFinding.judge(change({ findingIds: ['1', '9'] }), slots);

    expect(ruling).toMatchObject({
      keep: { findingIds: ['1'] },
      warning: 'Change 1 cited finding 9, which the diagnosis does not contain; the reference was dropped.',
    });
  });

  it('invalidPatch drops a patch that would make the settings invalid, and applies a valid one', () => {
    expect(invalidPatch.judge(change({ patch: { temperature: 5 } }), slots)).toEqual({
      drop:
        'Change 1 was dropped: its patch would make the settings of slot "generator" invalid ' +
        '(temperature: Too big: expected number to be <=2).',
    });
    expect(invalidPatch.judge(change(), slots)).toMatchObject({
      keep: { after: { model: 'model-a', temperature: 0.2 } },
    });
  });

  it('noOpChange drops a patch that leaves the settings as they were', () => {
    const unchanged = change({ patch: { temperature: 0.8 } });

    expect(noOpChange.judge(unchanged, slots)).toEqual({
      drop: 'Change 1 was dropped: its patch leaves the settings of slot "generator" unchanged.',
    });
  });
});

describe('warning rules', () => {
  it('droppedChangeReference unlinks changes the proposal does not keep and names them', () => {
    const warning = { type: 'speculative_change', message: 'A guess.', changeIds: ['1', '2'] };

    expect(droppedChangeReference.judge(warning, { keptChangeIds: new Set(['1']) })).toEqual({
      keep: { type: 'speculative_change', message: 'A guess.', changeIds: ['1'] },
      warning:
        'Warning "speculative_change" named change 2, which is not in the proposal; the reference was dropped.',
    });
  });
});
