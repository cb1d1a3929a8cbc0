/**
 * The guarded-rollout flags and views of the real `pipeline-synthesis` bin (built by esbuild, run
 * by node as a separate process) against a local stack: approve sends exactly the steps and
 * guardrails the flags say, refuses a malformed flag before anything is sent, and rollout show and
 * runs effect print every guarded metric (or pass the API's JSON through with --json).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, CLI_BIN } from '../../cli/build.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import {
  type Api,
  type ArmBehaviour,
  apiOf,
  drawExecution,
  pipelineWithRun,
  postExecutions,
  postScores,
  seeded,
} from '../support/rollout-traffic.ts';

let stack: LocalStack;
let api: Api;
let workDir: string;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-cli-rollout-'));
  await buildCli();
  stack = await startLocalStack({
    port: 0,
    stateDir: path.join(workDir, 'state'),
    quiet: true,
    log: () => {},
  });
  api = apiOf(stack);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await rm(workDir, { recursive: true, force: true });
}, 60_000);

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    PIPELINE_SYNTHESIS_API_URL: stack.apiUrl,
    PIPELINE_SYNTHESIS_API_TOKEN: stack.teams[0]?.apiToken,
  };
  delete env.FORCE_COLOR;
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    cwd: workDir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const result = { code: null as number | null, stdout: '', stderr: '' };
  child.stdout.on('data', (chunk) => {
    result.stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    result.stderr += chunk;
  });
  return new Promise((resolve) =>
    child.once('close', (code) => {
      result.code = code;
      resolve(result);
    }),
  );
}

const GUARD_FLAGS = [
  '--guard',
  'failure_rate:0.01',
  '--guard',
  'signal:relevance:higher:0.05',
  '--guard',
  'duration_ms:200',
];

describe('approve --steps --guard, rollout show and runs effect, as a real process', {
  timeout: 180_000,
}, () => {
  it('refuses a malformed --guard or --steps with a usage error (exit 1) and sends nothing', async () => {
    const { pipelineId, runId } = await pipelineWithRun(api, 'CLI refused guards');
    const refused = [
      [['--rollout', '5', '--guard', 'latency:100'], '"latency" is not a guarded metric'],
      [['--rollout', '5', '--guard', 'signal:relevance:0.05'], 'a signal guard names its kind'],
      [['--rollout', '5', '--guard', 'failure_rate:2'], 'a failure rate threshold is a share from 0 to 1'],
      [['--rollout', '5', '--guard', 'tokens:50', '--guard', 'tokens:80'], 'tokens is guarded twice'],
      [['--rollout', '5', '--steps', '5,50,25'], 'write increasing whole percents from 1 to 99'],
      [
        ['--rollout', '5', '--steps', '25,50'],
        '--steps starts at the --rollout percent: --rollout 5 --steps 5,25,50',
      ],
      [['--steps', '5,25'], 'go with --rollout <percent>'],
      [['--guard', 'failure_rate:0.01'], 'go with --rollout <percent>'],
    ] as const;
    for (const [flags, why] of refused) {
      const result = await cli(['approve', runId, ...flags]);
      expect(result.code, flags.join(' ')).toBe(1);
      expect(result.stderr).toContain(why);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
    expect((await api('GET', `/synthesis-runs/${runId}`)).body.status).toBe('generated');
    expect((await api('GET', `/pipelines/${pipelineId}/rollout`)).status).toBe(404);
  });

  it('starts a stepped rollout with exactly the guardrails asked for, then prints every metric', async () => {
    const { pipelineId, baseId, runId } = await pipelineWithRun(api, 'CLI guarded rollout');

    const approved = await cli(['approve', runId, '--rollout', '5', '--steps', '5,25,50', ...GUARD_FLAGS]);

    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain('to 5 % of traffic (steps 5 → 25 → 50 %)');
    const rollout = (await api('GET', `/pipelines/${pipelineId}/rollout`)).body;
    expect(rollout).toMatchObject({ status: 'active', percent: 5, steps: [5, 25, 50], step: 0 });
    expect(rollout.guardrails).toEqual([
      { metric: 'failure_rate', threshold: 0.01 },
      { metric: 'signal', kind: 'relevance', direction: 'higher_is_better', threshold: 0.05 },
      { metric: 'duration_ms', threshold: 200 },
    ]);

    // 40 executions an arm, scored, from the same behaviour: nothing is decided yet.
    const random = seeded(21);
    const same: ArmBehaviour = {
      failureRate: 0.1,
      durationMs: { mean: 400, sd: 40 },
      score: { mean: 0.7, sd: 0.1 },
    };
    const executions = Array.from({ length: 40 }, (_, i) => [
      drawExecution(random, `cli-b${i}`, baseId, same),
      drawExecution(random, `cli-c${i}`, rollout.candidateConfigurationId, same),
    ]).flat();
    await postExecutions(api, pipelineId, executions);
    await postScores(api, pipelineId, 'relevance', executions);

    const shown = await cli(['rollout', 'show', pipelineId]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^step:\s+1 of 3: 5 % of traffic \(steps 5 → 25 → 50 %\)$/m);
    expect(shown.stdout).toMatch(
      /^guardrails:\s+failure rate \(lower is better\) within 1\.00 points; signal relevance \(higher is better\) within 0\.050; mean duration \(lower is better\) within 200 ms$/m,
    );
    const rows = (text: string) => ({
      failure: text.split('\n').find((line) => line.startsWith('failure rate (lower is better) ')) ?? '',
      score: text.split('\n').find((line) => line.startsWith('signal relevance (higher is better) ')) ?? '',
      duration: text.split('\n').find((line) => line.startsWith('mean duration (lower is better) ')) ?? '',
    });
    const metric = rows(shown.stdout);
    // Both arms in the metric's unit with their counts, the signed difference, its interval, the
    // worst case a promotion waits on, the threshold, a verdict.
    expect(metric.failure).toMatch(
      /\d+\.\d\d % \(n = 40\)\s+\d+\.\d\d % \(n = 40\)\s+[+-]?\d+\.\d\d points\s+-\d+\.\d\d points to \+\d+\.\d\d points\s+[+-]\d+\.\d\d points\s+1\.00 points\s+inconclusive$/,
    );
    expect(metric.score).toMatch(
      /0\.\d{3} \(n = 40\)\s+0\.\d{3} \(n = 40\)\s+[+-]?0\.\d{3}\s+-0\.\d{3} to \+0\.\d{3}\s+[+-]0\.\d{3}\s+0\.050\s+(inconclusive|non inferior)$/,
    );
    expect(metric.duration).toMatch(
      /\d{3} ms \(n = 40\)\s+\d{3} ms \(n = 40\)\s+[+-]?\d+ ms\s+-\d+ ms to \+\d+ ms\s+[+-]\d+ ms\s+200 ms\s+(inconclusive|non inferior)$/,
    );
    expect(shown.stdout).toMatch(
      /^next: moves to step 2 of 3 once the candidate has 200 executions at step 1 \(40 so far\)/m,
    );

    const effect = await cli(['runs', 'effect', runId]);
    expect(effect.code, effect.stderr).toBe(0);
    expect(rows(effect.stdout)).toEqual(metric);
    expect(effect.stdout).toMatch(/^verdict: not enough data \(rollout, at least 200 executions per arm\)$/m);
    expect(effect.stdout).toContain('next: moves to step 2 of 3 once');

    // --json: the API's answers as they came.
    const shownJson = await cli(['rollout', 'show', pipelineId, '--json']);
    const direct = await fetch(`${stack.apiUrl}/pipelines/${pipelineId}/rollout`, {
      headers: { authorization: `Bearer ${stack.teams[0]?.apiToken}` },
    });
    expect(shownJson.stdout).toBe(`${await direct.text()}\n`);
    const effectJson = JSON.parse((await cli(['runs', 'effect', runId, '--json', '--history'])).stdout);
    expect(
      effectJson.metrics.map((m: { metric: string; applied: { n: number } }) => [m.metric, m.applied.n]),
    ).toEqual([
      ['failure_rate', 40],
      ['signal', 40],
      ['duration_ms', 40],
    ]);
    expect(Array.isArray(effectJson.history)).toBe(true);
  });
});
