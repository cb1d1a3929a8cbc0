import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeedTeam } from '../../local/seed.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { launchChromium } from '../../web/chromium.ts';
import {
  apiAs as apiAsIn,
  generatedRun as generatedRunIn,
  signIn as signInAs,
} from '../support/review-app-runs.ts';
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
const apiAs = (context: BrowserContext, method: 'GET' | 'POST' | 'PUT', route: string, body?: unknown) =>
  apiAsIn(stack.apiUrl, context, method, route, body);
const signIn = (page: Page) => signInAs(page, stack.apiUrl, team);
const generatedRun = (context: BrowserContext) =>
  generatedRunIn(stack.apiUrl, context, { name: 'Chained bot', executions: 20, oldestMinutesAgo: 30 });

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
    // Each round's run is named by its round, its status beside it: not every link reading "generated".
    const table = page.getByRole('table', { name: 'Rounds of the chain' });
    expect(await table.getByRole('link', { name: 'generated' }).count()).toBe(0);
    expect(await rows.nth(0).textContent()).toContain('this run');
    await table.getByRole('link', { name: 'run of round 2' }).click();
    await page.getByRole('heading', { name: 'Refinement chain' }).waitFor();
    expect(page.url()).toContain(refinedId);
    await context.close();
  });
});
