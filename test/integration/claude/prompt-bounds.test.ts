import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defaultTeamSettings } from '../../../lambdas/core/lifecycle.ts';
import { DEFAULT_MODEL_PRICES } from '../../../lambdas/core/model-pricing.ts';
import type { PipelineRepository } from '../../../lambdas/core/ports/pipelines.ts';
import type { RunRepository } from '../../../lambdas/core/ports/runs.ts';
import { EXECUTION_WINDOW, SIGNAL_WINDOW } from '../../../lambdas/core/ports/synthesis.ts';
import { newPendingRun } from '../../../lambdas/core/run-state.ts';
import { LIMITS } from '../../../lambdas/core/schemas/common.ts';
import type { Configuration, Pipeline, Slot } from '../../../lambdas/core/schemas/pipelines.ts';
import type { Execution, Severity, Signal } from '../../../lambdas/core/schemas/records.ts';
import type { SynthesisRun } from '../../../lambdas/core/schemas/runs.ts';
import { makeGenerateRun } from '../../../lambdas/core/use-cases/generation.ts';
import { createClaudeV1 } from '../../../lambdas/synthesis/claude/engine.ts';
import { PROMPT_LIMITS } from '../../../lambdas/synthesis/claude/prompt.ts';
import { estimateTokens } from '../../../lambdas/synthesis/text-budget.ts';
import { staticApiKeySource } from '../../../lambdas/wiring/anthropic.ts';
import { nanoidGenerator, systemClock } from '../../../lambdas/wiring/clock.ts';
import {
  type AnthropicFake,
  promptText,
  startAnthropicFake,
  toolReply,
} from '../../support/anthropic-fake.ts';
import { ANTHROPIC_KEY_PREFIX } from '../../support/fake-secrets.ts';
import { FIXTURE_SLOTS, goodDraft, partialPort } from './fixtures.ts';

/**
 * Prompts for pipelines of 10, 10,000 and 1,000,000 signals, built by the real use case and
 * engine and sent to the fake API. The pipeline store is a fake that generates records lazily,
 * newest first, and counts every record it hands out: the bound on reads is measured, not assumed.
 */

const SEVERITIES: Severity[] = ['info', 'warning', 'critical'];
const KINDS = ['error', 'timeout', 'feedback', 'latency', 'format', 'truncation'];
const START = Date.parse('2025-01-01T00:00:00Z');

interface CountingStore {
  pipelines: PipelineRepository;
  itemsRead: () => number;
}

/** A store whose history has `total` signals and runs that exist only when read. */
function countingStore(
  pipeline: Pipeline,
  configuration: Configuration,
  total: number,
  messageBytes: number,
): CountingStore {
  let read = 0;
  const filler = 'x'.repeat(Math.max(0, messageBytes - 60));
  // Index 0 is the newest; every record is distinct, the worst case for deduplication.
  const signalAt = (index: number): Signal => ({
    id: `s${index}`,
    pipelineId: pipeline.id,
    kind: KINDS[index % KINDS.length] as string,
    severity: SEVERITIES[index % SEVERITIES.length] as Severity,
    message: `failure number ${total - index} in ${configuration.slots.length} slots ${filler}`.slice(
      0,
      LIMITS.messageLength,
    ),
    slotId: configuration.slots[index % configuration.slots.length]?.id,
    ...(index % 4 === 0 ? { value: index } : {}),
    occurredAt: new Date(START + (total - index) * 1000).toISOString(),
  });
  const executionAt = (index: number): Execution => ({
    id: `e${index}`,
    pipelineId: pipeline.id,
    configurationId: configuration.id,
    status: index % 5 === 0 ? 'failed' : 'succeeded',
    durationMs: 500 + ((index * 7919) % 20_000),
    startedAt: new Date(START + (total - index) * 1000).toISOString(),
    ...(index % 5 === 0 ? { error: `run ${index} failed: ${filler}`.slice(0, LIMITS.messageLength) } : {}),
    slotResults: configuration.slots.map((slot, position) => ({
      slotId: slot.id,
      status: (index + position) % 7 === 0 ? 'failed' : 'succeeded',
      durationMs: 100 + ((index * 31 + position) % 5_000),
      ...((index + position) % 7 === 0
        ? { error: `slot error ${index}-${position} ${filler}`.slice(0, LIMITS.messageLength) }
        : {}),
    })),
  });
  function* newest<T>(limit: number, at: (index: number) => T): Generator<T> {
    for (let index = 0; index < Math.min(limit, total); index++) {
      read += 1;
      yield at(index);
    }
  }
  const pipelines = partialPort<PipelineRepository>({
    getPipeline: async (id) => (id === pipeline.id ? pipeline : null),
    getConfiguration: async (_pipelineId, id) => (id === configuration.id ? configuration : null),
    recentSignals: async (_pipelineId, limit) => [...newest(limit, signalAt)],
    recentExecutions: async (_pipelineId, limit) => [...newest(limit, executionAt)],
    listActivations: async () => ({ items: [], nextCursor: null }),
  });
  return { pipelines, itemsRead: () => read };
}

/** Runs held in memory: only what makeGenerateRun calls. */
function memoryRuns(run: SynthesisRun): RunRepository {
  let stored = run;
  return partialPort<RunRepository>({
    get: async () => stored,
    claim: async (_id, startedAt) => {
      if (stored.status !== 'pending') return { outcome: 'finished', run: stored };
      stored = { ...stored, status: 'generating', generationStartedAt: startedAt };
      return { outcome: 'claimed', run: stored };
    },
    completeGenerated: async (generated) => {
      stored = generated;
      return generated;
    },
    fail: async (_id, errorMessage) => {
      stored = { ...stored, status: 'failed', errorMessage };
      return stored;
    },
  });
}

function fixture(slots: Slot[]) {
  const createdAt = new Date().toISOString();
  const pipeline: Pipeline = {
    id: 'p-big',
    teamId: 't-1',
    name: 'big pipeline',
    activeConfigurationId: 'c-1',
    createdAt,
  };
  const configuration: Configuration = {
    id: 'c-1',
    pipelineId: pipeline.id,
    version: 1,
    slots,
    source: 'manual',
    createdAt,
    createdBy: 'u-1',
  };
  const run = newPendingRun({
    id: 'R'.repeat(21),
    pipelineId: pipeline.id,
    teamId: pipeline.teamId,
    synthesisHandler: 'claude-v1',
    baseConfigurationId: configuration.id,
    jobId: 'job-1',
    createdAt,
    triggeredBy: 'u-1',
  });
  return { pipeline, configuration, run };
}

/** The estimate of the request the fake received, counted the way PROMPT_LIMITS counts it. */
// biome-ignore lint/suspicious/noExplicitAny: the received body is read field by field
function estimateReceived(body: any): number {
  return (
    estimateTokens(body.system[0].text) +
    estimateTokens(JSON.stringify(body.tools[0])) +
    estimateTokens(promptText(body)) +
    PROMPT_LIMITS.toolUseOverheadTokens
  );
}

let fake: AnthropicFake;
beforeAll(async () => {
  fake = await startAnthropicFake();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
});

async function measure(slots: Slot[], total: number, messageBytes: number) {
  const { pipeline, configuration, run } = fixture(slots);
  const store = countingStore(pipeline, configuration, total, messageBytes);
  const runs = memoryRuns(run);
  const engine = createClaudeV1({
    keys: staticApiKeySource(`${ANTHROPIC_KEY_PREFIX}bounds-test`),
    baseURL: fake.url,
    model: 'claude-bounds-test',
    maxTokens: 1_024,
    timeBudgetMs: 5_000,
    requestTimeoutMs: 2_000,
    maxRetries: 0,
  });
  const generateRun = makeGenerateRun({
    runs,
    pipelines: store.pipelines,
    evidence: {
      save: async () => undefined,
      load: async () => ({ signals: [], executions: [] }),
      remove: async () => undefined,
    },
    // No refinement: the chain's evaluation is never read.
    evaluations: {
      getSet: async () => null,
      saveSetOnce: async (_runId, set) => set,
      sampleExecutions: async () => [],
      loadExecutions: async () => [],
      listResults: async () => [],
      recordResults: async () => {
        throw new Error('not used');
      },
    },
    // The team's default windows: the counting store answers from its whole history regardless.
    settings: { get: async (teamId) => defaultTeamSettings(teamId), put: async () => undefined },
    prices: DEFAULT_MODEL_PRICES,
    engines: { 'claude-v1': engine },
    clock: systemClock,
    ids: nanoidGenerator,
    leaseMs: 120_000,
    isTransient: () => false,
  });
  fake.script(toolReply(goodDraft()));

  const outcome = await generateRun({ runId: run.id, jobId: run.jobId });

  const body = fake.requests[0]?.body;
  const prompt: string = promptText(body);
  return {
    outcome,
    estimate: estimateReceived(body),
    itemsRead: store.itemsRead(),
    shown: (prompt.match(/^\[\d+\] /gm) ?? []).length,
    run: await runs.get(run.id),
  };
}

describe('the claude-v1 prompt is bounded whatever the history', () => {
  it.each([10, 10_000, 1_000_000])('for %i signals and as many runs', async (total) => {
    const measured = await measure(FIXTURE_SLOTS, total, 160);

    console.log(
      `claude-v1 prompt for ${total.toLocaleString('en-US')} signals: ~${measured.estimate} estimated input tokens ` +
        `(bound ${PROMPT_LIMITS.maxInputTokens}), ${measured.shown} signals shown, ${measured.itemsRead} items read`,
    );
    expect(measured.outcome.outcome).toBe('generated');
    expect(measured.run?.status).toBe('generated');
    expect(measured.estimate).toBeLessThanOrEqual(PROMPT_LIMITS.maxInputTokens);
    expect(measured.itemsRead).toBeLessThanOrEqual(SIGNAL_WINDOW + EXECUTION_WINDOW);
    expect(measured.itemsRead).toBe(Math.min(total, SIGNAL_WINDOW) + Math.min(total, EXECUTION_WINDOW));
    expect(measured.shown).toBe(Math.min(total, PROMPT_LIMITS.shownSignals));
  });

  it('stays under the bound for the largest configuration and the longest texts the API accepts', async () => {
    const hugeText = 'Follow the style guide. '.repeat(700).slice(0, 15_000);
    const slots: Slot[] = Array.from({ length: LIMITS.slotsPerConfiguration }, (_, i) => ({
      id: `slot-${String(i).padStart(2, '0')}-${'k'.repeat(50)}`,
      name: `Slot ${i} ${'n'.repeat(LIMITS.nameLength)}`.slice(0, LIMITS.nameLength),
      kind: i % 2 === 0 ? 'model' : 'prompt',
      settings: { instructions: hugeText.slice(0, 15_500 - 40), temperature: 0.5 },
    }));

    const measured = await measure(slots, 1_000_000, LIMITS.messageLength);

    console.log(
      `claude-v1 prompt, worst case (50 slots of 16 KB settings, 4,000-character messages, 1,000,000 signals): ` +
        `~${measured.estimate} estimated input tokens, ${measured.shown} signals shown, ${measured.itemsRead} items read`,
    );
    expect(measured.estimate).toBeLessThanOrEqual(PROMPT_LIMITS.maxInputTokens);
    expect(measured.itemsRead).toBe(SIGNAL_WINDOW + EXECUTION_WINDOW);
    expect(measured.shown).toBeGreaterThan(0);
  });
});
