import { describe, expect, it } from 'vitest';
import type { SynthesisContext, SynthesisProposal } from '../../../lambdas/core/ports/synthesis.ts';
import type { Configuration, Slot } from '../../../lambdas/core/schemas/pipelines.ts';
import { slotSettingsSchema } from '../../../lambdas/core/schemas/pipelines.ts';
import type { Execution, Signal } from '../../../lambdas/core/schemas/records.ts';
import { selectShownSignals } from '../../../lambdas/synthesis/evidence/signals.ts';
import { SIGNAL_IDS_PER_FINDING } from '../../../lambdas/synthesis/finalize.ts';
import { heuristicV1, synthesizeHeuristically } from '../../../lambdas/synthesis/heuristic/engine.ts';
import { FORMAT_INSTRUCTION } from '../../../lambdas/synthesis/heuristic/rules/format.ts';
import { QUALITY_INSTRUCTION } from '../../../lambdas/synthesis/heuristic/rules/quality.ts';
import { applyMergePatch } from '../../../lambdas/synthesis/merge-patch.ts';

/* ---- fixtures: a ticket-summary pipeline with a prompt, a model and a retrieval step ---- */

const promptSlot = (settings: Slot['settings'] = {}): Slot => ({
  id: 'system-prompt',
  name: 'System prompt',
  kind: 'prompt',
  settings: { instructions: 'You summarise support tickets for the on-call engineer.', ...settings },
});
const modelSlot = (settings: Slot['settings'] = {}, id = 'generator'): Slot => ({
  id,
  name: 'Generator',
  kind: 'model',
  settings: {
    model: 'model-large',
    temperature: 0.7,
    maxTokens: 1024,
    timeoutMs: 30_000,
    maxRetries: 1,
    ...settings,
  },
});
const retrievalSlot = (settings: Slot['settings'] = {}): Slot => ({
  id: 'kb-search',
  name: 'Knowledge base search',
  kind: 'retrieval',
  settings: { index: 'kb-v3', topK: 20, timeoutMs: 2_000, ...settings },
});

const configuration = (slots: Slot[] = [promptSlot(), modelSlot(), retrievalSlot()]): Configuration => ({
  id: 'config-1',
  pipelineId: 'pipe-1',
  version: 1,
  slots,
  source: 'manual',
  createdAt: '2025-03-01T00:00:00Z',
  createdBy: 'user-1',
});

let sequence = 0;
/** Signals `count` copies of one report, newest first, each a minute apart. */
const signals = (count: number, fields: Partial<Signal> & Pick<Signal, 'kind' | 'message'>): Signal[] =>
  Array.from({ length: count }, (_, index) => {
    sequence += 1;
    return {
      id: `sig-${fields.kind}-${sequence}`,
      pipelineId: 'pipe-1',
      severity: 'warning' as const,
      occurredAt: new Date(Date.UTC(2025, 2, 2, 12, 59 - index)).toISOString(),
      ...fields,
    };
  });

/** `count` runs; the first `failing` fail in `slotId` with `error`, every slot taking `durationMs`. */
const runs = (
  count: number,
  options: {
    slotIds?: string[];
    failing?: number;
    failingSlotId?: string;
    error?: string;
    durationMs?: number;
  } = {},
): Execution[] =>
  Array.from({ length: count }, (_, index) => {
    const failed = index < (options.failing ?? 0);
    const slotIds = options.slotIds ?? ['system-prompt', 'generator', 'kb-search'];
    return {
      id: `run-${index}`,
      pipelineId: 'pipe-1',
      configurationId: 'config-1',
      status: failed ? ('failed' as const) : ('succeeded' as const),
      durationMs: 5_000,
      startedAt: new Date(Date.UTC(2025, 2, 2, 11, index)).toISOString(),
      slotResults: slotIds.map((slotId) => {
        const failsHere = failed && slotId === options.failingSlotId;
        return {
          slotId,
          status: failsHere ? ('failed' as const) : ('succeeded' as const),
          durationMs: options.durationMs ?? 1_000,
          ...(failsHere ? { error: options.error ?? 'failed' } : {}),
        };
      }),
    };
  });

const context = (parts: Partial<SynthesisContext> = {}): SynthesisContext => {
  const baseConfiguration = parts.baseConfiguration ?? configuration();
  return {
    pipeline: {
      id: 'pipe-1',
      teamId: 'team-1',
      name: 'Ticket summaries',
      activeConfigurationId: baseConfiguration.id,
      createdAt: '2025-03-01T00:00:00Z',
    },
    baseConfiguration,
    signals: parts.signals ?? [],
    executions: parts.executions ?? [],
  };
};

const settingsOf = (proposal: SynthesisProposal, slotId: string) =>
  proposal.proposedSlots.find((slot) => slot.id === slotId)?.settings;
const patchesFor = (proposal: SynthesisProposal, slotId: string) =>
  proposal.changes.filter((change) => change.slotId === slotId).map((change) => change.patch);
const warningTypes = (proposal: SynthesisProposal) =>
  proposal.structuredWarnings.map((warning) => warning.type);

/* ---- scenarios ---- */

const timeoutHeavy = () =>
  context({
    signals: [
      ...signals(8, {
        kind: 'error',
        severity: 'critical',
        message: 'Model call timed out after 30000 ms',
        slotId: 'generator',
      }),
      ...signals(2, { kind: 'deploy', severity: 'info', message: 'Configuration reloaded' }),
    ],
    executions: runs(20, { failing: 6, failingSlotId: 'generator', error: 'Timeout after 30000 ms' }),
  });
const retrievalTimeouts = () =>
  context({
    signals: signals(3, { kind: 'deploy', severity: 'info', message: 'Index rebuilt' }),
    executions: runs(20, { failing: 5, failingSlotId: 'kb-search', error: 'ETIMEDOUT' }),
  });
const rateLimited = () =>
  context({
    signals: signals(5, {
      kind: 'error',
      message: 'Upstream rate limit exceeded (429)',
      slotId: 'generator',
    }),
  });
const truncation = (generator: Slot = modelSlot()) =>
  context({
    baseConfiguration: configuration([promptSlot(), generator, retrievalSlot()]),
    signals: [
      ...signals(3, {
        kind: 'truncation',
        message: 'Summary truncated: stop_reason=max_tokens',
        slotId: 'generator',
      }),
      ...signals(1, { kind: 'quality', message: 'Summary cut off mid-sentence', slotId: 'generator' }),
    ],
  });
const parseErrors = (base: Configuration = configuration()) =>
  context({
    baseConfiguration: base,
    signals: signals(4, {
      kind: 'parse_error',
      message: 'Could not parse model output as JSON: Unexpected token } at position 212',
      slotId: 'generator',
    }),
  });
const slowModel = () =>
  context({
    baseConfiguration: configuration([promptSlot(), modelSlot({ maxTokens: 4_096 }), retrievalSlot()]),
    signals: signals(4, {
      kind: 'latency',
      message: 'p95 latency above target',
      slotId: 'generator',
      value: 28_000,
    }),
  });
const slowRetrieval = () =>
  context({
    signals: signals(3, { kind: 'deploy', severity: 'info', message: 'Index rebuilt' }),
    executions: runs(10, { slotIds: ['kb-search'], durationMs: 25_000 }),
  });
const badAnswers = () =>
  context({
    signals: [
      ...signals(3, {
        kind: 'feedback',
        message: 'User marked the summary as wrong',
        slotId: 'system-prompt',
      }),
      ...signals(2, {
        kind: 'eval',
        severity: 'info',
        message: 'faithfulness',
        slotId: 'system-prompt',
        value: 0.3,
      }),
    ],
  });
const healthy = () =>
  context({
    signals: [
      ...signals(4, {
        kind: 'eval',
        severity: 'info',
        message: 'faithfulness',
        slotId: 'system-prompt',
        value: 0.93,
      }),
      ...signals(3, {
        kind: 'latency',
        severity: 'info',
        message: 'p50 latency',
        slotId: 'generator',
        value: 1_800,
      }),
    ],
    executions: runs(30),
  });
const toolTruncation = () =>
  context({
    baseConfiguration: configuration([
      promptSlot(),
      {
        id: 'ticket-tool',
        name: 'Ticket lookup',
        kind: 'tool',
        settings: { endpoint: 'https://tickets.example' },
      },
      modelSlot(),
    ]),
    signals: signals(3, { kind: 'tool', message: 'Tool output truncated to 4 KB', slotId: 'ticket-tool' }),
  });
const staleSlot = () =>
  context({
    signals: signals(3, { kind: 'error', message: 'Reranker timed out', slotId: 'reranker' }),
  });
const twoModels = () =>
  context({
    baseConfiguration: configuration([
      promptSlot(),
      modelSlot({}, 'drafter'),
      modelSlot({ maxTokens: 512 }, 'polisher'),
    ]),
    signals: signals(3, { kind: 'truncation', message: 'Output truncated at max tokens' }),
  });

/** Every recognised fault in every slot at once, without slot ids in half of them. */
const busy = () => {
  const slots = [
    promptSlot(),
    modelSlot({}, 'drafter'),
    modelSlot({ temperature: 1.2, maxTokens: 8_000 }, 'polisher'),
    modelSlot({ maxRetries: 5, timeoutMs: 600_000 }, 'judge'),
    retrievalSlot(),
    { id: 'ticket-tool', name: 'Ticket lookup', kind: 'tool', settings: {} },
  ];
  const messages = [
    'Output truncated at max tokens',
    'Call timed out',
    'Invalid JSON in output',
    'Rate limit exceeded (429)',
    'p95 latency high',
    'User marked the answer as wrong',
    'Unhandled error',
  ];
  const reports = slots.flatMap((slot) =>
    messages.flatMap((message, index) => [
      ...signals(2, { kind: 'report', severity: 'critical', message, slotId: slot.id, value: 40_000 }),
      ...signals(1, { kind: 'report', message: `${message} (${index})` }),
    ]),
  );
  return context({
    baseConfiguration: configuration(slots),
    signals: [...reports, ...signals(2, { kind: 'error', message: 'Reranker failed', slotId: 'reranker' })],
    executions: runs(40, {
      slotIds: slots.map((slot) => slot.id),
      failing: 12,
      failingSlotId: 'judge',
      error: 'ETIMEDOUT',
    }),
  });
};

const allScenarios: [string, () => SynthesisContext][] = [
  ['timeout-heavy slot', timeoutHeavy],
  ['timeouts seen only in runs of a retrieval slot', retrievalTimeouts],
  ['rate limits', rateLimited],
  ['truncation', () => truncation()],
  ['JSON parse errors', () => parseErrors()],
  ['slow model', slowModel],
  ['slow retrieval', slowRetrieval],
  ['bad answers', badAnswers],
  ['healthy pipeline', healthy],
  ['truncation on a tool slot', toolTruncation],
  ['signals of a removed slot', staleSlot],
  ['two model slots', twoModels],
  ['empty window', () => context()],
  ['a busy pipeline with every fault at once', busy],
];

describe('heuristicV1', () => {
  it('raises the timeout of the slot whose calls time out, citing the timeout signals', async () => {
    const input = timeoutHeavy();

    const proposal = await heuristicV1.generate(input);

    expect(proposal.changes).toHaveLength(1);
    expect(proposal.changes[0]).toMatchObject({
      slotId: 'generator',
      patch: { timeoutMs: 60_000 },
      findingIds: ['1'],
    });
    const [finding] = proposal.diagnosis.findings;
    expect(finding?.description).toContain('slot "generator"');
    expect(finding?.description).toContain('6 of 20 recent runs');
    const timeoutSignalIds = input.signals
      .filter((signal) => signal.kind === 'error')
      .map((signal) => signal.id);
    expect(finding?.signalIds.length).toBeGreaterThan(0);
    expect(timeoutSignalIds).toEqual(expect.arrayContaining(finding?.signalIds ?? []));
    expect(settingsOf(proposal, 'kb-search')).toEqual(retrievalSlot().settings);
  });

  it('finds timeouts concentrated in a retrieval slot from run history alone and patches that slot', async () => {
    const input = retrievalTimeouts();

    const proposal = await heuristicV1.generate(input);

    expect(proposal.changes.map(({ slotId, patch }) => ({ slotId, patch }))).toEqual([
      { slotId: 'kb-search', patch: { timeoutMs: 4_000 } },
    ]);
    expect(proposal.diagnosis.findings[0]?.description).toContain('5 of 20 recent runs failed there');
    expect(settingsOf(proposal, 'generator')).toEqual(modelSlot().settings);
  });

  it('cites the executions behind "8 of 12 recent runs failed", most recent first', async () => {
    const input = context({
      executions: runs(12, { failing: 8, failingSlotId: 'generator', error: 'Timeout after 30000 ms' }),
    });

    const proposal = await heuristicV1.generate(input);

    const [finding] = proposal.diagnosis.findings;
    expect(finding?.description).toContain('8 of 12 recent runs failed there');
    expect(finding?.signalIds).toEqual([]);
    expect(finding?.executionIds).toEqual([
      'run-7',
      'run-6',
      'run-5',
      'run-4',
      'run-3',
      'run-2',
      'run-1',
      'run-0',
    ]);
    expect(proposal.analyzedExecutionIds).toHaveLength(12);
  });

  it('cites at most the 20 most recent of the failed runs', async () => {
    const input = context({
      executions: runs(40, { failing: 30, failingSlotId: 'kb-search', error: 'ETIMEDOUT' }),
    });

    const proposal = await heuristicV1.generate(input);

    const cited = proposal.diagnosis.findings[0]?.executionIds ?? [];
    expect(cited).toEqual(Array.from({ length: 20 }, (_, index) => `run-${29 - index}`));
  });

  it('cites the failed runs naming no slot for a failure finding with no slot', async () => {
    const executions = runs(10).map((run, index) =>
      index < 3 ? { ...run, status: 'failed' as const, error: 'Worker crashed' } : run,
    );

    const proposal = await heuristicV1.generate(context({ executions }));

    const finding = proposal.diagnosis.findings.find((found) => found.description.startsWith('Errors'));
    expect(finding?.executionIds).toEqual(['run-2', 'run-1', 'run-0']);
  });

  it('cites the runs that were slow in the slot of a latency finding', async () => {
    const executions = runs(10, { slotIds: ['kb-search'], durationMs: 1_000 }).map((run, index) =>
      index % 2 === 0
        ? { ...run, slotResults: [{ slotId: 'kb-search', status: 'succeeded' as const, durationMs: 25_000 }] }
        : run,
    );

    const proposal = await heuristicV1.generate(context({ executions }));

    const finding = proposal.diagnosis.findings.find((found) => found.description.startsWith('High latency'));
    expect(finding?.executionIds).toEqual(['run-8', 'run-6', 'run-4', 'run-2', 'run-0']);
  });

  it('flags two JSON errors against twenty successful runs of the slot as thin and contradicted, at low confidence', async () => {
    const input = context({
      signals: signals(2, { kind: 'error', message: 'Output is not valid JSON', slotId: 'generator' }),
      executions: runs(20),
    });

    const proposal = await heuristicV1.generate(input);

    const changeIds = proposal.changes.map((change) => change.id);
    expect(changeIds).toHaveLength(2);
    expect(proposal.confidence).toBe('low');
    for (const type of ['thin_evidence', 'contradicted_evidence']) {
      expect(proposal.structuredWarnings).toContainEqual(expect.objectContaining({ type, changeIds }));
    }
  });

  it('adds a retry for rate-limit errors', async () => {
    const input = rateLimited();

    const proposal = await heuristicV1.generate(input);

    expect(patchesFor(proposal, 'generator')).toEqual([{ maxRetries: 2 }]);
    expect(warningTypes(proposal)).not.toContain('speculative_change');
  });

  it('doubles maxTokens for truncated output', async () => {
    const input = truncation();

    const proposal = await heuristicV1.generate(input);

    expect(patchesFor(proposal, 'generator')).toEqual([{ maxTokens: 2_048 }]);
    expect(proposal.changes[0]?.findingIds).toEqual(['1']);
    // Two shown signals, each standing for its repeats: the finding cites all four it counts.
    expect(proposal.diagnosis.findings[0]?.signalIds).toHaveLength(4);
  });

  it('does not raise maxTokens past its cap, and says why nothing changed', async () => {
    const input = truncation(modelSlot({ maxTokens: 32_768 }));

    const proposal = await heuristicV1.generate(input);

    expect(proposal.changes).toEqual([]);
    expect(warningTypes(proposal)).toEqual(expect.arrayContaining(['no_applicable_change', 'no_changes']));
    const explanation = proposal.structuredWarnings.find(
      (warning) => warning.type === 'no_applicable_change',
    );
    expect(explanation?.message).toContain('maxTokens is already 32768');
    expect(proposal.diagnosis.summary).toContain('No changes proposed');
  });

  it('patches the model slot, not the tool, when a tool slot reports truncation', async () => {
    const input = toolTruncation();

    const proposal = await heuristicV1.generate(input);

    expect(proposal.changes.map(({ slotId, patch }) => ({ slotId, patch }))).toEqual([
      { slotId: 'generator', patch: { maxTokens: 2_048 } },
    ]);
    expect(settingsOf(proposal, 'ticket-tool')).toEqual({ endpoint: 'https://tickets.example' });
  });

  it('answers JSON parse errors with a lower temperature and a stricter instruction in the prompt', async () => {
    const input = parseErrors();

    const proposal = await heuristicV1.generate(input);

    expect(patchesFor(proposal, 'generator')).toEqual([{ temperature: 0.35 }]);
    expect(settingsOf(proposal, 'system-prompt')?.instructions).toBe(
      `You summarise support tickets for the on-call engineer.\n\n${FORMAT_INSTRUCTION}`,
    );
    expect(proposal.changes.every((change) => change.findingIds.includes('1'))).toBe(true);
  });

  it('does not repeat an instruction the prompt already has when run again on its own proposal', async () => {
    const first = await heuristicV1.generate(parseErrors());
    const next = configuration(first.proposedSlots);

    const second = await heuristicV1.generate(parseErrors(next));

    expect(patchesFor(second, 'system-prompt')).toEqual([]);
    expect(patchesFor(second, 'generator')).toEqual([{ temperature: 0 }]);
  });

  it('trims maxTokens of a slow model and flags the change as a guess', async () => {
    const input = slowModel();

    const proposal = await heuristicV1.generate(input);

    expect(patchesFor(proposal, 'generator')).toEqual([{ maxTokens: 3_072 }]);
    expect(proposal.structuredWarnings).toContainEqual(
      expect.objectContaining({ type: 'speculative_change', changeIds: [proposal.changes[0]?.id] }),
    );
  });

  it('halves topK of a retrieval slot whose runs are slow at p90', async () => {
    const input = slowRetrieval();

    const proposal = await heuristicV1.generate(input);

    expect(patchesFor(proposal, 'kb-search')).toEqual([{ topK: 10 }]);
    expect(proposal.diagnosis.findings[0]?.description).toContain('p90 duration 25000 ms over 10 runs');
  });

  it('raises rather than lowers maxTokens when the same slot is both slow and truncated', async () => {
    const input = context({ signals: [...truncation().signals, ...slowModel().signals] });

    const proposal = await heuristicV1.generate(input);

    expect(patchesFor(proposal, 'generator')).toEqual([{ maxTokens: 2_048 }]);
    expect(warningTypes(proposal)).toContain('conflicting_evidence');
  });

  it('adds a grounding instruction to the prompt slot for bad feedback and low eval scores, as a guess', async () => {
    const input = badAnswers();

    const proposal = await heuristicV1.generate(input);

    expect(patchesFor(proposal, 'system-prompt')).toEqual([
      { instructions: `You summarise support tickets for the on-call engineer.\n\n${QUALITY_INSTRUCTION}` },
    ]);
    expect(proposal.diagnosis.findings[0]?.signalIds).toHaveLength(5);
    expect(warningTypes(proposal)).toContain('speculative_change');
  });

  it('proposes nothing for an empty window and says so', async () => {
    const input = context();

    const proposal = await heuristicV1.generate(input);

    expect(proposal.changes).toEqual([]);
    expect(proposal.diagnosis).toEqual({
      summary: 'No fault found in 0 signals and 0 recent runs; no changes proposed.',
      findings: [],
    });
    expect(warningTypes(proposal)).toEqual(['thin_evidence', 'no_changes']);
    expect(proposal.confidence).toBe('low');
    expect(proposal.proposedSlots).toEqual(input.baseConfiguration.slots);
  });

  it('proposes nothing for a healthy pipeline whose signals are informational', async () => {
    const input = healthy();

    const proposal = await heuristicV1.generate(input);

    expect(proposal.changes).toEqual([]);
    expect(warningTypes(proposal)).toEqual(['no_changes']);
  });

  it('ignores signals of a slot the configuration no longer has and warns about them', async () => {
    const input = staleSlot();

    const proposal = await heuristicV1.generate(input);

    expect(proposal.changes).toEqual([]);
    expect(proposal.structuredWarnings).toContainEqual({
      type: 'stale_signals',
      message: expect.stringContaining('"reranker"'),
    });
  });

  it('flags the pick as a guess when unattributed evidence fits several model slots', async () => {
    const input = twoModels();

    const proposal = await heuristicV1.generate(input);

    expect(proposal.changes.map(({ slotId, patch }) => ({ slotId, patch }))).toEqual([
      { slotId: 'drafter', patch: { maxTokens: 2_048 } },
    ]);
    const guess = proposal.structuredWarnings.find((warning) => warning.type === 'speculative_change');
    expect(guess?.message).toContain('nearest of 2');
  });

  it('warns that evidence is thin when the window holds fewer than three signals and three runs', async () => {
    const input = context({
      signals: signals(1, { kind: 'truncation', message: 'Output truncated', slotId: 'generator' }),
    });

    const proposal = await heuristicV1.generate(input);

    expect(proposal.structuredWarnings.filter((warning) => warning.type === 'thin_evidence')).toEqual([
      {
        type: 'thin_evidence',
        message: 'Only 1 signal and 0 runs in the window; the diagnosis rests on little evidence.',
      },
      {
        type: 'thin_evidence',
        message: 'Finding 1 rests on thin evidence (finding 1: 1 signal, 0 runs). It weakens change 1.',
        changeIds: ['1'],
      },
    ]);
    expect(proposal.confidence).toBe('low');
  });

  it('shows at most 50 signals, one per repeated report, the most severe and newest first', () => {
    const window = [
      ...Array.from({ length: 80 }, (_, index) =>
        signals(2, { kind: 'error', severity: 'warning', message: `Tool failure #${index}` }),
      ).flat(),
      ...signals(3, { kind: 'error', severity: 'critical', message: 'Model crashed' }),
    ];

    const shown = selectShownSignals(window);

    expect(shown).toHaveLength(50);
    expect(shown[0]).toMatchObject({ severity: 'critical', message: 'Model crashed' });
    expect(shown[0]?.id).toBe(window.at(-3)?.id);
    expect(new Set(shown.map((signal) => signal.message)).size).toBe(50);
  });

  it('reports the strongest findings of a busy pipeline within the limits a draft allows', async () => {
    const input = busy();

    const proposal = await heuristicV1.generate(input);

    expect(proposal.diagnosis.findings).toHaveLength(8);
    expect(proposal.changes.length).toBeGreaterThan(0);
    expect(warningTypes(proposal)).toEqual(expect.arrayContaining(['findings_truncated', 'stale_signals']));
    // The 50 shown signals, and the repeats the findings cite (each at most SIGNAL_IDS_PER_FINDING).
    expect(proposal.analyzedSignalIds.slice(0, 50)).toHaveLength(50);
    for (const finding of proposal.diagnosis.findings) {
      expect(finding.signalIds.length).toBeLessThanOrEqual(SIGNAL_IDS_PER_FINDING);
      expect(proposal.analyzedSignalIds).toEqual(expect.arrayContaining(finding.signalIds));
    }
  });

  it('is named heuristic-v1', () => {
    expect(heuristicV1.name).toBe('heuristic-v1');
  });

  describe.each(allScenarios)('on %s', (_name, makeContext) => {
    it('gives the same proposal for the same input, whatever the order of equal-time signals', async () => {
      const input = makeContext();
      const reordered = {
        ...input,
        signals: [...input.signals].reverse(),
        executions: [...input.executions],
      };

      const [first, second, third] = await Promise.all([
        heuristicV1.generate(input),
        heuristicV1.generate(structuredClone(input)),
        heuristicV1.generate(reordered),
      ]);

      expect(second).toEqual(first);
      expect(third).toEqual(first);
    });

    it('cites only real shown signals, patches only known slots, and cites a finding with every change', () => {
      const input = makeContext();
      const signalIds = new Set(input.signals.map((signal) => signal.id));
      const slotIds = new Set(input.baseConfiguration.slots.map((slot) => slot.id));

      const proposal = synthesizeHeuristically(input);

      const findingIds = new Set(proposal.diagnosis.findings.map((finding) => finding.id));
      const changeIds = new Set(proposal.changes.map((change) => change.id));
      for (const id of proposal.analyzedSignalIds) expect(signalIds.has(id)).toBe(true);
      for (const finding of proposal.diagnosis.findings) {
        for (const id of finding.signalIds) expect(proposal.analyzedSignalIds).toContain(id);
      }
      for (const change of proposal.changes) {
        expect(slotIds.has(change.slotId)).toBe(true);
        expect(change.findingIds.length).toBeGreaterThan(0);
        for (const id of change.findingIds) expect(findingIds.has(id)).toBe(true);
      }
      for (const warning of proposal.structuredWarnings) {
        for (const id of warning.changeIds ?? []) expect(changeIds.has(id)).toBe(true);
      }
    });

    it('proposes slots that validate and equal the base with every patch applied, leaving the input alone', () => {
      const input = makeContext();
      const before = structuredClone(input);

      const proposal = synthesizeHeuristically(input);

      for (const slot of proposal.proposedSlots)
        expect(slotSettingsSchema.safeParse(slot.settings).success).toBe(true);
      const replayed = input.baseConfiguration.slots.map((slot) => ({
        ...slot,
        settings: proposal.changes
          .filter((change) => change.slotId === slot.id)
          .reduce((settings, change) => applyMergePatch(settings, change.patch), slot.settings),
      }));
      expect(proposal.proposedSlots).toEqual(replayed);
      expect(input).toEqual(before);
      expect(
        warningTypes(proposal).some((type) => type.startsWith('dropped') || type.startsWith('unknown')),
      ).toBe(false);
    });
  });
});
