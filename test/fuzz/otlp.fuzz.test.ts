/**
 * OTLP trace bodies, generated (otlp-bodies.ts), posted through the local stack to the ingest as an
 * exporter posts them, to …/v1/traces and to …/v1/logs (where a span's fields meet a log record's
 * numbers with other wire types): never an answer ≥ 500, every error `{error, message}` naming no
 * internals, every success an export response in the request's encoding. `npm test` runs a fixed
 * seed; `npm run fuzz` (FUZZ_RUNS) more, and prints the answers by generator.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../lambdas/limits.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { otlpBody } from './otlp-bodies.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 20);
const INTERNALS = /\n\s+at |\.(?:ts|mjs|js):\d+|Exception|index out of range|wire type|RangeError|TypeError/i;

let stack: LocalStack;
const answers = new Map<string, Map<number, number>>();

beforeAll(async () => {
  stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir: await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-otlp-fuzz-')),
    log: () => {},
    // Hundreds of requests from one token: the per-credential limits would rightly refuse them.
    limits: { ...DEFAULT_LIMITS, requestsPerSecondPerCredential: 1_000_000, burstPerCredential: 1_000_000 },
  });
}, 120_000);
afterAll(async () => {
  const lines = [...answers].map(
    ([generator, statuses]) =>
      `  ${generator}: ${[...statuses].map(([status, count]) => `${count} × ${status}`).join(', ')}`,
  );
  console.log(`fuzz of OTLP bodies through the local stack, by generator:\n${lines.join('\n')}`);
  await stack?.stop();
});

describe('generated OTLP bodies, through the local stack', () => {
  it.each(['traces', 'logs'])(
    'never answers ≥ 500 at …/v1/%s; errors are {error, message}; successes are an export response',
    async (signal) => {
      const token = stack.teams[0]?.apiToken ?? '';
      const pipelineId = stack.teams[0]?.pipelineIds[0] ?? '';
      await fc.assert(
        fc.asyncProperty(otlpBody, async ({ generator, contentType, gzip, body }) => {
          const response = await fetch(`${stack.apiUrl}/pipelines/${pipelineId}/otlp/v1/${signal}`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${token}`,
              'content-type': contentType,
              ...(gzip ? { 'content-encoding': 'gzip' } : {}),
            },
            body,
          });
          const bytes = Buffer.from(await response.arrayBuffer());
          const statuses = answers.get(`${signal}: ${generator}`) ?? new Map<number, number>();
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          answers.set(`${signal}: ${generator}`, statuses);

          expect(response.status, `${generator}: ${bytes.toString('utf8').slice(0, 300)}`).toBeLessThan(500);
          const type = response.headers.get('content-type') ?? '';
          if (response.status >= 400) {
            expect(JSON.parse(bytes.toString('utf8'))).toEqual({
              error: expect.any(String),
              message: expect.any(String),
            });
            expect(bytes.toString('utf8')).not.toMatch(INTERNALS);
          } else if (contentType === 'application/json') {
            expect(type).toBe('application/json');
            const answer = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
            expect(Object.keys(answer).every((name) => name === 'partialSuccess')).toBe(true);
          } else {
            expect(type).toBe('application/x-protobuf');
          }
        }),
        { numRuns: RUNS * 5, seed: 474747 },
      );
    },
    600_000,
  );
});
