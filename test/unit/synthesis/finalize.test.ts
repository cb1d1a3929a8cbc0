import { describe, expect, it } from 'vitest';
import type { Configuration, Slot } from '../../../lambdas/core/schemas/pipelines.ts';
import type { Execution, Severity, Signal } from '../../../lambdas/core/schemas/records.ts';
import type { DraftChange, DraftFinding, SynthesisDraft } from '../../../lambdas/synthesis/draft.ts';
import { finalizeProposal } from '../../../lambdas/synthesis/finalize.ts';

const signal = (id: string, overrides: Partial<Signal> = {}): Signal => ({
  id,
  pipelineId: 'pipe-1',
  kind: 'error',
  severity: 'critical',
  message: `failure ${id}`,
  slotId: 'generator',
  occurredAt: '2025-03-01T10:00:00Z',
  ...overrides,
});

const slots = (): Slot[] => [
  { id: 'system-prompt', name: 'System prompt', kind: 'prompt', settings: { instructions: 'Summarise.' } },
  {
    id: 'generator',
    name: 'Generator',
    kind: 'model',
    settings: { model: 'model-a', temperature: 0.8, maxTokens: 1024, options: { stream: true, seed: 7 } },
  },
];
const base = (): Pick<Configuration, 'slots'> => ({ slots: slots() });

const finding = (id: string, signalRefs: number[]): DraftFinding => ({
  id,
  description: `finding ${id}`,
  signalRefs,
});
const change = (id: string, overrides: Partial<DraftChange> = {}): DraftChange => ({
  id,
  slotId: 'generator',
  description: `change ${id}`,
  rationale: `because ${id}`,
  findingIds: ['1'],
  patch: { maxTokens: 2048 },
  ...overrides,
});
const draftOf = (parts: Partial<SynthesisDraft> & { findings?: DraftFinding[] }): SynthesisDraft => ({
  diagnosis: { summary: 'summary', findings: parts.findings ?? [finding('1', [1])] },
  changes: parts.changes ?? [],
  warnings: parts.warnings ?? [],
});

const shown = [signal('sig-a'), signal('sig-b'), signal('sig-c')];

/** A run `minutesAgo` minutes before noon: lower numbers are more recent. */
const execution = (id: string, minutesAgo: number): Execution => ({
  id,
  pipelineId: 'pipe-1',
  configurationId: 'config-1',
  status: 'failed',
  durationMs: 1_000,
  startedAt: new Date(Date.UTC(2025, 2, 1, 12, -minutesAgo)).toISOString(),
});
const shownExecutions = [execution('exec-1', 1), execution('exec-2', 2), execution('exec-3', 3)];

describe('finalizeProposal', () => {
  it('maps 1-based signal numbers to the ids of the shown signals', () => {
    const draft = draftOf({ findings: [finding('1', [3, 1]), finding('2', [2, 2])] });

    const proposal = finalizeProposal(draft, { shownSignals: shown, baseConfiguration: base() });

    expect(proposal.diagnosis.findings).toEqual([
      { id: '1', description: 'finding 1', signalIds: ['sig-c', 'sig-a'], executionIds: [] },
      { id: '2', description: 'finding 2', signalIds: ['sig-b'], executionIds: [] },
    ]);
    expect(proposal.analyzedSignalIds).toEqual(['sig-a', 'sig-b', 'sig-c']);
  });

  it('maps run numbers to the ids of the shown executions, most recent first', () => {
    const draft = draftOf({ findings: [{ ...finding('1', []), executionRefs: [3, 1, 3] }] });

    const proposal = finalizeProposal(draft, {
      shownSignals: shown,
      shownExecutions,
      baseConfiguration: base(),
    });

    expect(proposal.diagnosis.findings[0]?.executionIds).toEqual(['exec-1', 'exec-3']);
    expect(proposal.analyzedExecutionIds).toEqual(['exec-1', 'exec-2', 'exec-3']);
  });

  it('cites at most 20 executions per finding, the most recent ones', () => {
    const many = Array.from({ length: 30 }, (_, index) => execution(`exec-${index + 1}`, index));
    const draft = draftOf({
      findings: [{ ...finding('1', []), executionRefs: many.map((_, index) => 30 - index) }],
    });

    const proposal = finalizeProposal(draft, {
      shownSignals: shown,
      shownExecutions: many,
      baseConfiguration: base(),
    });

    expect(proposal.diagnosis.findings[0]?.executionIds).toEqual(many.slice(0, 20).map((run) => run.id));
  });

  it('drops run numbers that name no shown run, with a warning naming the finding and the numbers', () => {
    const draft = draftOf({ findings: [{ ...finding('1', [1]), executionRefs: [2, 7, 0] }] });

    const proposal = finalizeProposal(draft, {
      shownSignals: shown,
      shownExecutions,
      baseConfiguration: base(),
    });

    expect(proposal.diagnosis.findings[0]?.executionIds).toEqual(['exec-2']);
    expect(proposal.structuredWarnings).toContainEqual({
      type: 'dropped_execution_reference',
      message: expect.stringMatching(/^Finding 1 cited runs \[E7\], \[E0\], but only 3 runs were shown/),
    });
  });

  it('drops a finding that cites no signal and no run, and then the change that rested only on it', () => {
    const draft = draftOf({
      findings: [finding('1', [1]), { ...finding('2', [9]), executionRefs: [8] }],
      changes: [
        change('1', { findingIds: ['2'] }),
        change('2', { findingIds: ['1', '2'], patch: { temperature: 0.2 } }),
      ],
    });

    const proposal = finalizeProposal(draft, {
      shownSignals: shown,
      shownExecutions,
      baseConfiguration: base(),
    });

    expect(proposal.diagnosis.findings.map((kept) => kept.id)).toEqual(['1']);
    expect(proposal.structuredWarnings).toContainEqual({
      type: 'uncited_finding',
      message: 'Finding 2 was dropped: it cites no shown signal or run, so a reviewer could not check it.',
    });
    expect(proposal.changes.map((kept) => [kept.id, kept.findingIds])).toEqual([['2', ['1']]]);
    expect(proposal.structuredWarnings.map((warning) => warning.type)).toContain('uncited_change');
  });

  it('drops signal numbers that name no shown signal, with a warning naming the finding and the numbers', () => {
    const draft = draftOf({ findings: [finding('1', [0, 2, 9])] });

    const proposal = finalizeProposal(draft, { shownSignals: shown, baseConfiguration: base() });

    expect(proposal.diagnosis.findings[0]?.signalIds).toEqual(['sig-b']);
    expect(proposal.structuredWarnings).toContainEqual({
      type: 'dropped_signal_reference',
      message: expect.stringMatching(/^Finding 1 cited signals \[0\], \[9\], but only 3 signals were shown/),
    });
  });

  it('drops a change on a slot the base configuration does not have and names the slot', () => {
    const draft = draftOf({ changes: [change('1', { slotId: 'reranker' }), change('2')] });

    const proposal = finalizeProposal(draft, { shownSignals: shown, baseConfiguration: base() });

    expect(proposal.changes.map((kept) => kept.id)).toEqual(['2']);
    expect(proposal.structuredWarnings).toContainEqual({
      type: 'unknown_slot',
      message: 'Change 1 was dropped: it targets slot "reranker", which is not in the base configuration.',
    });
    expect(proposal.proposedSlots.map((slot) => slot.id)).toEqual(['system-prompt', 'generator']);
  });

  it('drops a finding id the diagnosis does not contain but keeps the change while it cites another', () => {
    const draft = draftOf({ changes: [change('1', { findingIds: ['1', '7'] })] });

    const proposal = finalizeProposal(draft, { shownSignals: shown, baseConfiguration: base() });

    expect(proposal.changes[0]?.findingIds).toEqual(['1']);
    expect(proposal.structuredWarnings).toContainEqual({
      type: 'unknown_finding',
      message: expect.stringContaining('Change 1 cited finding 7, which the diagnosis does not contain'),
    });
  });

  it('drops a change left citing no finding, because every change must rest on one', () => {
    const draft = draftOf({ changes: [change('1', { findingIds: ['4'] })] });

    const proposal = finalizeProposal(draft, { shownSignals: shown, baseConfiguration: base() });

    expect(proposal.changes).toEqual([]);
    expect(proposal.structuredWarnings).toContainEqual({
      type: 'uncited_change',
      message: 'Change 1 was dropped: it cites no finding of the diagnosis (it named finding 4).',
    });
  });

  it.each([
    ['a temperature out of range', { temperature: 5 }, 'temperature'],
    ['a maxTokens of the wrong type', { maxTokens: 'lots' }, 'maxTokens'],
    ['oversized settings', { template: 'x'.repeat(20_000) }, 'at most 16000 bytes'],
  ])('drops a change whose patch gives %s and leaves the slot as it was', (_label, patch, named) => {
    const draft = draftOf({ changes: [change('1', { patch })] });

    const proposal = finalizeProposal(draft, { shownSignals: shown, baseConfiguration: base() });

    expect(proposal.changes).toEqual([]);
    const warning = proposal.structuredWarnings.find((candidate) => candidate.type === 'invalid_patch');
    expect(warning?.message).toContain('Change 1 was dropped');
    expect(warning?.message).toContain('slot "generator"');
    expect(warning?.message).toContain(named);
    expect(proposal.proposedSlots).toEqual(slots());
  });

  it('drops a change whose patch would change nothing', () => {
    const draft = draftOf({ changes: [change('1', { patch: { temperature: 0.8, stop: null } })] });

    const proposal = finalizeProposal(draft, { shownSignals: shown, baseConfiguration: base() });

    expect(proposal.changes).toEqual([]);
    expect(proposal.structuredWarnings).toContainEqual({
      type: 'no_op_change',
      message: 'Change 1 was dropped: its patch leaves the settings of slot "generator" unchanged.',
    });
  });

  it('removes links from warnings to changes that were dropped, and says so', () => {
    const draft = draftOf({
      changes: [change('1'), change('2', { slotId: 'reranker' })],
      warnings: [{ type: 'speculative_change', message: 'Both are guesses.', changeIds: ['1', '2'] }],
    });

    const proposal = finalizeProposal(draft, { shownSignals: shown, baseConfiguration: base() });

    expect(proposal.structuredWarnings[0]).toEqual({
      type: 'speculative_change',
      message: 'Both are guesses.',
      changeIds: ['1'],
    });
    expect(proposal.structuredWarnings).toContainEqual({
      type: 'dropped_change_reference',
      message: expect.stringContaining(
        'Warning "speculative_change" named change 2, which is not in the proposal',
      ),
    });
  });

  it('builds the proposed slots from the base with every kept patch applied, in order', () => {
    const draft = draftOf({
      changes: [
        change('1', { patch: { maxTokens: 2048, options: { seed: null } } }),
        change('2', { patch: { maxTokens: 4096, temperature: null } }),
        change('3', { slotId: 'system-prompt', patch: { instructions: 'Summarise in JSON.' } }),
      ],
    });
    const baseConfiguration = base();
    const before = structuredClone(baseConfiguration);

    const proposal = finalizeProposal(draft, { shownSignals: shown, baseConfiguration });

    expect(proposal.proposedSlots).toEqual([
      {
        id: 'system-prompt',
        name: 'System prompt',
        kind: 'prompt',
        settings: { instructions: 'Summarise in JSON.' },
      },
      {
        id: 'generator',
        name: 'Generator',
        kind: 'model',
        settings: { model: 'model-a', maxTokens: 4096, options: { stream: true } },
      },
    ]);
    expect(proposal.changes.map((kept) => kept.patch)).toEqual([
      { maxTokens: 2048, options: { seed: null } },
      { maxTokens: 4096, temperature: null },
      { instructions: 'Summarise in JSON.' },
    ]);
    expect(baseConfiguration).toEqual(before);
  });

  it('keeps the draft ids as they are after drops, renumbering nothing', () => {
    const draft = draftOf({
      changes: [change('1', { slotId: 'reranker' }), change('2'), change('3', { patch: { topP: 0.5 } })],
    });

    const proposal = finalizeProposal(draft, { shownSignals: shown, baseConfiguration: base() });

    expect(proposal.changes.map((kept) => kept.id)).toEqual(['2', '3']);
  });

  it('says there is nothing to change when no change survives, once', () => {
    const findings = [finding('1', [1, 2, 3])];
    const emptyDraft = draftOf({ findings, changes: [] });
    const allDropped = draftOf({ findings, changes: [change('1', { slotId: 'reranker' })] });
    const alreadySaid = draftOf({ findings, warnings: [{ type: 'no_changes', message: 'All healthy.' }] });

    const [empty, dropped, said] = [emptyDraft, allDropped, alreadySaid].map((draft) =>
      finalizeProposal(draft, { shownSignals: shown, baseConfiguration: base() }),
    );

    expect(empty?.structuredWarnings).toEqual([
      { type: 'no_changes', message: 'No changes are proposed; the proposal equals the base configuration.' },
    ]);
    expect(dropped?.structuredWarnings.at(-1)?.message).toBe(
      'All 1 drafted change was dropped; the proposal equals the base configuration.',
    );
    expect(said?.structuredWarnings).toEqual([{ type: 'no_changes', message: 'All healthy.' }]);
  });

  describe('confidence', () => {
    const severeSignals = (count: number, severity: Severity = 'critical'): Signal[] =>
      Array.from({ length: count }, (_, index) => signal(`sig-${index}`, { severity }));
    const confidenceFor = (
      signals: Signal[],
      refsPerFinding: number[][],
      extra: Partial<SynthesisDraft> = {},
    ) =>
      finalizeProposal(
        draftOf({
          findings: refsPerFinding.map((refs, index) => finding(String(index + 1), refs)),
          changes: [change('1')],
          ...extra,
        }),
        { shownSignals: signals, baseConfiguration: base() },
      ).confidence;

    it('rises as more signals agree on the findings', () => {
      const one = severeSignals(1);
      const four = severeSignals(4);
      const twelve = severeSignals(12);

      const levels = [
        confidenceFor(one, [[1]]),
        confidenceFor(four, [[1, 2, 3, 4]]),
        confidenceFor(twelve, [Array.from({ length: 12 }, (_, index) => index + 1)]),
      ];

      expect(levels).toEqual(['low', 'medium', 'high']);
    });

    it('counts repeats of a cited signal in the window as agreement', () => {
      const cited = signal('sig-shown', { message: 'Request timed out' });
      const repeats = Array.from({ length: 11 }, (_, index) =>
        signal(`sig-repeat-${index}`, { message: 'Request timed out' }),
      );
      const draft = draftOf({ findings: [finding('1', [1])], changes: [change('1')] });

      const alone = finalizeProposal(draft, { shownSignals: [cited], baseConfiguration: base() });
      const repeated = finalizeProposal(draft, {
        shownSignals: [cited],
        baseConfiguration: base(),
        allSignalsInWindow: [cited, ...repeats],
      });

      expect(alone.confidence).toBe('low');
      expect(repeated.confidence).toBe('high');
    });

    it('is lower when the evidence is informational only', () => {
      const critical = severeSignals(12, 'critical');
      const info = severeSignals(12, 'info');
      const refs = [Array.from({ length: 12 }, (_, index) => index + 1)];

      const levels = [confidenceFor(critical, refs), confidenceFor(info, refs)];

      expect(levels).toEqual(['high', 'medium']);
    });

    it('falls when the code has to drop references or changes', () => {
      const strong = severeSignals(12);
      const strongRefs = Array.from({ length: 12 }, (_, index) => index + 1);
      const fair = severeSignals(4);
      const manyBadChanges = [
        change('1'),
        change('2', { slotId: 'reranker' }),
        change('3', { findingIds: ['9'] }),
        change('4', { patch: { temperature: 9 } }),
      ];

      const strongClean = confidenceFor(strong, [strongRefs]);
      const strongOneDrop = confidenceFor(strong, [[...strongRefs, 40]]);
      const fairClean = confidenceFor(fair, [[1, 2, 3, 4]]);
      const fairManyDrops = confidenceFor(fair, [[1, 2, 3, 4]], { changes: manyBadChanges });

      expect([strongClean, strongOneDrop]).toEqual(['high', 'medium']);
      expect([fairClean, fairManyDrops]).toEqual(['medium', 'low']);
    });

    it('is low when no finding cites a signal', () => {
      const signals = severeSignals(12);

      const level = confidenceFor(signals, [[]]);

      expect(level).toBe('low');
    });
  });
});

describe('a finding cites every signal it counts', () => {
  it('cites the repeats of a shown signal, newest first, up to SIGNAL_IDS_PER_FINDING, and says so beyond', async () => {
    const { SIGNAL_IDS_PER_FINDING } = await import('../../../lambdas/synthesis/finalize.ts');
    const repeats = Array.from({ length: 25 }, (_, i) => ({
      id: `t-${i}`,
      pipelineId: 'p',
      kind: 'timeout',
      severity: 'critical' as const,
      message: 'Retrieval timed out',
      slotId: 's',
      occurredAt: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
    }));
    const shown = [repeats[24] as (typeof repeats)[number]];
    const proposal = finalizeProposal(
      {
        diagnosis: { summary: 'x', findings: [{ id: '1', description: 'Timeouts.', signalRefs: [1] }] },
        changes: [],
        warnings: [],
      },
      {
        shownSignals: shown,
        allSignalsInWindow: repeats,
        baseConfiguration: { slots: [{ id: 's', name: 's', kind: 'retrieval', settings: {} }] },
      },
    );
    const [finding] = proposal.diagnosis.findings;
    expect(finding?.signalIds).toHaveLength(SIGNAL_IDS_PER_FINDING);
    expect(finding?.signalIds.slice(0, 3)).toEqual(['t-24', 't-23', 't-22']);
    expect(finding?.description).toBe(`Timeouts. (25 signals, ${SIGNAL_IDS_PER_FINDING} shown)`);
    expect(proposal.analyzedSignalIds).toEqual(finding?.signalIds);
  });
});
