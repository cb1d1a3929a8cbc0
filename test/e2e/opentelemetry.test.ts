/**
 * The "done when": a Node program instrumented only with the OpenTelemetry SDK, an official
 * OTLP exporter and OpenLLMetry's Anthropic instrumentation (test/e2e/programs/traced-rag.cjs, run
 * as a real child process against a fake Messages API on 127.0.0.1) exports its traces to the local
 * stack; the executions and signals they became match what it did, and a synthesis run cites them.
 */
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../../cli/build.ts';
import { DEMO_SLOTS } from '../../local/seed.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { type AnthropicFake, overloaded, startAnthropicFake, textReply } from '../support/anthropic-fake.ts';
import { runCli } from '../support/cli-process.ts';
import { waitFor } from '../support/wait.ts';

const PROGRAM = path.join(import.meta.dirname, 'programs', 'traced-rag.cjs');
let stack: LocalStack;
let fake: AnthropicFake;

beforeAll(async () => {
  [fake] = await Promise.all([startAnthropicFake(), buildCli()]);
  stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir: await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-otel-')),
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

const token = () => stack.teams[0]?.apiToken ?? '';

async function api(method: string, route: string, body?: unknown) {
  const response = await fetch(`${stack.apiUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, text };
}

/** Runs the traced program to its end (its exporter flushes on shutdown); its output lines. */
function runProgram(
  pipeline: { id: string; activeConfigurationId: string },
  questions: string[],
  env: Record<string, string>,
) {
  return new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [PROGRAM], {
      env: {
        PATH: process.env.PATH ?? '',
        OTEL_EXPORTER_OTLP_ENDPOINT: `${stack.apiUrl}/pipelines/${pipeline.id}/otlp`,
        OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer ${token()}`,
        OTEL_SERVICE_NAME: 'traced-rag',
        ANTHROPIC_BASE_URL: fake.url,
        ANTHROPIC_API_KEY: 'fake-key',
        PIPELINE_ID: pipeline.id,
        CONFIGURATION_ID: pipeline.activeConfigurationId,
        QUESTIONS: JSON.stringify(questions),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`the program exited ${code}: ${err}`)),
    );
  });
}

interface Exported {
  type: string;
  // biome-ignore lint/suspicious/noExplicitAny: records are asserted field by field
  record: any;
}

/** The pipeline's records as its export gives them (one page is enough here). */
async function exported(pipelineId: string): Promise<Exported[]> {
  const { status, text } = await api('GET', `/pipelines/${pipelineId}/export`);
  expect(status).toBe(200);
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Exported);
}

const ofType = (records: Exported[], type: string) =>
  records.filter((line) => line.type === type).map((line) => line.record);

async function newPipeline(name: string) {
  const created = await api('POST', '/pipelines', { name, slots: DEMO_SLOTS });
  expect(created.status).toBe(201);
  return JSON.parse(created.text) as { id: string; activeConfigurationId: string };
}

describe('a pipeline traced with OpenTelemetry, exported to the local stack', { timeout: 180_000 }, () => {
  it('becomes executions and signals matching what it did (protobuf, gzip), and a synthesis run cites them', async () => {
    const pipeline = await newPipeline('traced with OpenLLMetry');
    fake.script(
      textReply('Refunds are accepted within 30 days of purchase.'),
      overloaded(),
      textReply('I am not sure.'),
    );
    const questions = ['What is the refund policy?', 'Can I return a gift?', 'How long do refunds take?'];

    const output = await runProgram(pipeline, questions, {
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
    });
    expect(
      output
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).answered),
    ).toEqual([true, false, true]);

    const records = await exported(pipeline.id);
    const executions = ofType(records, 'execution');
    const byQuestion = new Map(executions.map((execution) => [execution.input?.question, execution]));
    expect(executions).toHaveLength(3);
    for (const execution of executions) {
      expect(execution).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f]{32}$/),
        configurationId: pipeline.activeConfigurationId,
        source: 'otlp',
      });
      expect(execution.durationMs).toBeGreaterThanOrEqual(20);
    }
    expect(byQuestion.get(questions[0])).toMatchObject({
      status: 'succeeded',
      slotResults: [
        { slotId: 'retrieve', status: 'succeeded' },
        { slotId: 'answer-model', status: 'succeeded', inputTokens: 1000, outputTokens: 50 },
      ],
    });
    const failed = byQuestion.get(questions[1]);
    expect(failed).toMatchObject({
      status: 'failed',
      error: expect.stringContaining('Overloaded'),
      slotResults: [
        { slotId: 'retrieve', status: 'succeeded' },
        { slotId: 'answer-model', status: 'failed' },
      ],
    });

    const signals = ofType(records, 'signal');
    const relevance = signals.filter((signal) => signal.kind === 'relevance');
    expect(relevance.map((signal) => [signal.executionId, signal.severity, signal.value]).sort()).toEqual(
      [
        [byQuestion.get(questions[0]).id, 'info', 0.9],
        [byQuestion.get(questions[2]).id, 'warning', 0.1],
      ].sort(),
    );
    expect(signals.filter((signal) => signal.kind === 'error')).toEqual([
      expect.objectContaining({ executionId: failed.id, slotId: 'answer-model', severity: 'critical' }),
    ]);

    const started = await api('POST', `/pipelines/${pipeline.id}/synthesize`, {
      synthesisHandler: 'heuristic-v1',
    });
    expect(started.status).toBe(202);
    const runId = JSON.parse(started.text).id as string;
    await waitFor(
      async () => JSON.parse((await api('GET', `/synthesis-runs/${runId}`)).text).status === 'generated',
      'the run to be generated',
      60_000,
    );
    const run = JSON.parse((await api('GET', `/synthesis-runs/${runId}`)).text);
    const cited = run.diagnosis.findings.flatMap(
      (finding: { signalIds: string[]; executionIds: string[] }) => [
        ...finding.signalIds,
        ...finding.executionIds,
      ],
    );
    const ours = new Set([
      ...signals.map((signal) => signal.id),
      ...executions.map((execution) => execution.id),
    ]);
    expect(cited.length).toBeGreaterThan(0);
    expect(cited.every((id: string) => ours.has(id))).toBe(true);
    expect(run.analyzedExecutionIds).toEqual(
      expect.arrayContaining(executions.map((execution) => execution.id)),
    );
    // What the traces became, as the CLI shows it.
    const cli = (args: string[]) =>
      runCli(args, {
        cwd: tmpdir(),
        env: {
          PATH: process.env.PATH,
          PIPELINE_SYNTHESIS_API_URL: stack.apiUrl,
          PIPELINE_SYNTHESIS_API_TOKEN: token(),
        },
      });
    const listed = await cli(['executions', 'list', pipeline.id, '--status', 'failed']);
    const shown = await cli(['executions', 'show', pipeline.id, failed.id]);
    expect(listed).toMatchObject({ code: 0, stdout: expect.stringContaining(failed.id) });
    expect(listed.stdout).not.toContain(byQuestion.get(questions[0]).id);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/source:\s+otlp/);
    expect(shown.stdout).toMatch(/answer-model\s+failed/);
    expect(shown.stdout).toMatch(/error\s+critical\s+answer-model/);
    // The signals themselves, by severity: the failed call's error, citing its execution.
    const critical = await cli([
      'signals',
      'list',
      pipeline.id,
      '--severity',
      'critical',
      '--slot',
      'answer-model',
    ]);
    expect(critical.code, critical.stderr).toBe(0);
    expect(critical.stdout).toMatch(new RegExp(`critical\\s+error\\s+answer-model\\s+\\S*\\s*${failed.id}`));
    const none = await cli(['signals', 'list', pipeline.id, '--until', '2000-01-01T00:00:00Z']);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).not.toContain(failed.id);
    const backwards = await cli([
      'signals',
      'list',
      pipeline.id,
      '--since',
      '2026-12-02T00:00:00Z',
      '--until',
      '2026-12-01T00:00:00Z',
    ]);
    expect(backwards.code).toBe(2);
    expect(backwards.stderr).toContain('is after until');
  });

  it('is read the same from the OTLP/JSON exporter', async () => {
    const pipeline = await newPipeline('traced, exported as JSON');
    fake.script(textReply('Refunds are accepted within 30 days.'));

    await runProgram(pipeline, ['What is the refund policy?'], { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });

    const executions = ofType(await exported(pipeline.id), 'execution');
    expect(executions).toEqual([
      expect.objectContaining({
        status: 'succeeded',
        source: 'otlp',
        input: { question: 'What is the refund policy?' },
        slotResults: [
          expect.objectContaining({ slotId: 'retrieve' }),
          expect.objectContaining({ slotId: 'answer-model', inputTokens: 1000, outputTokens: 50 }),
        ],
      }),
    ]);
  });
});
