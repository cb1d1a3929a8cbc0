/** The fuzz over HTTP: every operation of the document through the local stack, then model replies. */
import { request as httpRequest } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SLOTS } from '../../local/seed.ts';
import type { LocalStack } from '../../local/stack.ts';
import { type AnthropicFake, type FakeReply, textReply, toolReply } from '../support/anthropic-fake.ts';
import { isExpectedErrorBody } from '../support/error-body.ts';
import { type StackWithModelFake, startStackWithModelFake } from '../support/stack-with-model-fake.ts';
import { waitFor } from '../support/wait.ts';
import {
  body,
  countAnswer,
  formatGeneratorTally,
  type GeneratorTally,
  headers,
  knownValueFor,
  pathParameters,
  query,
  type RequestPart,
  targetedGenerators,
} from './arbitraries.ts';

/**
 * Every operation of the API's own OpenAPI document, driven over HTTP through the local stack
 * (gateway, authorizer, each function in its own environment) with generated requests, valid and
 * hostile; then model replies, generated the same way, through the fake Messages API. Asserted: no
 * response ≥ 500, every error `{error, message}`, no stack trace or internal name in any body, and
 * every run ends `generated` or `failed`. `npm test` runs a fixed seed of a few hundred requests;
 * `npm run fuzz` (FUZZ_RUNS) runs thousands and prints the counts.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 20);
const INTERNALS =
  /\n\s+at |\.(?:ts|mjs|js):\d+|Exception|arn:aws|dynamodb|node_modules|TypeError|undefined is not/i;

let stack: LocalStack;
let fake: AnthropicFake;
let token: string;
let pipelineId: string;
/** What DELETE /pipelines/{pipelineId} is fuzzed with: deleting it leaves the seeded pipeline to the other tests. */
let sacrificialPipelineId: string;
/** The path ids of a route: the seeded ones, but a pipeline of its own for a pipeline's deletion. */
const idsFor = (method: string, route: string) => ({
  pipelineId: method === 'DELETE' && route === '/pipelines/{pipelineId}' ? sacrificialPipelineId : pipelineId,
  configurationId,
  runId,
});
let configurationId: string;
let runId: string;
const tally = {
  requests: 0,
  operations: new Set<string>(),
  serverErrors: 0,
  modelReplies: 0,
  runs: new Map<string, number>(),
};
const byGenerator: GeneratorTally = new Map();

async function api(
  method: string,
  route: string,
  init: { body?: string | null; headers?: Record<string, string> } = {},
) {
  const response = await fetch(`${stack.apiUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...init.headers },
    ...(init.body === undefined || init.body === null || method === 'GET' ? {} : { body: init.body }),
  });
  return { status: response.status, text: await response.text() };
}

let running: StackWithModelFake;

beforeAll(async () => {
  running = await startStackWithModelFake({
    name: 'fuzz',
    // Thousands of requests from one token: the per-credential limits would rightly refuse them.
    limits: {
      requestsPerSecondPerCredential: 1_000_000,
      burstPerCredential: 1_000_000,
      authRequestsPerMinutePerIp: 1_000_000,
      synthesisRunsPerTeamPerHour: 1_000_000,
    },
  });
  ({ stack, fake } = running);
  token = stack.teams[0]?.apiToken as string;
  pipelineId = stack.teams[0]?.pipelineIds[0] as string;
  const pipeline = JSON.parse((await api('GET', `/pipelines/${pipelineId}`)).text);
  configurationId = pipeline.activeConfigurationId;
  sacrificialPipelineId = JSON.parse(
    (
      await api('POST', '/pipelines', {
        body: JSON.stringify({ name: 'fuzzed deletion', slots: DEMO_SLOTS }),
        headers: { 'content-type': 'application/json' },
      })
    ).text,
  ).id;
  runId = JSON.parse(
    (
      await api('POST', `/pipelines/${pipelineId}/synthesize`, {
        body: '{"synthesisHandler":"heuristic-v1"}',
        headers: { 'content-type': 'application/json' },
      })
    ).text,
  ).id;
}, 120_000);

afterAll(async () => {
  console.log(
    `fuzz through the local stack: ${tally.requests} requests over ${tally.operations.size} operations, ${tally.serverErrors} × 5xx; ${tally.modelReplies} model replies → ${[...tally.runs].map(([status, count]) => `${count} ${status}`).join(', ')}`,
  );
  console.log(`fuzz through the local stack, by targeted generator:\n${formatGeneratorTally(byGenerator)}`);
  await running?.stop();
});

describe('every operation of GET /openapi.json, through the local stack', () => {
  it('never answers ≥ 500, errors are {error, message}, bodies show no internals', async () => {
    const document = JSON.parse((await api('GET', '/openapi.json')).text) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = Object.entries(document.paths).flatMap(([route, methods]) =>
      Object.keys(methods).map((method) => ({ route, method: method.toUpperCase() })),
    );
    expect(operations.length).toBeGreaterThan(20);
    for (const { route, method } of operations) {
      const { names: parameters, values: pathValues } = pathParameters(route, () => idsFor(method, route));
      const slow = route.startsWith('/auth/') || route === '/me/password';
      await fc.assert(
        fc.asyncProperty(
          pathValues,
          body,
          headers,
          query,
          fc.boolean(),
          async (values, requestBody, requestHeaders, requestQuery, withToken) => {
            let target = route;
            parameters.forEach((name, index) => {
              target = target.replace(
                new RegExp(`\\{${name}\\+?\\}`),
                encodeURIComponent(String(values[index])) || '%20',
              );
            });
            const search = new URLSearchParams(
              Object.entries(requestQuery).filter(
                (entry): entry is [string, string] => entry[1] !== undefined,
              ),
            ).toString();
            // Header values must be valid HTTP; what fetch cannot send, a client cannot either.
            const sent = Object.fromEntries(
              Object.entries(requestHeaders).filter(
                (entry): entry is [string, string] =>
                  entry[1] !== undefined && /^[\t\x20-\x7e]*$/.test(entry[1]),
              ),
            );
            if (!withToken) sent.authorization = '';
            const response = await api(method, `${target}${search ? `?${search}` : ''}`, {
              body: requestBody,
              headers: sent,
            });
            tally.requests += 1;
            tally.operations.add(`${method} ${route}`);
            if (response.status >= 500) tally.serverErrors += 1;
            expect(response.status, `${method} ${target}: ${response.text.slice(0, 300)}`).toBeLessThan(500);
            if (response.status >= 400) {
              expect(
                isExpectedErrorBody(method, route, response.status, JSON.parse(response.text)),
                response.text,
              ).toBe(true);
              expect(response.text).not.toMatch(INTERNALS);
            }
          },
        ),
        { numRuns: slow ? Math.max(3, Math.ceil(RUNS / 10)) : RUNS, seed: 777 },
      );
    }
  }, 900_000);
});

/**
 * One request with `part` over node:http, which (unlike fetch) sends a repeated header as separate
 * lines and any header name a token allows. Without an Authorization of its own, `withToken` adds the
 * seeded token's.
 */
function sendPart(method: string, target: string, part: RequestPart, withToken: boolean) {
  const search = new URLSearchParams(Object.entries(part.query ?? {})).toString();
  const lines: string[] = [];
  for (const [name, value] of [...Object.entries(part.headers ?? {}), ...(part.repeatedHeaders ?? [])])
    lines.push(name, value);
  const ownAuthorization = lines.some(
    (line, index) => index % 2 === 0 && line.toLowerCase() === 'authorization',
  );
  if (withToken && !ownAuthorization) lines.push('Authorization', `Bearer ${token}`);
  const url = new URL(`${stack.apiUrl}${target}${search ? `?${search}` : ''}`);
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const outgoing = httpRequest(url, { method, headers: lines }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end(method === 'GET' || part.body === undefined ? undefined : part.body);
  });
}

describe('targeted generators, every operation through the local stack', () => {
  const generators = Object.entries(targetedGenerators(() => token));

  it.each(generators)(
    '%s: no operation answers 5xx',
    async (name, { part, bodiesOnly }) => {
      const document = JSON.parse((await api('GET', '/openapi.json')).text) as {
        paths: Record<string, Record<string, unknown>>;
      };
      const operations = Object.entries(document.paths).flatMap(([route, methods]) =>
        Object.keys(methods)
          .filter(() => !route.startsWith('/auth/') && route !== '/me/password')
          .filter((method) => !bodiesOnly || !['get', 'delete'].includes(method))
          .map((method) => ({ route, method: method.toUpperCase() })),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...operations),
          part,
          fc.boolean(),
          async (operation, requestPart, withToken) => {
            const target = operation.route.replace(/\{(\w+)\+?\}/g, (_, parameter: string) =>
              encodeURIComponent(knownValueFor(parameter, idsFor(operation.method, operation.route))),
            );
            const response = await sendPart(operation.method, target, requestPart, withToken);
            countAnswer(byGenerator, name, response.status);
            expect(
              response.status,
              `${name}: ${operation.method} ${target}: ${response.text.slice(0, 300)}`,
            ).toBeLessThan(500);
            if (response.status >= 400) expect(response.text).not.toMatch(INTERNALS);
          },
        ),
        { numRuns: RUNS * 3, seed: 616161 },
      );
    },
    900_000,
  );
});

describe('model replies, through the fake Messages API', () => {
  const goodDraft = {
    diagnosis: {
      summary: 'Timeouts in retrieval.',
      findings: [{ id: '1', description: 'Slow', signalRefs: [1] }],
    },
    changes: [
      {
        id: 'c1',
        slotId: DEMO_SLOTS[0]?.id ?? 'retrieve',
        description: 'Raise the timeout',
        rationale: 'Timeouts',
        findingIds: ['1'],
        patch: { timeoutMs: 3000 },
      },
    ],
    warnings: [],
  };
  const reply: fc.Arbitrary<FakeReply> = fc.oneof(
    fc.jsonValue({ maxDepth: 5 }).map((input) => toolReply(input)),
    fc
      .tuple(fc.constantFrom('diagnosis', 'changes', 'warnings', 'summary'), fc.jsonValue({ maxDepth: 4 }))
      .map(([key, value]) => toolReply({ ...goodDraft, [key]: value })),
    fc
      .tuple(fc.constantFrom('patch', 'slotId', 'findingIds', 'id'), fc.jsonValue({ maxDepth: 4 }))
      .map(([key, value]) =>
        toolReply({ ...goodDraft, changes: [{ ...goodDraft.changes[0], [key]: value }] }),
      ),
    fc.string({ maxLength: 2_000, unit: 'binary' }).map((text) => textReply(text)),
    fc.constant(toolReply({ ...goodDraft, diagnosis: { summary: 'x'.repeat(200_000), findings: [] } })),
    fc.constant(toolReply(goodDraft, { toolName: 'another_tool' })),
    fc.constant(toolReply(goodDraft, { stopReason: 'max_tokens' })),
  );

  it('ends every run generated or failed, with an errorMessage when failed', async () => {
    await fc.assert(
      fc.asyncProperty(reply, reply, async (first, repair) => {
        fake.reset();
        fake.script(first, repair);
        const started = await api('POST', `/pipelines/${pipelineId}/synthesize`, {
          body: '{"synthesisHandler":"claude-v1"}',
          headers: { 'content-type': 'application/json' },
        });
        expect(started.status).toBe(202);
        const id = JSON.parse(started.text).id as string;
        let run: { status: string; errorMessage: string | null } = { status: 'pending', errorMessage: null };
        await waitFor(
          async () => {
            run = JSON.parse((await api('GET', `/synthesis-runs/${id}`)).text);
            return run.status === 'generated' || run.status === 'failed';
          },
          `run ${id} to end`,
          30_000,
          50,
        );
        tally.modelReplies += fake.requests.length;
        tally.runs.set(run.status, (tally.runs.get(run.status) ?? 0) + 1);
        expect(fake.requests.length).toBeLessThanOrEqual(2);
        if (run.status === 'failed') expect(run.errorMessage).toEqual(expect.any(String));
      }),
      { numRuns: Math.max(5, Math.ceil(RUNS / 2)), seed: 99 },
    );
  }, 900_000);
});
