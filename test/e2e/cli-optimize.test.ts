import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../../cli/build.ts';
import { createPipelineSynthesisClient, type SynthesisRun } from '../../cli/client.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { runCli } from '../support/cli-process.ts';

/**
 * `pipeline-synthesis optimize`, the real bin as a separate process against a local stack, with a
 * simulated pipeline as its runner: a retrieval timeout some cases need raised, and a trap — cases
 * that break past a higher timeout. heuristic-v1 must find a value that fixes all and breaks none.
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

/** The simulated pipeline's runner: a case passes when the retrieval timeout is within [need, cap]. */
const RUNNER = `let text = '';
process.stdin.on('data', (chunk) => { text += chunk; }).on('end', () => {
  const { configuration, case: recorded } = JSON.parse(text);
  const timeout = configuration.slots.find((slot) => slot.id === 'retrieve').settings.timeoutMs;
  const { need = 0, cap = Infinity } = recorded.input ?? {};
  const passed = timeout >= need && timeout <= cap;
  const detail = timeout < need ? 'retrieval timed out at ' + timeout + ' ms' : 'answer went stale after ' + timeout + ' ms';
  console.log(JSON.stringify(passed ? { passed } : { passed, detail }));
});
`;

/** Per five cases: one needs 1500 ms, one 2500 ms (both fail on the base's 1000), one breaks past 2800, two always pass. */
function caseInput(i: number): { need?: number; cap?: number } {
  return [{ need: 1500 }, { need: 2500 }, { cap: 2800 }, {}, {}][i % 5] ?? {};
}

async function simulatedPipeline(count: number): Promise<string> {
  const api = client();
  const { data: pipeline } = await api.POST('/pipelines', {
    body: {
      name: 'simulated',
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
  const executions = Array.from({ length: count }, (_, i) => {
    const input = caseInput(i);
    const failed = (input.need ?? 0) > 1000;
    return {
      id: `sim-${String(i).padStart(3, '0')}`,
      status: failed ? ('failed' as const) : ('succeeded' as const),
      durationMs: 900,
      startedAt: new Date(Date.now() - (count - i) * 60_000).toISOString(),
      input,
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
  return pipelineId;
}

const readRun = async (id: string) =>
  (await client().GET('/synthesis-runs/{id}', { params: { path: { id } } })).data as SynthesisRun;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-optimize-'));
  await buildCli();
  stack = await startLocalStack({
    port: 0,
    stateDir: path.join(workDir, 'state'),
    quiet: true,
    log: () => {},
  });
  await writeFile(path.join(workDir, 'sim.mjs'), RUNNER);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await rm(workDir, { recursive: true, force: true });
}, 60_000);

interface Summary {
  pipelineId: string;
  rounds: {
    runId: string;
    heldOutBroken: number;
    broken: number;
    stillFailing: number;
    heldOutStillFailing: number;
  }[];
  bestRunId: string;
  stopReason: string;
  costUsd: number;
}

describe('pipeline-synthesis optimize', () => {
  it('pushes a partial fix, backs off the value that broke cases, stops when every case passes and names the best run without approving it', async () => {
    const pipelineId = await simulatedPipeline(40);

    const result = await cli([
      'optimize',
      pipelineId,
      '--exec',
      'node sim.mjs',
      '--handler',
      'heuristic-v1',
      '--per-change',
      '--json',
    ]);

    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    const summary = JSON.parse(lines.at(-1) as string) as Summary;
    expect(lines).toHaveLength(summary.rounds.length + 1);
    expect(summary.stopReason).toBe('all-pass');
    expect(summary.costUsd).toBe(0);
    const [first, second] = summary.rounds;
    const last = summary.rounds.at(-1);
    const beforeLast = summary.rounds.at(-2);
    // Round 1 (timeout 2000) leaves the 2500 ms cases failing; round 2 (4000) breaks the trap's
    // cases; the refinement then backs off halfway (3000, still past the trap) and again (2500).
    expect(first?.stillFailing).toBeGreaterThan(0);
    expect(second?.broken).toBeGreaterThan(0);
    expect(last?.broken).toBe(0);
    expect(last?.stillFailing).toBe(0);
    expect(summary.bestRunId).toBe(last?.runId);
    const best = await readRun(summary.bestRunId);
    expect(best.status).toBe('generated');
    expect(best.parentRunId).toBe(beforeLast?.runId);
    expect(best.changes.map((change) => change.patch)).toContainEqual({ timeoutMs: 2500 });
    expect(best.diagnosis?.findings.some((finding) => (finding.caseIds ?? []).length > 0)).toBe(true);
    const chain = await client().GET('/synthesis-runs/{id}/chain', {
      params: { path: { id: summary.bestRunId } },
    });
    expect(chain.data?.runs.map((round) => round.runId)).toEqual(summary.rounds.map((round) => round.runId));
  }, 300_000);

  it('synthesize --parent refines an evaluated run by hand, and is refused for a run not yet evaluated', async () => {
    const pipelineId = await simulatedPipeline(10);
    const first = await cli(['synthesize', pipelineId, '--handler', 'heuristic-v1', '--wait', '--json']);
    expect(first.code, first.stderr).toBe(0);
    const parent = JSON.parse(first.stdout) as SynthesisRun;

    const early = await cli(['synthesize', pipelineId, '--parent', parent.id, '--json']);
    expect(early.code).toBe(2);
    expect(early.stderr).toContain('has no evaluation yet');

    const evaluated = await cli(['evaluate', parent.id, '--exec', 'node sim.mjs', '--json']);
    expect([0, 5], evaluated.stderr).toContain(evaluated.code);
    const refined = await cli(['synthesize', pipelineId, '--parent', parent.id, '--wait', '--json']);
    expect(refined.code, refined.stderr).toBe(0);
    const child = JSON.parse(refined.stdout) as SynthesisRun;
    expect(child).toMatchObject({ status: 'generated', parentRunId: parent.id, rootRunId: parent.id });
  }, 120_000);

  it('exits 2 naming the API error for an unknown pipeline, having started nothing', async () => {
    const missing = await cli(['optimize', 'x'.repeat(21), '--exec', 'node sim.mjs', '--json']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('NOT_FOUND');
  });
});
