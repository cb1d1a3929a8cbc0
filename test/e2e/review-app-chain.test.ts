import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeedTeam } from '../../local/seed.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { launchChromium } from '../../web/chromium.ts';
import { waitFor } from '../support/wait.ts';

/**
 * A refinement chain on the run page in a real Chromium against the local stack: each round's
 * held-out figures, the best run, and which of its changes to approve; at a phone's and a desktop's width.
 */
let stack: LocalStack;
let browser: Browser;
let stateDir: string;
let team: SeedTeam;

beforeAll(async () => {
  process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
  stateDir = await mkdtemp(path.join(tmpdir(), 'review-app-chain-'));
  stack = await startLocalStack({ port: 0, stateDir, quiet: true, log: () => {} });
  browser = await launchChromium();
  const [first] = stack.teams;
  if (!first) throw new Error('The local stack seeded no team.');
  team = first;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

const appUrl = (rest = '') => `${stack.apiUrl}/app/${rest}`;

async function apiAs(context: BrowserContext, method: 'GET' | 'POST' | 'PUT', route: string, body?: unknown) {
  const response = await context.request.fetch(`${stack.apiUrl}/${route}`, {
    method,
    headers: method === 'GET' ? {} : { 'x-requested-with': 'e2e', 'content-type': 'application/json' },
    ...(body === undefined ? {} : { data: JSON.stringify(body) }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: asserted field by field
  const answer = (await response.json().catch(() => undefined)) as any;
  return { status: response.status(), body: answer };
}

async function signIn(page: Page): Promise<void> {
  await page.goto(appUrl());
  await page.getByLabel('Email').fill(team.email);
  await page.getByLabel('Password').fill(team.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Pipelines', level: 1 }).waitFor();
}

/** A pipeline of its own (its rules affect no other test) with executions carrying input, and a generated run. */
async function generatedRun(context: BrowserContext): Promise<{ pipelineId: string; runId: string }> {
  const created = await apiAs(context, 'POST', 'pipelines', {
    name: 'Chained bot',
    slots: [
      { id: 'retrieve', name: 'Retrieve', kind: 'retrieval', settings: { topK: 8, timeoutMs: 1000 } },
      { id: 'model', name: 'Model', kind: 'model', settings: { model: 'm', maxTokens: 256 } },
    ],
  });
  const pipelineId = created.body.id as string;
  await apiAs(context, 'POST', `pipelines/${pipelineId}/signals`, {
    signals: Array.from({ length: 5 }, (_, i) => ({
      kind: 'timeout',
      severity: 'critical',
      message: `Retrieval timed out (${i})`,
      slotId: 'retrieve',
    })),
  });
  await apiAs(context, 'POST', `pipelines/${pipelineId}/executions`, {
    executions: Array.from({ length: 20 }, (_, i) => ({
      id: `case-${i}`,
      status: i % 2 === 0 ? 'failed' : 'succeeded',
      durationMs: 900,
      startedAt: new Date(Date.now() - (30 - i) * 60_000).toISOString(),
      input: { question: `Where is order ${i}?` },
      ...(i % 2 === 0
        ? {
            error: 'retrieval timed out',
            slotResults: [{ slotId: 'retrieve', status: 'failed', durationMs: 1000, error: 'timeout' }],
          }
        : {}),
    })),
  });
  const started = await apiAs(context, 'POST', `pipelines/${pipelineId}/synthesize`, {
    synthesisHandler: 'heuristic-v1',
  });
  const runId = started.body.id as string;
  await waitFor(
    async () => (await apiAs(context, 'GET', `synthesis-runs/${runId}`)).body?.status === 'generated',
    `run ${runId} to be generated`,
    30_000,
    100,
  );
  return { pipelineId, runId };
}

/** Posts a result on every arm of every case: the base fails the even cases, the run's changes fix them. */
async function evaluateAll(context: BrowserContext, runId: string, breaks: boolean) {
  const set = await apiAs(context, 'GET', `synthesis-runs/${runId}/evaluation-set`);
  const run = await apiAs(context, 'GET', `synthesis-runs/${runId}`);
  const arms = ['candidate', ...run.body.changes.map((change: { id: string }) => `change:${change.id}`)];
  const results = set.body.cases.flatMap((c: { executionId: string }, index: number) => {
    const failsOnBase = Number(c.executionId.split('-')[1]) % 2 === 0;
    // The first round breaks every third case that passed on the base; the refinement none.
    const broken = breaks && !failsOnBase && index % 3 === 0;
    return [
      { executionId: c.executionId, arm: 'base', passed: !failsOnBase },
      ...arms.map((arm) => ({
        executionId: c.executionId,
        arm,
        passed: !broken,
        ...(broken ? { detail: 'answer cut short' } : {}),
      })),
    ];
  });
  const posted = await apiAs(context, 'POST', `synthesis-runs/${runId}/evaluations`, { results });
  expect(posted.status).toBe(200);
}

describe('a refinement chain in the review application', { timeout: 120_000 }, () => {
  it('shows each round with its held-out figures and the best run with the changes to approve', async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    await signIn(page);
    const { pipelineId, runId } = await generatedRun(context);
    await evaluateAll(context, runId, true);
    const refined = await apiAs(context, 'POST', `pipelines/${pipelineId}/synthesize`, {
      synthesisHandler: 'heuristic-v1',
      parentRunId: runId,
    });
    expect(refined.status, JSON.stringify(refined.body)).toBe(202);
    const refinedId = refined.body.id as string;
    expect(refined.body).toMatchObject({ parentRunId: runId, rootRunId: runId, estimatedCostUsd: 0 });
    await waitFor(
      async () => (await apiAs(context, 'GET', `synthesis-runs/${refinedId}`)).body?.status === 'generated',
      `run ${refinedId} to be generated`,
      30_000,
      100,
    );
    await evaluateAll(context, refinedId, false);

    await page.goto(appUrl(`runs/${runId}`));
    await page.getByRole('heading', { name: 'Refinement chain' }).waitFor();
    const rows = page.getByRole('table', { name: 'Rounds of the chain' }).locator('tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(1).textContent()).toContain('best');
    const best = (await page.locator('.chain-best').textContent()) ?? '';
    expect(best).toMatch(/Approve [\w, ]+: \d+ fixed, 0 broken/);
    expect(best).toContain('stays generated until a person approves it');
    const chain = await apiAs(context, 'GET', `synthesis-runs/${refinedId}/chain`);
    expect(chain.body.bestRunId).toBe(refinedId);
    expect(chain.body.runs[0].heldOut.regressed.length + chain.body.runs[0].regressed).toBeGreaterThan(0);

    const shots = path.join(stateDir, 'screenshots');
    await mkdir(shots, { recursive: true });
    await page.locator('.chain').screenshot({ path: path.join(shots, 'chain-1440.png') });
    await page.setViewportSize({ width: 375, height: 800 });
    await page.locator('.chain').screenshot({ path: path.join(shots, 'chain-375.png') });
    if (process.env.CHAIN_SCREENSHOTS) {
      const { cp } = await import('node:fs/promises');
      await cp(shots, process.env.CHAIN_SCREENSHOTS, { recursive: true });
    }
    await page.getByRole('link', { name: 'generated' }).nth(1).click();
    await page.getByRole('heading', { name: 'Refinement chain' }).waitFor();
    expect(page.url()).toContain(refinedId);
    await context.close();
  });
});
