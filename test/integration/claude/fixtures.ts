import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { nanoid } from 'nanoid';
import { inject } from 'vitest';
import { RETENTION_DAYS, type TeamSettingsStore } from '../../../lambdas/core/lifecycle.ts';
import { DEFAULT_MODEL_PRICES, type ModelPrices } from '../../../lambdas/core/model-pricing.ts';
import type { EvaluationStore } from '../../../lambdas/core/ports/evaluation.ts';
import type { PipelineRepository } from '../../../lambdas/core/ports/pipelines.ts';
import type { EvidenceStore, RunRepository } from '../../../lambdas/core/ports/runs.ts';
import type { SynthesisEngine } from '../../../lambdas/core/ports/synthesis.ts';
import { newPendingRun } from '../../../lambdas/core/run-state.ts';
import type { Configuration, Pipeline, Slot } from '../../../lambdas/core/schemas/pipelines.ts';
import type { Execution, Signal } from '../../../lambdas/core/schemas/records.ts';
import type { SynthesisRun } from '../../../lambdas/core/schemas/runs.ts';
import { makeGenerateRun } from '../../../lambdas/core/use-cases/generation.ts';
import { makeEvaluationStore } from '../../../lambdas/store/evaluations.ts';
import { makeEvidenceStore } from '../../../lambdas/store/evidence.ts';
import { makePipelineRepository } from '../../../lambdas/store/pipelines.ts';
import { makeRunRepository } from '../../../lambdas/store/runs.ts';
import { makeTeamSettingsStore } from '../../../lambdas/store/team-settings.ts';
import type { SynthesisDraft } from '../../../lambdas/synthesis/draft.ts';
import { createDocumentClient } from '../../../lambdas/wiring/aws.ts';
import { nanoidGenerator, systemClock } from '../../../lambdas/wiring/clock.ts';
import { isTransientFault } from '../../../lambdas/wiring/faults.ts';
import { createTables, type TableNames } from '../../../local/dynamodb.ts';
import { ANTHROPIC_KEY_PREFIX } from '../../support/fake-secrets.ts';

/** Secrets planted in the fixture pipeline: none of them may reach the model. */
export const PLANTED_SECRETS = {
  slotApiKey: `${ANTHROPIC_KEY_PREFIX}api03-PLANTEDslotKEY0123456789abcdef`,
  headerToken: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.c2lnbmF0dXJlcGxhbnRlZA',
  apiToken: 'psa_PLANTEDapiTOKEN0123456789abcdefgh12',
  password: 'hunter2-planted',
} as const;

export const FIXTURE_SLOTS: Slot[] = [
  { id: 'retrieve', name: 'Retrieve documents', kind: 'retrieval', settings: { topK: 8, timeoutMs: 1500 } },
  {
    id: 'answer-prompt',
    name: 'Answer prompt',
    kind: 'prompt',
    settings: { template: 'Answer the question using the documents.\n{{documents}}\n{{question}}' },
  },
  {
    id: 'answer-model',
    name: 'Answer model',
    kind: 'model',
    settings: {
      model: 'some-model',
      temperature: 0.9,
      maxTokens: 256,
      apiKey: PLANTED_SECRETS.slotApiKey,
      headers: { Authorization: `Bearer ${PLANTED_SECRETS.headerToken}` },
    },
  },
];

const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();

/**
 * Five timeouts of `retrieve` (one message, so shown once as [1], the newest: timeout-5), three
 * truncations of `answer-model` ([2], trunc-3), and one info signal carrying credentials ([3]).
 */
export function fixtureSignals(pipelineId: string): Signal[] {
  const signals: Signal[] = [];
  for (let i = 1; i <= 5; i++) {
    signals.push({
      id: `timeout-${i}`,
      pipelineId,
      kind: 'timeout',
      severity: 'critical',
      message: 'Retrieval timed out after 1500 ms',
      slotId: 'retrieve',
      occurredAt: minutesAgo(60 - i),
    });
  }
  for (let i = 1; i <= 3; i++) {
    signals.push({
      id: `trunc-${i}`,
      pipelineId,
      kind: 'truncation',
      severity: 'warning',
      message: 'stop_reason max_tokens',
      slotId: 'answer-model',
      occurredAt: minutesAgo(40 - i),
    });
  }
  signals.push({
    id: 'leaky-feedback',
    pipelineId,
    kind: 'feedback',
    severity: 'info',
    message: `User pasted ${PLANTED_SECRETS.apiToken} and password=${PLANTED_SECRETS.password} into the chat`,
    occurredAt: minutesAgo(30),
  });
  return signals;
}

export function fixtureExecutions(pipelineId: string, configurationId: string): Execution[] {
  return Array.from({ length: 10 }, (_, i) => {
    const failed = i % 3 === 0;
    return {
      id: `exec-${i}`,
      pipelineId,
      configurationId,
      status: failed ? 'failed' : 'succeeded',
      durationMs: 1_000 + i * 100,
      startedAt: minutesAgo(120 - i),
      ...(failed ? { error: 'retrieve failed' } : {}),
      slotResults: [
        {
          slotId: 'retrieve',
          status: failed ? 'failed' : 'succeeded',
          durationMs: failed ? 1_500 : 400 + i * 10,
          ...(failed ? { error: `Retrieval timed out after 1500 ms (query ${i})` } : {}),
        },
        { slotId: 'answer-model', status: 'succeeded', durationMs: 600 + i * 20 },
      ],
    } satisfies Execution;
  });
}

/** A draft that cites [1], [2], [E1] and [E4], patches two real slots and flags one change as a guess. */
export function goodDraft(): SynthesisDraft {
  return {
    diagnosis: {
      summary: 'Retrieval times out at 1.5 s and answers are cut off at 256 tokens.',
      findings: [
        // [E1] and [E4] are exec-9 and exec-6, the newest failed runs (numbered newest first).
        {
          id: '1',
          description: 'Retrieval times out after 1500 ms.',
          signalRefs: [1],
          executionRefs: [4, 1],
        },
        { id: '2', description: 'Answers stop at max_tokens.', signalRefs: [2] },
      ],
    },
    changes: [
      {
        id: '1',
        slotId: 'retrieve',
        description: 'Raise timeoutMs from 1500 to 4000.',
        rationale: 'Retrieval needs more than 1.5 s under load.',
        findingIds: ['1'],
        patch: { timeoutMs: 4000 },
      },
      {
        id: '2',
        slotId: 'answer-model',
        description: 'Raise maxTokens from 256 to 1024.',
        rationale: 'Answers are truncated at 256 tokens.',
        findingIds: ['2'],
        patch: { maxTokens: 1024 },
      },
    ],
    warnings: [{ type: 'speculative_change', message: 'The token budget is a guess.', changeIds: ['2'] }],
  };
}

export interface ClaudeTestBed {
  runs: RunRepository;
  pipelines: PipelineRepository;
  evidence: EvidenceStore;
  evaluations: EvaluationStore;
  settings: TeamSettingsStore;
  prices: ModelPrices;
}

/** Fresh tables on the shared DynamoDB Local and the real store adapters over them. */
export async function setUpStore(): Promise<ClaudeTestBed> {
  const client = new DynamoDBClient({
    endpoint: inject('dynamodbEndpoint'),
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const names = await createTables(client, `c${nanoid(8).replace(/[^A-Za-z0-9]/g, 'x')}-`);
  return testBed(createDocumentClient(client), names);
}

/** The real store adapters over the tables named, with the default prices of model tokens. */
export function testBed(db: DynamoDBDocumentClient, names: TableNames): ClaudeTestBed {
  return {
    runs: makeRunRepository(db, { runs: names.Runs, data: names.Data, events: names.Events }),
    pipelines: makePipelineRepository(db, names.Data, names.Events),
    evidence: makeEvidenceStore(db, names.Data),
    evaluations: makeEvaluationStore(db, { runs: names.Runs, data: names.Data }),
    settings: makeTeamSettingsStore(db, names.Data, names.Events),
    prices: DEFAULT_MODEL_PRICES,
  };
}

export interface SeededRun {
  pipeline: Pipeline;
  configuration: Configuration;
  run: SynthesisRun;
}

/** A pipeline with the fixture evidence and a pending claude-v1 run of it. */
export async function seedPendingRun(bed: ClaudeTestBed, synthesisHandler = 'claude-v1'): Promise<SeededRun> {
  const createdAt = new Date().toISOString();
  const pipeline: Pipeline = {
    id: `p-${nanoid(10).replace(/[^A-Za-z0-9]/g, 'x')}`,
    teamId: 'team-1',
    name: 'answer bot',
    activeConfigurationId: `c-${nanoid(10).replace(/[^A-Za-z0-9]/g, 'x')}`,
    createdAt,
  };
  const configuration: Configuration = {
    id: pipeline.activeConfigurationId,
    pipelineId: pipeline.id,
    version: 1,
    slots: FIXTURE_SLOTS,
    source: 'manual',
    createdAt,
    createdBy: 'user-1',
  };
  await bed.pipelines.createPipeline(pipeline, configuration);
  await bed.pipelines.recordSignals(fixtureSignals(pipeline.id), RETENTION_DAYS.default);
  await bed.pipelines.recordExecutions(
    fixtureExecutions(pipeline.id, configuration.id),
    RETENTION_DAYS.default,
    null,
  );
  const run = newPendingRun({
    id: nanoid(),
    pipelineId: pipeline.id,
    teamId: pipeline.teamId,
    synthesisHandler,
    baseConfigurationId: configuration.id,
    jobId: nanoid(),
    createdAt,
    triggeredBy: 'user-1',
  });
  await bed.runs.create(run);
  return { pipeline, configuration, run };
}

/** makeGenerateRun over the real store with the given engine as claude-v1. */
export function generatorWith(bed: ClaudeTestBed, engine: SynthesisEngine) {
  return makeGenerateRun({
    ...bed,
    engines: { 'claude-v1': engine },
    clock: systemClock,
    ids: nanoidGenerator,
    leaseMs: 120_000,
    isTransient: isTransientFault,
  });
}

/**
 * A port implementation with only the methods a test needs; any other method throws when called,
 * so a fake stays valid while the port grows.
 */
export function partialPort<T extends object>(methods: Partial<T>): T {
  return new Proxy(methods, {
    get(target, property, receiver) {
      if (property in target) return Reflect.get(target, property, receiver);
      if (property === 'then') return undefined;
      return () => {
        throw new Error(`This fake does not implement ${String(property)}.`);
      };
    },
  }) as T;
}
