/**
 * Activation and approval-rule changes by every kind of credential (a session or an API token of
 * an admin, a member, a viewer, and another team's), with generated bodies: never a 5xx, never an
 * answer a credential may not get (a rules change from a token or a non-admin, any change from a
 * viewer or another team). `npm run fuzz` runs more cases (FUZZ_RUNS) than `npm test` does.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../lambdas/core/principal.ts';
import { DEMO_SLOTS } from '../../local/seed.ts';
import {
  apiEvent,
  createCaller,
  type HttpLambda as Handler,
  invoke,
  lambdaContext,
  loadHandlers,
  type SqsLambda,
  setUpApiEnvironment,
  sqsEvent,
} from '../integration/api/harness.ts';
import { body as hostileBody } from './arbitraries.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 20);
const sqs = mockClient(SQSClient);
let http: Record<string, Handler>;
let credentials: Record<string, Principal>;
let pipelineId: string;
let configurationIds: string[];
let runId: string;
const tally = { requests: 0, serverErrors: 0 };

beforeAll(async () => {
  const { db, names } = await setUpApiEnvironment();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'fuzz' });
  http = await loadHandlers([
    'create-pipeline',
    'record-signals',
    'synthesize-pipeline',
    'approve-synthesis-run',
    'activate-configuration',
    'put-approval-rules',
  ]);
  const admin = (await createCaller(db, names)).principal;
  const other = (await createCaller(db, names)).principal;
  const token = (role: Principal['role'], base = admin): Principal => ({
    ...base,
    role,
    userId: `${base.userId}-${role}`,
    principalId: `${base.userId}-${role}`,
  });
  const session = (principal: Principal): Principal => ({
    ...principal,
    method: 'session',
    tokenId: undefined,
  });
  credentials = {
    'session admin': session(admin),
    'session member': session(token('member')),
    'session viewer': session(token('viewer')),
    'token admin': admin,
    'token member': token('member'),
    'token viewer': token('viewer'),
    "another team's token": other,
    "another team's session admin": session(other),
  };
  const created = await invoke(
    http['create-pipeline'] as Handler,
    apiEvent({
      method: 'POST',
      resource: '/pipelines',
      body: { name: 'fuzz', slots: DEMO_SLOTS },
      principal: admin,
    }),
  );
  pipelineId = created.body.id;
  await invoke(
    http['record-signals'] as Handler,
    apiEvent({
      method: 'POST',
      resource: '/pipelines/{pipelineId}/signals',
      pathParameters: { pipelineId },
      body: {
        signals: Array.from({ length: 4 }, (_, i) => ({
          kind: 'timeout',
          severity: 'critical',
          message: `Retrieval timed out after 1500 ms (query ${i})`,
          slotId: 'retrieve',
        })),
      },
      principal: admin,
    }),
  );
  const started = await invoke(
    http['synthesize-pipeline'] as Handler,
    apiEvent({
      method: 'POST',
      resource: '/pipelines/{pipelineId}/synthesize',
      pathParameters: { pipelineId },
      body: {},
      principal: admin,
    }),
  );
  runId = started.body.id;
  const job = sqs.commandCalls(SendMessageCommand).at(-1)?.args[0].input.MessageBody as string;
  const worker = (await import('../../lambdas/handlers/process-synthesis-jobs.ts')).handler as SqsLambda;
  await worker(sqsEvent([job]), lambdaContext());
  configurationIds = [created.body.activeConfigurationId, 'unknown-configuration-00'];
});

afterAll(() => {
  console.log(`fuzz, credentials: ${tally.requests} requests, ${tally.serverErrors} × 5xx`);
  sqs.restore();
});

const rules = fc.record({
  requireEvaluation: fc.boolean(),
  maxRegressions: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.constant(-1), fc.constant(1e9)),
  minEvaluatedCases: fc.integer({ min: 0, max: 50 }),
  forbidSelfApproval: fc.boolean(),
  allowApiTokens: fc.boolean(),
});
const activateBody = fc.oneof(
  fc.constant({}),
  fc.record({ reason: fc.string({ maxLength: 40 }) }, { requiredKeys: [] }),
  fc.record({ override: fc.oneof(fc.record({ reason: fc.string({ maxLength: 40 }) }), fc.string()) }),
);
const acts = fc.oneof(
  fc.record({ act: fc.constant('rules' as const), body: fc.oneof(rules, hostileBody) }),
  fc.record({
    act: fc.constant('activate' as const),
    configuration: fc.nat({ max: 2 }),
    body: fc.oneof(activateBody, hostileBody),
  }),
  fc.record({
    act: fc.constant('approve' as const),
    body: fc.oneof(fc.constant({}), fc.record({ override: fc.record({ reason: fc.string() }) }), hostileBody),
  }),
);

describe('activation and rule changes by every kind of credential', () => {
  it('never answer 5xx, nor what the credential may not get', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.keys(credentials)), acts, async (credential, request) => {
        const principal = credentials[credential] as Principal;
        const answer =
          request.act === 'rules'
            ? await invoke(
                http['put-approval-rules'] as Handler,
                apiEvent({
                  method: 'PUT',
                  resource: '/pipelines/{pipelineId}/approval-rules',
                  pathParameters: { pipelineId },
                  body: request.body,
                  principal,
                }),
              )
            : request.act === 'activate'
              ? await invoke(
                  http['activate-configuration'] as Handler,
                  apiEvent({
                    method: 'POST',
                    resource: '/pipelines/{pipelineId}/configurations/{configurationId}/activate',
                    pathParameters: {
                      pipelineId,
                      configurationId: configurationIds[request.configuration] ?? 'x',
                    },
                    body: request.body,
                    principal,
                  }),
                )
              : await invoke(
                  http['approve-synthesis-run'] as Handler,
                  apiEvent({
                    method: 'POST',
                    resource: '/synthesis-runs/{id}/approve',
                    pathParameters: { id: runId },
                    body: request.body,
                    principal,
                  }),
                );
        tally.requests += 1;
        if (answer.status >= 500) tally.serverErrors += 1;
        const what = `${credential} ${request.act} ${JSON.stringify(request.body)?.slice(0, 200)}`;
        expect(answer.status, what).toBeLessThan(500);
        if (answer.status < 300) {
          expect(credential, what).not.toMatch(/viewer|another team/);
          if (request.act === 'rules') expect(credential, what).toBe('session admin');
        }
      }),
      { numRuns: RUNS * 10, seed: 343434 },
    );
  }, 600_000);
});
