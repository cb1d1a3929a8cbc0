import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeedTeam } from '../../local/seed.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { launchChromium } from '../../web/chromium.ts';
import { waitFor } from '../support/wait.ts';

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
    name: 'Evaluated bot',
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
    executions: Array.from({ length: 8 }, (_, i) => ({
      id: `case-${i}`,
      status: i % 2 === 0 ? 'failed' : 'succeeded',
      durationMs: 900,
      startedAt: new Date(Date.now() - (10 - i) * 60_000).toISOString(),
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
