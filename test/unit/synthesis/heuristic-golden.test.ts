/**
 * Golden test of heuristic-v1: a few fixed pipelines whose findings and patches were recorded
 * before findings cited executions; the behaviour must not drift (executionIds aside).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { SynthesisContext, SynthesisProposal } from '../../../lambdas/core/ports/synthesis.ts';
import type { Slot } from '../../../lambdas/core/schemas/pipelines.ts';
import type { Execution, Signal } from '../../../lambdas/core/schemas/records.ts';
import { synthesizeHeuristically } from '../../../lambdas/synthesis/heuristic/engine.ts';

const GOLDEN = new URL('./golden/heuristic-v1.json', import.meta.url);

const slots: Slot[] = [
  {
    id: 'system-prompt',
    name: 'System prompt',
    kind: 'prompt',
    settings: { instructions: 'You summarise support tickets for the on-call engineer.' },
  },
  {
    id: 'generator',
    name: 'Generator',
    kind: 'model',
    settings: { model: 'model-large', temperature: 0.7, maxTokens: 1024, timeoutMs: 30_000, maxRetries: 1 },
  },
  {
    id: 'kb-search',
    name: 'Knowledge base search',
    kind: 'retrieval',
    settings: { index: 'kb-v3', topK: 20, timeoutMs: 2_000 },
  },
];

const signal = (
  id: string,
  minute: number,
  fields: Partial<Signal> & Pick<Signal, 'kind' | 'message'>,
): Signal => ({
  id,
  pipelineId: 'pipe-g',
  severity: 'warning',
  occurredAt: new Date(Date.UTC(2025, 4, 2, 12, 59 - minute)).toISOString(),
  ...fields,
});
const signalsOf = (
  prefix: string,
  count: number,
  fields: Partial<Signal> & Pick<Signal, 'kind' | 'message'>,
) => Array.from({ length: count }, (_, index) => signal(`${prefix}-${index + 1}`, index, fields));

/** `count` runs, newest first; those for which `fails(index)` names a slot fail there with its error. */
const executions = (
  count: number,
  fails: (index: number) => { slotId: string; error: string } | undefined,
  durationMs: (slotId: string, index: number) => number = () => 1_000,
): Execution[] =>
  Array.from({ length: count }, (_, index) => {
    const failure = fails(index);
    return {
      id: `exec-${String(index + 1).padStart(2, '0')}`,
      pipelineId: 'pipe-g',
      configurationId: 'config-g',
      status: failure === undefined ? 'succeeded' : 'failed',
      durationMs: 5_000,
      startedAt: new Date(Date.UTC(2025, 4, 2, 11, 59 - index)).toISOString(),
      ...(failure === undefined ? {} : { error: failure.error }),
      slotResults: slots.map((slot) => {
        const failsHere = failure?.slotId === slot.id;
        return {
          slotId: slot.id,
          status: failsHere ? 'failed' : 'succeeded',
          durationMs: durationMs(slot.id, index),
          ...(failsHere ? { error: failure?.error } : {}),
        };
      }),
    };
  });

const context = (signals: Signal[], runs: Execution[]): SynthesisContext => ({
  pipeline: {
    id: 'pipe-g',
    teamId: 'team-g',
    name: 'Golden pipeline',
    activeConfigurationId: 'config-g',
    createdAt: '2025-05-01T00:00:00Z',
  },
  baseConfiguration: {
    id: 'config-g',
    pipelineId: 'pipe-g',
    version: 1,
    slots,
    source: 'manual',
    createdAt: '2025-05-01T00:00:00Z',
    createdBy: 'user-g',
  },
  signals,
  executions: runs,
});

/** The recorded pipelines. */
const GOLDEN_PIPELINES: Record<string, () => SynthesisContext> = {
  'timeouts in the generator': () =>
    context(
      signalsOf('sig-timeout', 6, {
        kind: 'error',
        severity: 'critical',
        message: 'Model call timed out after 30000 ms',
        slotId: 'generator',
      }),
      executions(12, (index) =>
        index % 3 !== 2 ? { slotId: 'generator', error: 'Timeout after 30000 ms' } : undefined,
      ),
    ),
  'malformed output and truncation': () =>
    context(
      [
        ...signalsOf('sig-json', 5, {
          kind: 'error',
          message: 'Output is not valid JSON: unexpected token } at position 88',
          slotId: 'generator',
        }),
        ...signalsOf('sig-trunc', 4, {
          kind: 'error',
          message: 'Answer cut off: stop_reason max_tokens',
          slotId: 'generator',
        }),
      ],
      executions(15, (index) =>
        index < 4 ? { slotId: 'generator', error: 'finish_reason length: output truncated' } : undefined,
      ),
    ),
  'poor feedback': () =>
    context(
      [
        ...signalsOf('sig-feedback', 4, { kind: 'feedback', message: 'User marked the summary unhelpful' }),
        ...signalsOf('sig-eval', 3, {
          kind: 'eval',
          severity: 'info',
          message: 'Faithfulness eval',
          value: 0.3,
        }),
      ],
      executions(10, () => undefined),
    ),
  'slow retrieval and unattributed errors': () =>
    context(
      signalsOf('sig-rate', 3, { kind: 'error', message: 'HTTP 429 rate limited by upstream' }),
      executions(
        10,
        () => undefined,
        (slotId) => (slotId === 'kb-search' ? 25_000 : 800),
      ).map((run, index) => (index < 3 ? { ...run, status: 'failed', error: 'Worker crashed' } : run)),
    ),
  'a healthy pipeline': () =>
    context(
      signalsOf('sig-deploy', 3, { kind: 'deploy', severity: 'info', message: 'Configuration reloaded' }),
      executions(20, () => undefined),
    ),
};

/** What the golden pins: today's findings and patches, without the evidence ids added since. */
const pinned = (proposal: SynthesisProposal) => ({
  summary: proposal.diagnosis.summary,
  findings: proposal.diagnosis.findings.map(({ id, description, signalIds }) => ({
    id,
    description,
    signalIds,
  })),
  changes: proposal.changes,
  proposedSlots: proposal.proposedSlots,
  analyzedSignalIds: proposal.analyzedSignalIds,
});

describe('heuristic-v1 golden', () => {
  const actual = Object.fromEntries(
    Object.entries(GOLDEN_PIPELINES).map(([name, build]) => [name, pinned(synthesizeHeuristically(build()))]),
  );
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(GOLDEN, `${JSON.stringify(actual, null, 2)}\n`);
  const golden = JSON.parse(readFileSync(GOLDEN, 'utf8')) as Record<string, unknown>;

  it('records every pipeline', () => {
    expect(Object.keys(golden).sort()).toEqual(Object.keys(GOLDEN_PIPELINES).sort());
  });
  for (const name of Object.keys(GOLDEN_PIPELINES)) {
    it(`keeps the findings and patches of "${name}"`, () => {
      expect(actual[name]).toEqual(golden[name]);
    });
  }
});
