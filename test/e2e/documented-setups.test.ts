/**
 * The documented Node set-ups run as written: each JavaScript snippet of README.md and docs/ marked
 * `<!-- docs-test: snippet NAME -->` is installed with its document's own `npm install` line in a
 * scratch folder (from the registry, as a reader would: no overrides, no --legacy-peer-deps), written
 * out as it is printed and run with node against the local stack, with the environment its text
 * names; the test appends only the calls of what the snippet defines. A serving snippet is also run
 * against an API that accepts the connection and never answers: it gives up and falls back.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../lib/bundling.ts';
import { DEMO_SLOTS } from '../../local/seed.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { type AnthropicFake, startAnthropicFake, textReply } from '../support/anthropic-fake.ts';
import { documentsOf, shellBlocks } from '../support/doc-commands.ts';
import {
  importsPackages,
  installedFolder,
  javascriptSnippets,
  type Run,
  runSnippet,
  type Snippet,
} from '../support/doc-snippets.ts';
import { type HangingRelay, startHangingRelay } from '../support/hanging-relay.ts';
import { waitFor } from '../support/wait.ts';

const snippets: Snippet[] = documentsOf(REPO_ROOT).flatMap((document) =>
  javascriptSnippets(REPO_ROOT, document),
);
const named = (name: string): Snippet => {
  const snippet = snippets.find((one) => one.name === name);
  if (!snippet) throw new Error(`no JavaScript block is marked <!-- docs-test: snippet ${name} -->`);
  return snippet;
};

let stack: LocalStack;
let fake: AnthropicFake;
let pipeline: { id: string; activeConfigurationId: string };
const relays: HangingRelay[] = [];
const token = () => stack.teams[0]?.apiToken ?? '';

beforeAll(async () => {
  fake = await startAnthropicFake();
  stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir: await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-setups-')),
  });
  const created = await api('POST', '/pipelines', { name: 'documented set-ups', slots: DEMO_SLOTS });
  expect(created.status).toBe(201);
  pipeline = created.body;
}, 120_000);

afterAll(async () => {
  await Promise.all(relays.map((relay) => relay.close()));
  await stack?.stop();
  await fake?.close();
});

async function api(method: string, route: string, body?: unknown) {
  const response = await fetch(`${stack.apiUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field
  const answer: any = await response.json().catch(() => null);
  return { status: response.status, body: answer };
}

async function relay(answered: number): Promise<HangingRelay> {
  const started = await startHangingRelay(stack.apiUrl, answered);
  relays.push(started);
  return started;
}

/**
 * The `NAME=value` (or `export NAME="value"`) lines of a document's shell blocks, with the stack's
 * URL, the pipeline and the token for `$API`, `$P` and `$TOKEN`: the exporter's settings as the docs
 * tell a reader to set them.
 */
function documentedExports(document: string, apiUrl: string): Record<string, string> {
  const values: Record<string, string> = { API: apiUrl, P: pipeline.id, TOKEN: token() };
  const exports: Record<string, string> = {};
  for (const block of shellBlocks(REPO_ROOT, document))
    for (const [, name, quoted, bare] of block.code.matchAll(
      /^(?:export\s+)?([A-Z][A-Z0-9_]*)=(?:"([^"]*)"|(\S*))/gm,
    ))
      if (name)
        exports[name] = (quoted ?? bare ?? '').replace(
          /\$(\w+)/g,
          (whole, variable: string) => values[variable] ?? whole,
        );
  return exports;
}

/** The variables the snippets' text names: the API (the stack, or `apiUrl`), a token, the pipeline. */
const environment = (apiUrl = stack.apiUrl): Record<string, string> => ({
  PIPELINE_SYNTHESIS_API_URL: apiUrl,
  PIPELINE_SYNTHESIS_API_TOKEN: token(),
  PIPELINE_ID: pipeline.id,
});

/** Installs the snippet's line (cached for the run), runs it with `driver` after it; its stdout's JSON. */
async function ran(snippet: Snippet, driver: string, env: Record<string, string>) {
  const folder = await installedFolder(snippet.installLine);
  const result: Run = await runSnippet(folder, snippet, driver, env);
  expect(result.code, `${snippet.where} (${folder}) exited ${result.code}:\n${result.stderr}`).toBe(0);
  // biome-ignore lint/suspicious/noExplicitAny: the snippet's answers are asserted field by field
  return JSON.parse(result.stdout.trim().split('\n').at(-1) ?? 'null') as any;
}

const EXACT_VERSION = /^(@[\w.-]+\/)?[\w.-]+@\d+\.\d+\.\d+$/;

describe('the documented Node set-ups', { timeout: 360_000 }, () => {
  it('mark every JavaScript block, and install each snippet with a line of exact versions', () => {
    expect(snippets.filter((one) => !one.name && !one.notRun).map((one) => one.where)).toEqual([]);
    expect(snippets.map((one) => one.name).filter(Boolean)).toEqual(
      expect.arrayContaining(['serving-fetch', 'openfeature', 'node-set-up']),
    );
    for (const snippet of snippets.filter((one) => one.name && importsPackages(one))) {
      expect(snippet.installLine, `${snippet.where} names no npm install line before it`).toBeDefined();
      const packages = snippet.installLine?.split(' ').slice(2) ?? [];
      expect(
        packages.filter((word) => !EXACT_VERSION.test(word)),
        snippet.where,
      ).toEqual([]);
    }
  });

  it('serving-fetch: reads the serving configuration, keeps it, and revalidates it with a 304', async () => {
    const counting = await relay(Number.POSITIVE_INFINITY);
    const answers = await ran(
      named('serving-fetch'),
      `(async () => {
  const first = await servingConfiguration('user-42');
  const kept = await servingConfiguration('user-42');
  cache.get('user-42').at -= 10_000; // as 10 s later
  const revalidated = await servingConfiguration('user-42');
  console.log(JSON.stringify({ first, kept, revalidated }));
})();`,
      environment(counting.url),
    );

    expect(answers.first).toMatchObject({
      configuration: { id: pipeline.activeConfigurationId, version: 1, slots: expect.any(Array) },
    });
    expect(answers.first.configuration.slots.map((slot: { id: string }) => slot.id)).toEqual(
      DEMO_SLOTS.map((slot) => slot.id),
    );
    expect(answers.kept).toEqual(answers.first);
    expect(answers.revalidated).toEqual(answers.first);
    expect(counting.seen).toEqual([200, 304]);
  });

  it('serving-fetch, the API hung: gives up and keeps its last answer (and, with none, fails)', async () => {
    const hanging = await relay(1);
    const answers = await ran(
      named('serving-fetch'),
      `(async () => {
  const first = await servingConfiguration('user-42');
  cache.get('user-42').at -= 10_000; // as 10 s later, when the API has stopped answering
  const afterHang = await servingConfiguration('user-42');
  const neverServed = await servingConfiguration('user-7').then(() => 'an answer', (error) => error.name);
  console.log(JSON.stringify({ first, afterHang, neverServed }));
})();`,
      environment(hanging.url),
    );

    expect(answers.first.configuration.id).toBe(pipeline.activeConfigurationId);
    expect(answers.afterHang).toEqual(answers.first);
    expect(answers.neverServed).toBe('TimeoutError');
    expect(hanging.seen).toEqual([200, 'hung', 'hung']);
  });

  it('openfeature: resolves the pipeline to its active configuration through OFREP', async () => {
    const answer = await ran(
      named('openfeature'),
      `console.log(JSON.stringify(await configurationFor('user-42')));
await OpenFeature.close();`,
      environment(),
    );

    expect(answer).toMatchObject({ configurationId: pipeline.activeConfigurationId, version: 1 });
    expect(answer.slots.map((slot: { id: string }) => slot.id)).toEqual(DEMO_SLOTS.map((slot) => slot.id));
  });

  it('openfeature, the API hung: gives up and answers the default it was given', async () => {
    const hanging = await relay(0);
    const answer = await ran(
      named('openfeature'),
      `console.log(JSON.stringify({ value: await configurationFor('user-42'), lastShipped: LAST_SHIPPED }));
await OpenFeature.close();`,
      environment(hanging.url),
    );

    expect(answer.value).toEqual(answer.lastShipped);
    expect(hanging.seen).toEqual(['hung']);
  });

  it('node-set-up: a traced request (an evaluation, a Claude call) arrives as an execution of its configuration', async () => {
    fake.reset();
    fake.script(textReply('Refunds are accepted within 30 days of purchase.'));
    const { traceId } = await ran(
      named('node-set-up'),
      `import { trace } from '@opentelemetry/api';
const traceId = await trace.getTracer('docs-test').startActiveSpan('answer-question', async (span) => {
  const configuration = await features.getObjectValue(process.env.PIPELINE_ID, {}, { targetingKey: 'user-42' });
  const model = configuration.slots.find((slot) => slot.kind === 'model').settings.model;
  await claude.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: 'What is the refund policy?' }] });
  span.end();
  return span.spanContext().traceId;
});
await provider.shutdown();
await OpenFeature.close();
console.log(JSON.stringify({ traceId }));`,
      {
        ...environment(),
        ...documentedExports('docs/opentelemetry.md', stack.apiUrl),
        ANTHROPIC_API_KEY: ['fake', 'key'].join('-'),
        ANTHROPIC_BASE_URL: fake.url,
      },
    );

    expect(fake.requests).toHaveLength(1);
    // biome-ignore lint/suspicious/noExplicitAny: the execution is asserted field by field
    let execution: { status: number; body: any } = { status: 0, body: null };
    await waitFor(
      async () => {
        execution = await api('GET', `/pipelines/${pipeline.id}/executions/${traceId}`);
        return execution.status === 200;
      },
      'the trace to become an execution',
      30_000,
      100,
    );
    expect(execution.body).toMatchObject({ execution: { id: traceId } });
    expect(execution.body.execution).toMatchObject({
      id: traceId,
      source: 'otlp',
      status: 'succeeded',
      configurationId: pipeline.activeConfigurationId,
      slotResults: expect.arrayContaining([
        expect.objectContaining({ slotId: 'answer-model', inputTokens: 1000, outputTokens: 50 }),
      ]),
    });
  });
});
