import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { makeBootstrapTeam } from '../lambdas/auth/bootstrap.ts';
import { noUsageKeys } from '../lambdas/auth/usage-keys.ts';
import type { Principal } from '../lambdas/core/principal.ts';
import type { Slot } from '../lambdas/core/schemas/pipelines.ts';
import type { ExecutionInput, SignalInput } from '../lambdas/core/schemas/records.ts';
import {
  makeCreatePipeline,
  makeRecordExecutions,
  makeRecordSignals,
} from '../lambdas/core/use-cases/pipelines.ts';
import { makePipelineRepository } from '../lambdas/store/pipelines.ts';
import { makeTeamSettingsStore } from '../lambdas/store/team-settings.ts';
import { nanoidGenerator, systemClock } from '../lambdas/wiring/clock.ts';
import { makeAuthRepository } from '../lambdas/wiring/repositories.ts';
import type { SEED_USERS, SeedPassword } from './early.ts';

export interface SeedTeam {
  teamId: string;
  name: string;
  email: string;
  password: string;
  apiToken: string;
  pipelineIds: string[];
}

/** The demo pipeline: a retrieval step, a prompt and a model, with a history worth diagnosing. */
export const DEMO_SLOTS: Slot[] = [
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
    settings: { model: 'claude-sonnet-4-5', temperature: 0.9, maxTokens: 256, responseFormat: 'json' },
  },
];

function demoSignals(now: number): SignalInput[] {
  const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();
  const signals: SignalInput[] = [];
  for (let i = 0; i < 6; i++) {
    signals.push({
      kind: 'timeout',
      severity: 'critical',
      message: `Retrieval timed out after 1500 ms (query ${i + 1})`,
      slotId: 'retrieve',
      occurredAt: at(5 + i * 7),
    });
  }
  for (let i = 0; i < 4; i++) {
    signals.push({
      kind: 'truncation',
      severity: 'warning',
      message: 'Answer truncated: stop_reason max_tokens',
      slotId: 'answer-model',
      occurredAt: at(3 + i * 11),
    });
  }
  for (let i = 0; i < 3; i++) {
    signals.push({
      kind: 'format_error',
      severity: 'warning',
      message: 'Could not parse model output as JSON: Unexpected token',
      slotId: 'answer-model',
      occurredAt: at(8 + i * 13),
    });
  }
  signals.push({
    kind: 'feedback',
    severity: 'info',
    message: 'User marked the answer as unhelpful',
    value: 0,
    occurredAt: at(2),
  });
  return signals;
}

function demoExecutions(now: number): ExecutionInput[] {
  return Array.from({ length: 30 }, (_, i) => {
    const retrievalFailed = i % 4 === 0;
    return {
      status: retrievalFailed ? 'failed' : 'succeeded',
      durationMs: retrievalFailed ? 1600 : 2400 + (i % 5) * 300,
      startedAt: new Date(now - (i + 1) * 3 * 60_000).toISOString(),
      ...(retrievalFailed ? { error: 'retrieve: timeout after 1500 ms' } : {}),
      slotResults: [
        {
          slotId: 'retrieve',
          status: retrievalFailed ? 'failed' : 'succeeded',
          durationMs: retrievalFailed ? 1500 : 700 + (i % 3) * 200,
          ...(retrievalFailed ? { error: 'timeout' } : {}),
        },
        ...(retrievalFailed
          ? []
          : [
              { slotId: 'answer-prompt', status: 'succeeded' as const, durationMs: 2 },
              { slotId: 'answer-model', status: 'succeeded' as const, durationMs: 1600 + (i % 5) * 300 },
            ]),
      ],
    };
  });
}

const SEED_TEAMS = [
  { name: 'Acme Support', email: 'ada@acme.example' },
  { name: 'Globex Research', email: 'grace@globex.example' },
] as const satisfies ReadonlyArray<{ name: string; email: string }> & { length: typeof SEED_USERS };

/** Writes two teams, each with a user, an API token and a demo pipeline with signals and executions. */
export async function seedLocalData(
  db: DynamoDBDocumentClient,
  tables: { data: string; auth: string; events: string },
  passwords: SeedPassword[],
) {
  const auth = makeAuthRepository(db, tables.auth, tables.events);
  const pipelines = makePipelineRepository(db, tables.data, tables.events);
  const deps = {
    pipelines,
    clock: systemClock,
    ids: nanoidGenerator,
    settings: makeTeamSettingsStore(db, tables.data, tables.events),
    // A seeded pipeline has no rollout: recording its executions never asks for a judgement.
    guardrails: {
      queue: { send: () => Promise.reject(new Error('A seeded pipeline has no rollout to judge.')) },
      unsent: (_check: unknown, error: unknown) => {
        throw error;
      },
    },
  };
  const bootstrap = makeBootstrapTeam({
    auth,
    clock: systemClock,
    ids: nanoidGenerator,
    usageKeys: noUsageKeys,
  });
  const createPipeline = makeCreatePipeline(deps);
  const recordSignals = makeRecordSignals(deps);
  const recordExecutions = makeRecordExecutions(deps);

  return Promise.all(
    SEED_TEAMS.map(async ({ name, email }, index): Promise<SeedTeam> => {
      const seedPassword = passwords[index];
      if (!seedPassword) throw new Error('seedPasswords() gives one password per seed team.');
      const { password, passwordHash } = seedPassword;
      const created = await bootstrap({
        teamName: name,
        email,
        userName: email.split('@')[0] ?? email,
        passwordHash,
      });
      const principal: Principal = {
        principalId: created.userId,
        userId: created.userId,
        teamId: created.teamId,
        role: 'admin',
        method: 'api-token',
        tokenId: created.tokenId,
      };
      const pipeline = await createPipeline(principal, { name: `${name} answer bot`, slots: DEMO_SLOTS });
      const now = Date.now();
      await recordSignals(principal, pipeline.id, demoSignals(now));
      await recordExecutions(principal, pipeline.id, demoExecutions(now));
      return {
        teamId: created.teamId,
        name,
        email,
        password,
        apiToken: created.apiToken,
        pipelineIds: [pipeline.id],
      };
    }),
  );
}
