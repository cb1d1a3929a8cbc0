import { mkdtemp, rm } from 'node:fs/promises';
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

/**
 * The run page in a real Chromium against the local stack: the evaluation (fixed and regressed
 * cases, each opening its input and both answers), the approval rules in force, why Approve is
 * disabled, and an admin's override.
 */
let stack: LocalStack;
let browser: Browser;
let stateDir: string;
let team: SeedTeam;

beforeAll(async () => {
  process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
  stateDir = await mkdtemp(path.join(tmpdir(), 'review-app-evaluation-'));
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
  generatedRunIn(stack.apiUrl, context, { name: 'Evaluated bot', executions: 8, oldestMinutesAgo: 10 });

describe('checking a proposal in the review application', { timeout: 90_000 }, () => {
  it('shows why Approve is disabled, the fixed and regressed cases with their input and answers, and lets an admin override', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signIn(page);
    const { pipelineId, runId } = await generatedRun(context);
    const rules = await apiAs(context, 'PUT', `pipelines/${pipelineId}/approval-rules`, {
      requireEvaluation: true,
      maxRegressions: 0,
      minEvaluatedCases: 0,
      forbidSelfApproval: false,
      allowApiTokens: true,
    });
    expect(rules.status).toBe(200);

    await page.goto(appUrl(`runs/${runId}`));
    const why = page.getByRole('status', { name: 'Why Approve is disabled' });
    await why.waitFor();
    expect(await why.textContent()).toContain('requires an evaluation');
    expect(await page.getByRole('button', { name: 'Approve', exact: true }).isDisabled()).toBe(true);
    expect(await page.getByText('Not evaluated yet').count()).toBe(1);
    // The cited executions in the evidence open what they were given.
    await page.locator('.execution-input summary').first().click();
    expect(await page.locator('.execution-input pre').first().textContent()).toMatch(
      /"question": "Where is order \d\?"/,
    );

    const set = await apiAs(context, 'GET', `synthesis-runs/${runId}/evaluation-set`);
    const ids: string[] = set.body.cases.map((c: { executionId: string }) => c.executionId);
    const [fixed, regressed, ...rest] = ids as [string, string, ...string[]];
    const posted = await apiAs(context, 'POST', `synthesis-runs/${runId}/evaluations`, {
      results: [
        { executionId: fixed, arm: 'base', passed: false, detail: 'timed out on the base' },
        { executionId: fixed, arm: 'candidate', passed: true, durationMs: 800 },
        { executionId: regressed, arm: 'base', passed: true },
        { executionId: regressed, arm: 'candidate', passed: false, detail: 'answered about the wrong order' },
        ...rest.flatMap((id) => [
          { executionId: id, arm: 'base', passed: true },
          { executionId: id, arm: 'candidate', passed: true },
        ]),
      ],
    });
    expect(posted.status).toBe(200);

    await page.reload();
    await page.getByRole('heading', { name: 'Evaluation' }).waitFor();
    await page.getByRole('list', { name: 'Regressed cases' }).waitFor();
    const summary = (await page.locator('.evaluation-summary').textContent()) ?? '';
    expect(summary).toContain(`${ids.length} of ${ids.length} cases`);
    expect(summary).toContain('1 fixed');
    expect(summary).toContain('1 regressed');
    const regressedCase = page.getByRole('list', { name: 'Regressed cases' }).getByText(regressed);
    await regressedCase.click();
    const opened = (await page.getByRole('list', { name: 'Regressed cases' }).textContent()) ?? '';
    const question = set.body.cases.find((c: { executionId: string }) => c.executionId === regressed).input
      .question as string;
    expect(opened).toContain(question);
    expect(opened).toContain('answered about the wrong order');
    expect(opened).toMatch(/Base: passed/);
    expect(opened).toMatch(/Candidate: failed/);
    expect(await page.getByRole('list', { name: 'Fixed cases' }).textContent()).toContain(fixed);

    expect(await why.textContent()).toContain('1 case(s) regressed');
    expect(await page.getByRole('button', { name: 'Approve', exact: true }).isDisabled()).toBe(true);
    await page.getByText('Approval rules in force').click();
    expect(await page.getByRole('definition').filter({ hasText: /^yes$/ }).count()).toBeGreaterThan(0);

    await page.getByLabel('Override reason (admins)').fill('The regressed case is a known flaky upstream.');
    await page.getByRole('button', { name: 'Approve with override' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Approve with override' }).click();
    await page
      .getByRole('status', { name: 'Run status' })
      .filter({ hasText: /^approved$/ })
      .waitFor();
    const stored = await apiAs(context, 'GET', `synthesis-runs/${runId}`);
    expect(stored.body).toMatchObject({
      status: 'approved',
      approvalOverrideReason: 'The regressed case is a known flaky upstream.',
    });
    await context.close();
  });
});
