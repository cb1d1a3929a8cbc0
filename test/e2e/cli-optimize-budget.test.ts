import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../../cli/build.ts';
import type { LocalStack } from '../../local/stack.ts';
import { runCli } from '../support/cli-process.ts';
import { type StackWithModelFake, startStackWithModelFake } from '../support/stack-with-model-fake.ts';

/**
 * What `optimize` spends with claude-v1, the real bin against a local stack whose worker calls the
 * fake Messages API (each reply: 1,000 input and 200 output tokens, $0.006 at claude-sonnet-4's
 * prices): `--budget-usd` stops before a round whose forecast passes it, and the team's monthly
 * model budget refuses the run with a 429 naming the budget and when it resets.
 */
let running: StackWithModelFake;
let stack: LocalStack;
let workDir: string;

// biome-ignore lint/suspicious/noExplicitAny: API bodies are asserted field by field
async function api(method: string, route: string, body?: unknown): Promise<any> {
  const response = await fetch(`${stack.apiUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${stack.teams[0]?.apiToken}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(response.status, `${method} ${route}`).toBeLessThan(300);
  return response.json();
}

const cli = (args: string[]) =>
  runCli(args, {
    cwd: workDir,
    env: {
      ...process.env,
      LOCAL_STATE_DIR: path.join(workDir, 'state'),
      PIPELINE_SYNTHESIS_API_URL: stack.apiUrl,
      PIPELINE_SYNTHESIS_API_TOKEN: stack.teams[0]?.apiToken,
    },
  });

/** A case passes while the model's temperature is at most its input's `maxTemp`. */
const RUNNER = `let text = '';
process.stdin.on('data', (chunk) => { text += chunk; }).on('end', () => {
  const { configuration, case: recorded } = JSON.parse(text);
  const temperature = configuration.slots.find((slot) => slot.id === 'answer').settings.temperature;
  const passed = temperature <= recorded.input.maxTemp;
  console.log(JSON.stringify(passed ? { passed } : { passed, detail: 'malformed JSON at ' + temperature }));
});
`;

/** Ten cases: four pass at the base's 1.3, four need 0.65 (the fake halves it), two need 0.3. */
async function pipeline(): Promise<string> {
  const created = await api('POST', '/pipelines', {
    name: 'budgeted',
    slots: [{ id: 'answer', name: 'Answer', kind: 'model', settings: { model: 'm', temperature: 1.3 } }],
  });
  const maxTemps = [2, 2, 2, 2, 0.7, 0.7, 0.7, 0.7, 0.3, 0.3];
  const executions = maxTemps.map((maxTemp, i) => ({
    id: `budget-${created.id}-${i}`,
    status: maxTemp >= 1.3 ? 'succeeded' : 'failed',
    durationMs: 500,
    startedAt: new Date(Date.now() - (10 - i) * 60_000).toISOString(),
    input: { maxTemp },
    ...(maxTemp >= 1.3 ? {} : { error: 'malformed JSON output' }),
  }));
  await api('POST', `/pipelines/${created.id}/executions`, { executions });
  await api('POST', `/pipelines/${created.id}/signals`, {
    signals: executions
      .filter((execution) => execution.status === 'failed')
      .map((execution) => ({
        kind: 'error',
        severity: 'warning',
        message: 'malformed JSON output',
        slotId: 'answer',
        executionId: execution.id,
      })),
  });
  return created.id;
}

const optimize = (pipelineId: string, budgetUsd: string) =>
  cli([
    'optimize',
    pipelineId,
    '--exec',
    'node sim.mjs',
    '--handler',
    'claude-v1',
    '--budget-usd',
    budgetUsd,
    '--json',
  ]);

const runsOf = async (pipelineId: string) =>
  (await api('GET', `/pipelines/${pipelineId}/synthesis-runs`)).items as { id: string }[];

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-optimize-budget-'));
  await buildCli();
  running = await startStackWithModelFake({ name: 'optimize-budget', limits: {} });
  stack = running.stack;
  await writeFile(path.join(workDir, 'sim.mjs'), RUNNER);
}, 120_000);

afterAll(async () => {
  await running?.stop();
  await rm(workDir, { recursive: true, force: true });
}, 60_000);

describe('optimize with claude-v1 and a budget', () => {
  it('stops before a round whose forecast would pass --budget-usd, and runs it under a larger budget', async () => {
    const tight = await pipeline();
    const stopped = await optimize(tight, '0.01');
    expect(stopped.code, stopped.stderr).toBe(0);
    const summary = JSON.parse(stopped.stdout.trim().split('\n').at(-1) as string);
    // Round 1 cost $0.006; a second would take the total to $0.012.
    expect(summary).toMatchObject({ stopReason: 'budget', costUsd: 0.006 });
    expect(summary.rounds).toHaveLength(1);
    expect(await runsOf(tight)).toHaveLength(1);

    const roomy = await pipeline();
    const more = await optimize(roomy, '1');
    expect(more.code, more.stderr).toBe(0);
    const second = JSON.parse(more.stdout.trim().split('\n').at(-1) as string);
    expect(second.rounds.length).toBeGreaterThan(1);
    expect(second.stopReason).not.toBe('budget');
  }, 180_000);

  it("is refused with the monthly budget's 429, naming the budget and when it resets, and starts no run", async () => {
    const teamId = stack.teams[0]?.teamId as string;
    await api('PATCH', `/teams/${teamId}/settings`, { modelBudgetUsdPerMonth: 0.001 });
    const capped = await pipeline();
    const refused = await optimize(capped, '1');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('RATE_LIMITED');
    expect(refused.stderr).toContain('model budget of $0.0010 a month');
    const now = new Date();
    const resets = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
    expect(refused.stderr).toContain(resets);
    expect(await runsOf(capped)).toHaveLength(0);
    // The API's own answer: a 429 with Retry-After counting the seconds to the reset.
    const direct = await fetch(`${stack.apiUrl}/pipelines/${capped}/synthesize`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.teams[0]?.apiToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ synthesisHandler: 'claude-v1' }),
    });
    expect(direct.status).toBe(429);
    expect(await direct.json()).toMatchObject({ error: 'RATE_LIMITED' });
    const retryAfter = Number(direct.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil((Date.parse(resets) - Date.now()) / 1000) + 5);
    await api('PATCH', `/teams/${teamId}/settings`, { modelBudgetUsdPerMonth: null });
  }, 120_000);
});
