import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../../cli/build.ts';
import { createPipelineSynthesisClient, type SynthesisRun } from '../../cli/client.ts';
import { REPO_ROOT } from '../../lib/bundling.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { runCli } from '../support/cli-process.ts';
import { waitFor } from '../support/wait.ts';

/**
 * `pipeline-synthesis evaluate`, the real bin as a separate process against a local stack: the
 * runner is a real command, run once per case and arm.
 */
let stack: LocalStack;
let workDir: string;

const cli = (args: string[], whileRunning?: Parameters<typeof runCli>[1]['whileRunning']) =>
  runCli(args, {
    cwd: workDir,
    env: {
      ...process.env,
      LOCAL_STATE_DIR: path.join(workDir, 'state'),
      PIPELINE_SYNTHESIS_API_URL: stack.apiUrl,
      PIPELINE_SYNTHESIS_API_TOKEN: stack.teams[0]?.apiToken,
    },
    ...(whileRunning ? { whileRunning } : {}),
  });

const client = () =>
  createPipelineSynthesisClient({ baseUrl: stack.apiUrl, token: stack.teams[0]?.apiToken as string });

/** A client with a session of the seeded admin: what changing approval rules needs (a person, not a token). */
async function sessionClient() {
  const team = stack.teams[0];
  const login = await client().POST('/auth/login', {
    body: { email: team?.email as string, password: team?.password as string, delivery: 'body' },
  });
  return createPipelineSynthesisClient({
    baseUrl: stack.apiUrl,
    token: (login.data as { accessToken: string }).accessToken,
  });
}

/** A pipeline with `count` executions carrying input (a third failed in retrieval), and a generated run. */
async function generatedRun(count: number): Promise<SynthesisRun> {
  const api = client();
  const { data: pipeline } = await api.POST('/pipelines', {
    body: {
      name: 'evaluated',
      slots: [
        { id: 'retrieve', name: 'Retrieve', kind: 'retrieval', settings: { topK: 8, timeoutMs: 1000 } },
        { id: 'model', name: 'Model', kind: 'model', settings: { model: 'm', maxTokens: 256 } },
      ],
    },
  });
  const pipelineId = pipeline?.id as string;
  await api.POST('/pipelines/{pipelineId}/signals', {
    params: { path: { pipelineId } },
    body: {
      signals: Array.from({ length: 5 }, (_, i) => ({
        kind: 'timeout',
        severity: 'critical' as const,
        message: `Retrieval timed out (${i})`,
        slotId: 'retrieve',
      })),
    },
  });
  for (let start = 0; start < count; start += 100) {
    const executions = Array.from({ length: Math.min(100, count - start) }, (_, j) => {
      const i = start + j;
      const failed = i % 3 === 0;
      return {
        id: `case-${String(i).padStart(3, '0')}`,
        status: failed ? ('failed' as const) : ('succeeded' as const),
        durationMs: 900,
        startedAt: new Date(Date.now() - (count - i) * 60_000).toISOString(),
        input: { question: `question ${i}` },
        ...(failed
          ? {
              error: 'retrieval timed out',
              slotResults: [
                { slotId: 'retrieve', status: 'failed' as const, durationMs: 1000, error: 'timeout' },
              ],
            }
          : {}),
      };
    });
    const recorded = await api.POST('/pipelines/{pipelineId}/executions', {
      params: { path: { pipelineId } },
      body: { executions },
    });
    expect(recorded.response.status).toBe(201);
  }
  const { data: started } = await api.POST('/pipelines/{pipelineId}/synthesize', {
    params: { path: { pipelineId } },
    body: { synthesisHandler: 'heuristic-v1' },
  });
  let run = started as SynthesisRun;
  await waitFor(
    async () => {
      run = (await api.GET('/synthesis-runs/{id}', { params: { path: { id: run.id } } }))
        .data as SynthesisRun;
      return run.status === 'generated';
    },
    'the run to be generated',
    30_000,
  );
  return run;
}

const readRun = async (id: string) =>
  (await client().GET('/synthesis-runs/{id}', { params: { path: { id } } })).data as SynthesisRun;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-evaluate-'));
  await Promise.all([
    buildCli(),
    cp(path.join(REPO_ROOT, 'examples'), path.join(workDir, 'examples'), { recursive: true }),
  ]);
  stack = await startLocalStack({
    port: 0,
    stateDir: path.join(workDir, 'state'),
    quiet: true,
    log: () => {},
  });
  // A runner that regresses the cases whose id ends in 3 and fails the base of those ending in 1.
  await writeFile(
    path.join(workDir, 'regress.sh'),
    [
      'input=$(cat)',
      'case $input in',
      '  *\'"arm":"candidate"\'*\'"executionId":"case-\'??3\'"\'*) echo \'{"passed":false,"detail":"wrong answer"}\' ;;',
      '  *\'"arm":"base"\'*\'"executionId":"case-\'??1\'"\'*) echo \'{"passed":false,"durationMs":10}\' ;;',
      '  *) echo \'{"passed":true,"durationMs":10}\' ;;',
      'esac',
    ].join('\n'),
  );
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await rm(workDir, { recursive: true, force: true });
}, 60_000);

describe('pipeline-synthesis evaluate', () => {
  it("replays the set with the README's example runner, posts the results and prints the table", async () => {
    const run = await generatedRun(12);

    const result = await cli(['evaluate', run.id, '--exec', 'node examples/evaluation-runner.mjs']);

    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Replaying \d+ cases on base \(version 1\) and candidate \(version 2\)/);
    expect(result.stdout).toMatch(/EXECUTION\s+REASON\s+BASE\s+CANDIDATE\s+VERDICT/);
    expect(result.stdout).toContain('fixed');
    const { evaluation } = await readRun(run.id);
    expect(evaluation?.evaluated).toBe(evaluation?.cases);
    expect(evaluation?.fixed.length).toBeGreaterThan(0);
    expect(evaluation?.regressed).toEqual([]);
  });

  it('exits 5 naming the regressed cases, posting at most 3 requests per 100 results', async () => {
    const run = await generatedRun(160);

    const result = await cli(['evaluate', run.id, '--exec', 'sh regress.sh', '--concurrency', '4', '--json']);

    expect(result.code, result.stderr).toBe(5);
    const answer = JSON.parse(result.stdout) as {
      results: unknown[];
      requests: number;
      evaluation: { regressed: string[]; fixed: string[]; evaluated: number; cases: number };
    };
    expect(answer.results.length).toBeGreaterThan(200);
    expect(answer.requests).toBeLessThanOrEqual(Math.ceil((answer.results.length / 100) * 3));
    expect(answer.evaluation.regressed.length).toBeGreaterThan(0);
    expect(answer.evaluation.regressed.every((id) => id.endsWith('3'))).toBe(true);
    expect(answer.evaluation.fixed.every((id) => id.endsWith('1'))).toBe(true);
    expect(result.stderr).toContain(`regressed: ${answer.evaluation.regressed[0]}`);
    expect((await readRun(run.id)).evaluation?.regressed).toEqual(answer.evaluation.regressed);
  });

  it('fails a case whose runner exits non-zero, answers nonsense or hangs past --timeout-per-case, keeping stderr, and goes on', async () => {
    const run = await generatedRun(6);
    await writeFile(
      path.join(workDir, 'faulty.sh'),
      [
        'input=$(cat)',
        'case $input in',
        '  *\'"arm":"candidate"\'*\'"executionId":"case-000"\'*) echo "model quota exhausted" >&2; exit 3 ;;',
        '  *\'"arm":"candidate"\'*\'"executionId":"case-001"\'*) echo "not json" ;;',
        '  *\'"arm":"candidate"\'*\'"executionId":"case-002"\'*) sleep 30 ;;',
        '  *) echo \'{"passed":true}\' ;;',
        'esac',
      ].join('\n'),
    );

    const result = await cli([
      'evaluate',
      run.id,
      '--exec',
      'sh faulty.sh',
      '--timeout-per-case',
      '1',
      '--json',
    ]);

    expect(result.code, result.stderr).toBe(5);
    const answer = JSON.parse(result.stdout) as {
      results: Array<{ executionId: string; arm: string; passed: boolean; detail?: string }>;
    };
    const candidate = (id: string) =>
      answer.results.find((r) => r.executionId === id && r.arm === 'candidate');
    expect(candidate('case-000')).toMatchObject({ passed: false, detail: 'model quota exhausted' });
    expect(candidate('case-001')).toMatchObject({ passed: false });
    expect(candidate('case-002')).toMatchObject({
      passed: false,
      detail: expect.stringContaining('timed out after 1 s'),
    });
    expect(answer.results.filter((r) => r.passed).length).toBe(answer.results.length - 3);
  });

  it('on Ctrl-C posts what finished and exits 130', async () => {
    const run = await generatedRun(30);
    await writeFile(path.join(workDir, 'slow.sh'), 'cat > /dev/null; sleep 0.3; echo \'{"passed":true}\'\n');

    const result = await cli(
      ['evaluate', run.id, '--exec', 'sh slow.sh', '--concurrency', '2'],
      async (child, output) => {
        await waitFor(() => /[1-9]\d*\/\d+ runs done/.test(output().stderr), 'a run to finish', 30_000);
        child.kill('SIGINT');
      },
    );

    expect(result.code, result.stderr).toBe(130);
    expect(result.stderr).toMatch(/Stopped: \d+ of \d+ runs finished and were posted/);
    const { evaluation } = await readRun(run.id);
    expect(evaluation).toBeTruthy();
    expect(evaluation?.evaluated).toBeLessThan(evaluation?.cases ?? 0);
  });

  it("approve obeys the pipeline's approval rules; an admin's --override-reason passes the evaluation rules", async () => {
    const run = await generatedRun(6);
    const rules = await (await sessionClient()).PUT('/pipelines/{pipelineId}/approval-rules', {
      params: { path: { pipelineId: run.pipelineId } },
      body: {
        requireEvaluation: true,
        maxRegressions: 0,
        minEvaluatedCases: 0,
        forbidSelfApproval: false,
        allowApiTokens: true,
      },
    });
    expect(rules.response.status).toBe(200);

    const refused = await cli(['approve', run.id]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('409 CONFLICT');
    expect(refused.stderr).toContain('requires an evaluation');
    const approved = await cli(['approve', run.id, '--override-reason', 'Replayed by hand.']);
    expect(approved.code, approved.stderr).toBe(0);
    expect((await readRun(run.id)).approvalOverrideReason).toBe('Replayed by hand.');
  });

  it('says what a refused approval was judged on: here the whole candidate, every change being chosen', async () => {
    const run = await generatedRun(40);
    expect((await cli(['evaluate', run.id, '--exec', 'sh regress.sh'])).code).toBe(5);
    const rules = await (await sessionClient()).PUT('/pipelines/{pipelineId}/approval-rules', {
      params: { path: { pipelineId: run.pipelineId } },
      body: {
        requireEvaluation: false,
        maxRegressions: 0,
        minEvaluatedCases: 0,
        forbidSelfApproval: false,
        allowApiTokens: true,
      },
    });
    expect(rules.response.status).toBe(200);

    const refused = await cli(['approve', run.id]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /\d+ case\(s\) regressed, judged on the whole candidate \(every change together\); the pipeline allows at most 0/,
    );
  });
});
