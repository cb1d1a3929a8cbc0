/** The warnings finalizeProposal writes when it drops part of a draft, word for word in the singular and the plural. */
import { describe, expect, it } from 'vitest';
import type { Configuration } from '../../../lambdas/core/schemas/pipelines.ts';
import type { Execution, Signal } from '../../../lambdas/core/schemas/records.ts';
import type { StructuredWarning } from '../../../lambdas/core/schemas/runs.ts';
import type { DraftChange, DraftFinding, SynthesisDraft } from '../../../lambdas/synthesis/draft.ts';
import { type FinalizeOptions, finalizeProposal } from '../../../lambdas/synthesis/finalize.ts';

const signal = (id: string): Signal => ({
  id,
  pipelineId: 'pipe-1',
  kind: 'error',
  severity: 'critical',
  message: `failure ${id}`,
  slotId: 'generator',
  occurredAt: '2025-03-01T10:00:00Z',
});
const execution = (id: string, minutesAgo: number): Execution => ({
  id,
  pipelineId: 'pipe-1',
  configurationId: 'config-1',
  status: 'failed',
  durationMs: 1_000,
  startedAt: new Date(Date.UTC(2025, 2, 1, 12, -minutesAgo)).toISOString(),
});

const base = (): Pick<Configuration, 'slots'> => ({
  slots: [
    { id: 'generator', name: 'Generator', kind: 'model', settings: { model: 'model-a', temperature: 0.8 } },
  ],
});
const finding = (id: string, signalRefs: number[], executionRefs?: number[]): DraftFinding => ({
  id,
  description: `finding ${id}`,
  signalRefs,
  ...(executionRefs === undefined ? {} : { executionRefs }),
});
const change = (id: string, overrides: Partial<DraftChange> = {}): DraftChange => ({
  id,
  slotId: 'generator',
  description: `change ${id}`,
  rationale: `because ${id}`,
  findingIds: ['1'],
  patch: { temperature: 0.2 },
  ...overrides,
});
const draftOf = (parts: {
  findings?: DraftFinding[];
  changes?: DraftChange[];
  warnings?: SynthesisDraft['warnings'];
}): SynthesisDraft => ({
  diagnosis: { summary: 'summary', findings: parts.findings ?? [finding('1', [1])] },
  changes: parts.changes ?? [],
  warnings: parts.warnings ?? [],
});

const threeSignals = [signal('sig-a'), signal('sig-b'), signal('sig-c')];
const finalize = (draft: SynthesisDraft, options: Partial<FinalizeOptions> = {}) =>
  finalizeProposal(draft, { shownSignals: threeSignals, baseConfiguration: base(), ...options });
const warningsOf = (type: string, warnings: readonly StructuredWarning[]) =>
  warnings.filter((warning) => warning.type === type).map((warning) => warning.message);

describe('finalizeProposal drop warnings', () => {
  it('names one unknown signal number once, in the singular', () => {
    const proposal = finalize(draftOf({ findings: [finding('1', [1, 5, 5])] }), {
      shownSignals: [signal('sig-a')],
    });

    expect(warningsOf('dropped_signal_reference', proposal.structuredWarnings)).toEqual([
      'Finding 1 cited signal [5], but only 1 signal was shown; the reference was dropped.',
    ]);
  });

  it('names several unknown signal numbers in the plural', () => {
    const proposal = finalize(draftOf({ findings: [finding('1', [1, 4, 9])] }));

    expect(warningsOf('dropped_signal_reference', proposal.structuredWarnings)).toEqual([
      'Finding 1 cited signals [4], [9], but only 3 signals were shown; those references were dropped.',
    ]);
  });

  it('names one unknown run number once, in the singular', () => {
    const proposal = finalize(draftOf({ findings: [finding('1', [1], [2, 2])] }), {
      shownExecutions: [execution('exec-1', 1)],
    });

    expect(warningsOf('dropped_execution_reference', proposal.structuredWarnings)).toEqual([
      'Finding 1 cited run [E2], but only 1 run was shown; the reference was dropped.',
    ]);
  });

  it('names several unknown run numbers in the plural', () => {
    const shownExecutions = [execution('exec-1', 1), execution('exec-2', 2), execution('exec-3', 3)];

    const proposal = finalize(draftOf({ findings: [finding('1', [1], [5, 6])] }), { shownExecutions });

    expect(warningsOf('dropped_execution_reference', proposal.structuredWarnings)).toEqual([
      'Finding 1 cited runs [E5], [E6], but only 3 runs were shown; those references were dropped.',
    ]);
  });

  it('treats runs as none shown when the options give none, and analyses no run', () => {
    const proposal = finalize(draftOf({ findings: [finding('1', [1], [1])] }));

    expect(proposal.analyzedExecutionIds).toEqual([]);
    expect(proposal.diagnosis.findings[0]?.executionIds).toEqual([]);
    expect(warningsOf('dropped_execution_reference', proposal.structuredWarnings)).toEqual([
      'Finding 1 cited run [E1], but only 0 runs were shown; the reference was dropped.',
    ]);
  });

  it('says a change that cites no finding at all was dropped, without naming any', () => {
    const proposal = finalize(draftOf({ changes: [change('1', { findingIds: [] })] }));

    expect(warningsOf('uncited_change', proposal.structuredWarnings)).toEqual([
      'Change 1 was dropped: it cites no finding of the diagnosis.',
    ]);
  });

  it('names unknown finding ids of a kept change in the singular and the plural', () => {
    const proposal = finalize(
      draftOf({
        changes: [
          change('1', { findingIds: ['1', '7', '7'] }),
          change('2', { findingIds: ['1', '7', '8'], patch: { temperature: 0.1 } }),
        ],
      }),
    );

    expect(proposal.changes.map((kept) => kept.id)).toEqual(['1', '2']);
    expect(warningsOf('unknown_finding', proposal.structuredWarnings)).toEqual([
      'Change 1 cited finding 7, which the diagnosis does not contain; the reference was dropped.',
      'Change 2 cited finding 7, finding 8, which the diagnosis does not contain; those references were dropped.',
    ]);
  });

  it('drops a change whose patch uses a reserved key and says which', () => {
    const proposal = finalize(draftOf({ changes: [change('1', { patch: { constructor: { x: 1 } } })] }));

    expect(proposal.changes).toEqual([]);
    expect(warningsOf('invalid_patch', proposal.structuredWarnings)).toEqual([
      'Change 1 was dropped: the patch uses the reserved key "constructor".',
    ]);
  });

  it('lists every invalid setting of a patch, separated by semicolons', () => {
    const proposal = finalize(draftOf({ changes: [change('1', { patch: { temperature: 5, topP: 3 } })] }));

    expect(warningsOf('invalid_patch', proposal.structuredWarnings)).toEqual([
      'Change 1 was dropped: its patch would make the settings of slot "generator" invalid ' +
        '(temperature: Too big: expected number to be <=2; topP: Too big: expected number to be <=1).',
    ]);
  });

  it('names the settings as a whole when the fault is not in one setting', () => {
    const proposal = finalize(
      draftOf({ changes: [change('1', { patch: { template: 'x'.repeat(20_000) } })] }),
    );

    expect(warningsOf('invalid_patch', proposal.structuredWarnings)).toEqual([
      'Change 1 was dropped: its patch would make the settings of slot "generator" invalid ' +
        '(settings: must serialize to at most 16000 bytes).',
    ]);
  });

  it('cuts the list of invalid settings at 300 characters', () => {
    const patch = {
      model: '',
      temperature: 5,
      topP: 3,
      maxTokens: -1,
      timeoutMs: 0,
      maxRetries: 99,
      topK: 0,
    };

    const [message = ''] = warningsOf(
      'invalid_patch',
      finalize(draftOf({ changes: [change('1', { patch })] })).structuredWarnings,
    );

    const prefix = 'Change 1 was dropped: its patch would make the settings of slot "generator" invalid (';
    expect(message.startsWith(`${prefix}model: Too small`)).toBe(true);
    expect(message.slice(prefix.length, -2)).toHaveLength(300);
    expect(message.endsWith(').')).toBe(true);
  });

  it('unlinks a warning from its only change when that change is dropped, in the singular', () => {
    const proposal = finalize(
      draftOf({
        changes: [change('1'), change('2', { slotId: 'reranker' })],
        warnings: [{ type: 'speculative_change', message: 'A guess.', changeIds: ['2'] }],
      }),
    );

    expect(proposal.structuredWarnings[0]).toEqual({ type: 'speculative_change', message: 'A guess.' });
    expect(warningsOf('dropped_change_reference', proposal.structuredWarnings)).toEqual([
      'Warning "speculative_change" named change 2, which is not in the proposal; the reference was dropped.',
    ]);
  });

  it('unlinks several dropped changes from a warning, in the plural', () => {
    const proposal = finalize(
      draftOf({
        changes: [change('1'), change('2', { slotId: 'reranker' }), change('3', { slotId: 'reranker' })],
        warnings: [{ type: 'speculative_change', message: 'Guesses.', changeIds: ['1', '2', '3'] }],
      }),
    );

    expect(proposal.structuredWarnings[0]).toEqual({
      type: 'speculative_change',
      message: 'Guesses.',
      changeIds: ['1'],
    });
    expect(warningsOf('dropped_change_reference', proposal.structuredWarnings)).toEqual([
      'Warning "speculative_change" named change 2, change 3, which are not in the proposal; those references were dropped.',
    ]);
  });

  it('says how many drafted changes were all dropped, in the plural', () => {
    const proposal = finalize(
      draftOf({ changes: [change('1', { slotId: 'reranker' }), change('2', { slotId: 'reranker' })] }),
    );

    expect(warningsOf('no_changes', proposal.structuredWarnings)).toEqual([
      'All 2 drafted changes were dropped; the proposal equals the base configuration.',
    ]);
  });

  it('adds no no_changes warning while a change is kept', () => {
    const proposal = finalize(draftOf({ changes: [change('1')] }));

    expect(proposal.changes.map((kept) => kept.id)).toEqual(['1']);
    expect(warningsOf('no_changes', proposal.structuredWarnings)).toEqual([]);
  });
});
