/**
 * Checking a proposal: `pipeline-synthesis evaluate` of 100 cases with a runner that answers at
 * once (total time and API requests, against 200 `node -e 0` at the same concurrency), and
 * reading a run that carries a 150-case evaluation against a poll of a run without one.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { buildCli, CLI_BIN } from '../cli/build.ts';
import { summarizeEvaluation } from '../lambdas/core/evaluation.ts';
import { newEvent, SYSTEM_ACTOR } from '../lambdas/core/events.ts';
import { DEFAULT_LIMITS } from '../lambdas/limits.ts';
import { makeEvaluationStore } from '../lambdas/store/evaluations.ts';
import { createDocumentClient } from '../lambdas/wiring/aws.ts';
import { type LocalStack, startLocalStack } from '../local/stack.ts';

const execFileAsync = promisify(execFile);

export interface EvaluationFigures {
  cases: number;
  concurrency: number;
  evaluateMs: number;
  nodeBaselineMs: number;
  ratio: number;
  requests: number;
  results: number;
  requestsPer100: number;
  readWithEvaluationP50Ms: number;
  pollP50Ms: number;
  readRatio: number;
  readWorstP50Ms: number;
  readWorstRatio: number;
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

/** `count` processes of `node -e 0`, `concurrency` at a time: what process start alone costs. */
async function nodeBaseline(count: number, concurrency: number): Promise<number> {
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next++ < count) await execFileAsync(process.execPath, ['-e', '0']);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return performance.now() - started;
}

async function api(stack: LocalStack, method: string, route: string, body?: unknown) {
  const response = await fetch(`${stack.apiUrl}/${route}`, {
    method,
    headers: {
      authorization: `Bearer ${stack.teams[0]?.apiToken}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the bench reads a few known fields
  return (await response.json()) as any;
}

/** A generated run of a new pipeline with `count` executions (half failed), each with input. */
async function generatedRun(stack: LocalStack, count: number) {
  const pipeline = await api(stack, 'POST', 'pipelines', {
    name: 'bench evaluation',
    slots: [{ id: 'retrieve', name: 'Retrieve', kind: 'retrieval', settings: { timeoutMs: 1000 } }],
  });
  await api(stack, 'POST', `pipelines/${pipeline.id}/signals`, {
    signals: [{ kind: 'timeout', severity: 'critical', message: 'Retrieval timed out', slotId: 'retrieve' }],
  });
  const executions = Array.from({ length: count }, (_, i) => ({
    id: `bench-${i}`,
    status: i % 2 === 0 ? 'failed' : 'succeeded',
    durationMs: 900,
    startedAt: new Date(Date.now() - (count - i) * 60_000).toISOString(),
    input: { question: `question ${i}` },
  }));
  for (let at = 0; at < count; at += 100) {
    await api(stack, 'POST', `pipelines/${pipeline.id}/executions`, {
      executions: executions.slice(at, at + 100),
    });
  }
  let run = await api(stack, 'POST', `pipelines/${pipeline.id}/synthesize`, {
    synthesisHandler: 'heuristic-v1',
  });
  while (run.status !== 'generated') {
    if (run.status === 'failed') throw new Error(`bench run failed: ${run.errorMessage}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    run = await api(stack, 'GET', `synthesis-runs/${run.id}`);
  }
  return { run, executions };
}

async function timedReads(stack: LocalStack, runId: string, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const run = await api(stack, 'GET', `synthesis-runs/${runId}`);
    times.push(performance.now() - started);
    if (run.id !== runId) throw new Error(`reading run ${runId} answered ${JSON.stringify(run)}`);
  }
  return times;
}

export async function measureEvaluation(): Promise<EvaluationFigures> {
  await buildCli();
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-bench-evaluation-'));
  // Speed is measured here, not fairness: the per-credential rate limits are lifted.
  const limits = {
    ...DEFAULT_LIMITS,
    requestsPerSecondPerCredential: 1_000_000,
    burstPerCredential: 1_000_000,
  };
  const stack = await startLocalStack({ port: 0, stateDir, quiet: true, log: () => {}, limits });
  const db = createDocumentClient(
    new DynamoDBClient({
      endpoint: stack.dynamodbEndpoint,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  );
  const evaluations = makeEvaluationStore(db, { runs: stack.tables.Runs, data: stack.tables.Data });
  try {
    // evaluate: a set of exactly 100 cases, stored before anyone reads it.
    const { run, executions } = await generatedRun(stack, 100);
    await evaluations.saveSetOnce(run.id, {
      chosenAt: new Date().toISOString(),
      cases: executions.map((e) => ({
        executionId: e.id,
        reason: e.status as 'failed',
        startedAt: e.startedAt,
      })),
    });
    const concurrency = Math.max(1, availableParallelism());
    const nodeBaselineMs = await nodeBaseline(executions.length * 2, concurrency);
    const started = performance.now();
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [
          CLI_BIN,
          'evaluate',
          run.id,
          '--exec',
          `${JSON.stringify(process.execPath)} -e "process.stdout.write('{\\"passed\\":true}')"`,
          '--concurrency',
          String(concurrency),
          '--json',
        ],
        {
          env: {
            ...process.env,
            PIPELINE_SYNTHESIS_API_URL: stack.apiUrl,
            PIPELINE_SYNTHESIS_API_TOKEN: stack.teams[0]?.apiToken,
          },
          stdio: ['ignore', 'pipe', 'ignore'],
        },
      );
      let stdout = '';
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
      });
      child.once('close', (code) =>
        code === 0 ? resolve(stdout) : reject(new Error(`evaluate exited ${code}`)),
      );
    });
    const evaluateMs = performance.now() - started;
    const answer = JSON.parse(output) as { requests: number; results: unknown[] };

    // Reading a run with a 150-case evaluation (half fixed, half regressed: the longest lists).
    // Reading a run with a 150-case evaluation: as typically (10 cases changed verdict) and at
    // worst (every case fixed or regressed: the longest lists a run can carry).
    const evaluatedRun = async (changed: number) => {
      const { run } = await generatedRun(stack, 4);
      // Ids as the server assigns them: 21-character nanoids.
      const caseIds = Array.from(
        { length: 150 },
        (_, i) => `case${String(i).padStart(3, '0')}${'x'.repeat(14)}`,
      );
      await evaluations.saveSetOnce(run.id, {
        chosenAt: new Date().toISOString(),
        cases: caseIds.map((executionId) => ({
          executionId,
          reason: 'failed',
          startedAt: new Date().toISOString(),
        })),
      });
      const at = new Date().toISOString();
      const results = caseIds.flatMap((executionId, i) => [
        {
          executionId,
          arm: 'base' as const,
          passed: i >= changed || i % 2 === 0,
          durationMs: 100,
          costUsd: 0.01,
          recordedAt: at,
        },
        {
          executionId,
          arm: 'candidate' as const,
          passed: i >= changed || i % 2 === 1,
          durationMs: 90,
          costUsd: 0.008,
          recordedAt: at,
        },
      ]);
      for (let i = 0; i < results.length; i += 100) {
        await evaluations.recordResults(
          run.id,
          results.slice(i, i + 100),
          (all) => summarizeEvaluation(caseIds, all, new Date().toISOString()),
          (sequence) =>
            newEvent(
              'synthesis_run.evaluated',
              {
                teamId: run.teamId,
                pipelineId: run.pipelineId,
                runId: run.id,
                status: 'generated',
                actor: SYSTEM_ACTOR,
              },
              { at, key: `${run.id}_${sequence}` },
            ),
        );
      }
      return run.id as string;
    };
    const typical = await evaluatedRun(10);
    const worst = await evaluatedRun(150);
    const { run: plain } = await generatedRun(stack, 4);
    for (const id of [typical, worst, plain.id]) await timedReads(stack, id, 20);
    const reads = { typical: [] as number[], worst: [] as number[], poll: [] as number[] };
    for (let round = 0; round < 20; round++) {
      reads.typical.push(...(await timedReads(stack, typical, 20)));
      reads.worst.push(...(await timedReads(stack, worst, 20)));
      reads.poll.push(...(await timedReads(stack, plain.id, 20)));
    }
    const readWithEvaluationP50Ms = median(reads.typical);
    const readWorstP50Ms = median(reads.worst);
    const pollP50Ms = median(reads.poll);
    return {
      cases: executions.length,
      concurrency,
      evaluateMs,
      nodeBaselineMs,
      ratio: evaluateMs / nodeBaselineMs,
      requests: answer.requests,
      results: answer.results.length,
      requestsPer100: (answer.requests / answer.results.length) * 100,
      readWithEvaluationP50Ms,
      pollP50Ms,
      readRatio: readWithEvaluationP50Ms / pollP50Ms,
      readWorstP50Ms,
      readWorstRatio: readWorstP50Ms / pollP50Ms,
    };
  } finally {
    await stack.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

export function formatEvaluation(f: EvaluationFigures): string {
  const ok = (pass: boolean) => (pass ? 'ok' : 'MISSED');
  return [
    `evaluate of ${f.cases} cases (${f.results} runs, ${f.concurrency} at once, a runner answering at once) ${f.evaluateMs.toFixed(0)} ms vs ${f.results} × node -e 0 at the same concurrency ${f.nodeBaselineMs.toFixed(0)} ms: ${f.ratio.toFixed(2)}× (target ≤ 2×) ${ok(f.ratio <= 2)}`,
    `API requests: ${f.requests} for ${f.results} results = ${f.requestsPer100.toFixed(2)} per 100 (target ≤ 3) ${ok(f.requestsPer100 <= 3)}`,
    `GET a run with a 150-case evaluation (10 cases fixed or regressed) p50 ${f.readWithEvaluationP50Ms.toFixed(2)} ms vs a poll p50 ${f.pollP50Ms.toFixed(2)} ms: ${f.readRatio.toFixed(2)}× (target ≤ 1.2×) ${ok(f.readRatio <= 1.2)}`,
    `  at worst (all 150 fixed or regressed, ids listed on the run) p50 ${f.readWorstP50Ms.toFixed(2)} ms: ${f.readWorstRatio.toFixed(2)}×`,
  ].join('\n');
}
