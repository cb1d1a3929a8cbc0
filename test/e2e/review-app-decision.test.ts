import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { DEMO_SLOTS } from '../../local/seed.ts';
import {
  apiAs as apiAsIn,
  FIVE_CHANGE_SIGNALS,
  generatedRun as generatedRunIn,
  signIn as signInAs,
} from '../support/review-app-runs.ts';
import { useReviewApp } from '../support/review-app-stack.ts';

/**
 * Deciding in the review application (Chromium, the local stack, heuristic-v1): what a person
 * approves is exactly what ships. Approve with override sends the form's changes and rollout; a
 * typo in the share is an error, not "all traffic"; each decision confirms in words; the approved
 * run lists what shipped; regressions are judged on the chosen changes; a rollout shows its progress,
 * warns before promoting on nothing measured, and its outcome stays visible on the pipeline.
 */
const app = useReviewApp('review-app-decision-');

const appUrl = (rest = '') => `${app.stack.apiUrl}/app/${rest}`;
const apiAs = (context: BrowserContext, method: 'GET' | 'POST' | 'PUT', route: string, body?: unknown) =>
  apiAsIn(app.stack.apiUrl, context, method, route, body);

async function signedIn(width: number): Promise<{ page: Page; context: BrowserContext }> {
  const context = await app.browser.newContext({ viewport: { width, height: 900 } });
  app.contexts.push(context);
  const page = await context.newPage();
  await signInAs(page, app.stack.apiUrl, app.team);
  return { page, context };
}

/** A run of five changes (5 is called speculative) on a pipeline of its own. */
async function fiveChangeRun(context: BrowserContext, name: string) {
  const made = await generatedRunIn(app.stack.apiUrl, context, {
    name,
    executions: 12,
    oldestMinutesAgo: 20,
    slots: DEMO_SLOTS,
    signals: FIVE_CHANGE_SIGNALS,
  });
  const run = (await apiAs(context, 'GET', `synthesis-runs/${made.runId}`)).body;
  expect(run.changes.map((change: { id: string }) => change.id).sort()).toEqual(['1', '2', '3', '4', '5']);
  return made;
}

/**
 * Results of `evaluate --per-change`: each case passes on the base and on every arm but that
 * change 3 (and so the candidate) breaks `broken` cases, and every change alone fixes case-0.
 */
async function evaluatePerChange(context: BrowserContext, runId: string, broken: number) {
  const set = await apiAs(context, 'GET', `synthesis-runs/${runId}/evaluation-set`);
  const ids: string[] = set.body.cases.map((c: { executionId: string }) => c.executionId);
  const breaks = new Set(ids.filter((id) => id !== 'case-0').slice(0, broken));
  const arms = ['candidate', ...['1', '2', '3', '4', '5'].map((id) => `change:${id}`)];
  const results = ids.flatMap((id) => [
    { executionId: id, arm: 'base', passed: id !== 'case-0' },
    ...arms.map((arm) => ({
      executionId: id,
      arm,
      passed: !(breaks.has(id) && (arm === 'candidate' || arm === 'change:3')),
    })),
  ]);
  for (let at = 0; at < results.length; at += 100) {
    expect(
      (
        await apiAs(context, 'POST', `synthesis-runs/${runId}/evaluations`, {
          results: results.slice(at, at + 100),
        })
      ).status,
    ).toBe(200);
  }
}

const rules = (over: Record<string, unknown>) => ({
  requireEvaluation: false,
  maxRegressions: 0,
  minEvaluatedCases: 0,
  forbidSelfApproval: false,
  allowApiTokens: true,
  ...over,
});

const changeBox = (page: Page, id: string) =>
  page.getByRole('checkbox', { name: new RegExp(`^Change ${id} \\(`) });

describe('deciding in the review application', { timeout: 150_000 }, () => {
  it('approves with override exactly the changes ticked and the rollout typed, and lists what shipped', async () => {
    const { page, context } = await signedIn(1280);
    const { pipelineId, runId } = await fiveChangeRun(context, 'Override bot');
    await evaluatePerChange(context, runId, 2);
    // A rule no partial approval can meet, so only an admin's override approves.
    expect(
      (
        await apiAs(
          context,
          'PUT',
          `pipelines/${pipelineId}/approval-rules`,
          rules({ minEvaluatedCases: 500 }),
        )
      ).status,
    ).toBe(200);

    await page.goto(appUrl(`runs/${runId}`));
    await changeBox(page, '1').waitFor();
    // Listed by number, whatever their slots.
    const labels = (await page.locator('.change-choice label').allTextContents()).map(
      (text) => text.trim().split(' ')[1],
    );
    expect(labels).toEqual(['1', '2', '3', '4', '5']);
    for (const id of ['1', '4', '5']) await changeBox(page, id).check();
    for (const id of ['2', '3']) await changeBox(page, id).uncheck();
    await page.getByRole('checkbox', { name: /Roll out to a share of traffic first/ }).check();
    await page.getByLabel(/Share of traffic for the candidate/).fill('10');

    // What the rules judge: the chosen changes, each replayed alone (3, which broke cases, is out).
    expect(await page.locator('.judged-regressions').textContent()).toContain(
      'Regressions are judged on changes 1, 4 and 5, each replayed alone on the base: 0 cases broken',
    );
    const why = page.getByRole('status', { name: 'Why Approve is disabled' });
    expect(await why.textContent()).toContain('requires at least 500');
    expect(await why.textContent()).not.toContain('regressed');

    await page.getByLabel('Override reason (admins)').fill('Checked the three changes by hand.');
    await page.getByRole('button', { name: 'Approve with override' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.textContent()).toContain(
      'Changes 1, 4 and 5 go live for 10 % of traffic first (the other 90 % keeps the active configuration); 2 and 3 are left out.',
    );
    await dialog.getByRole('button', { name: 'Approve with override' }).click();
    await page
      .getByRole('status', { name: 'Run status' })
      .filter({ hasText: /^approved$/ })
      .waitFor();

    const stored = (await apiAs(context, 'GET', `synthesis-runs/${runId}`)).body;
    expect(stored).toMatchObject({
      status: 'approved',
      approvedChangeIds: ['1', '4', '5'],
      approvalOverrideReason: 'Checked the three changes by hand.',
      rolloutId: expect.any(String),
    });
    const rollout = (await apiAs(context, 'GET', `pipelines/${pipelineId}/rollout`)).body;
    expect(rollout).toMatchObject({ status: 'active', percent: 10, synthesisRunId: runId });

    const shipped = page.getByRole('region', { name: 'What was approved' });
    expect(await shipped.textContent()).toContain('Changes 1, 4 and 5 shipped; 2 and 3 were left out.');
    expect(await shipped.getByRole('list', { name: 'Changes left out' }).getByRole('listitem').count()).toBe(
      2,
    );
  });

  it('makes a typo in the share an error on the field, leaves doubtful changes unticked, and confirms Reject', async () => {
    const { page, context } = await signedIn(375);
    const { runId } = await fiveChangeRun(context, 'Typo bot');
    await evaluatePerChange(context, runId, 3);
    await page.goto(appUrl(`runs/${runId}`));
    await changeBox(page, '1').waitFor();

    // The per-change verdicts and the recommendation are on the page.
    const table = page.getByRole('table', { name: 'Each change replayed alone' });
    expect(await table.getByRole('row', { name: /Change 3/ }).textContent()).toContain(
      'breaks cases: leave it out',
    );
    expect(await page.locator('.recommendation').textContent()).toMatch(/Leave out 3: it breaks 3 cases/);
    // The speculative change and the one that broke cases start unticked, saying why.
    expect(await changeBox(page, '5').isChecked()).toBe(false);
    expect(await changeBox(page, '3').isChecked()).toBe(false);
    expect(await changeBox(page, '1').isChecked()).toBe(true);
    expect(await page.locator('#why-5').textContent()).toContain('the synthesis calls it a guess');
    expect(await page.locator('#why-3').textContent()).toContain('replayed alone it broke 3 cases');

    await page.getByRole('checkbox', { name: /Roll out to a share of traffic first/ }).check();
    const share = page.getByLabel(/Share of traffic for the candidate/);
    await share.fill('abc');
    expect(await share.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#rollout-percent-error').textContent()).toContain(
      'whole percent from 1 to 99',
    );
    const approve = page.getByRole('button', { name: 'Approve', exact: true });
    expect(await approve.isDisabled()).toBe(true);
    await share.fill('');
    expect(await approve.isDisabled()).toBe(true);
    await share.fill('25');
    expect(await approve.isDisabled()).toBe(false);
    // The rules in force fit a phone's width.
    await page.getByText('Approval rules in force').click();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(375);

    await page.getByLabel('Reason for rejecting').fill('Not this week.');
    await page.getByRole('button', { name: 'Reject', exact: true }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.textContent()).toContain('Your reason is kept with the run: “Not this week.”');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await apiAs(context, 'GET', `synthesis-runs/${runId}`)).body.status).toBe('generated');
    await page.getByRole('button', { name: 'Reject', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Reject', exact: true }).click();
    await page
      .getByRole('status', { name: 'Run status' })
      .filter({ hasText: /^rejected$/ })
      .waitFor();
  });

  it('shows a rollout’s progress and diff, warns before promoting on nothing measured, keeps each end’s reason and outcome', async () => {
    const { page, context } = await signedIn(1280);
    const { pipelineId, runId } = await fiveChangeRun(context, 'Rollout bot');
    expect(
      (
        await apiAs(context, 'POST', `synthesis-runs/${runId}/approve`, {
          changeIds: ['1'],
          rollout: { percent: 20 },
        })
      ).status,
    ).toBe(200);

    await page.goto(appUrl(`pipelines/${pipelineId}`));
    const summary = page.getByRole('region', { name: /Rollout in progress/ });
    await summary.waitFor();
    const progress = summary.getByRole('list', { name: 'Executions so far per arm' });
    await progress.getByText(/Candidate: 0 of the 200 executions a promotion needs/).waitFor();
    await summary.getByText(/What the candidate \(version \d+\) changes against the base/).click();
    expect(await summary.getByRole('table', { name: /Settings of Retrieve documents/ }).count()).toBe(1);

    await summary.getByRole('button', { name: 'Promote to all traffic…' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.getByRole('alert').textContent()).toContain(
      'No execution of the candidate has been measured yet',
    );
    await dialog.getByLabel(/Reason/).fill('The retrieval timeout is urgent.');
    await dialog.getByRole('button', { name: 'Promote anyway' }).click();
    await page.getByRole('heading', { name: /Active configuration: version/ }).waitFor();
    await expect
      .poll(async () => (await apiAs(context, 'GET', `pipelines/${pipelineId}/rollout`)).body.status)
      .toBe('promoted');
    expect((await apiAs(context, 'GET', `pipelines/${pipelineId}/rollout`)).body.endReason).toBe(
      'The retrieval timeout is urgent.',
    );
    // The promotion is told as one, not as a roll back.
    const history = page.getByRole('list', { name: 'Activations, newest first' });
    await history.getByText('promotion of a rollout').waitFor();
    expect(await history.getByText('roll back').count()).toBe(0);

    // A second rollout, rolled back from the run page: its outcome stays on the pipeline and its run.
    const next = await generatedRunIn(app.stack.apiUrl, context, {
      name: 'Rollout bot, again',
      executions: 4,
      oldestMinutesAgo: 10,
    });
    expect(
      (await apiAs(context, 'POST', `synthesis-runs/${next.runId}/approve`, { rollout: { percent: 30 } }))
        .status,
    ).toBe(200);
    await page.goto(appUrl(`runs/${next.runId}`));
    await page.getByRole('button', { name: 'Roll back…' }).click();
    await page
      .getByRole('dialog')
      .getByLabel(/Reason/)
      .fill('Wrong week for it.');
    await page.getByRole('dialog').getByRole('button', { name: 'Roll back' }).click();
    await page
      .getByRole('status', { name: 'Rollout status' })
      .filter({ hasText: /^rolled back$/ })
      .waitFor();
    await page
      .getByRole('status', { name: 'Rollout outcome' })
      .filter({ hasText: 'rollout rolled back' })
      .waitFor();
    await page.goto(appUrl(`pipelines/${next.pipelineId}`));
    const last = page.getByRole('region', { name: /Last rollout: version \d+ rolled back/ });
    await last.waitFor();
    expect(await last.textContent()).toContain('Wrong week for it.');
    await page.getByRole('cell', { name: /approved · rollout rolled back/ }).waitFor();
    expect(await page.getByText(/the rollout of version \d+ was rolled back/).count()).toBe(1);
  });

  it('shows the findings and warnings of a run with nothing to change, and offers heuristic-v1 after a failed claude-v1', async () => {
    const { page, context } = await signedIn(1280);
    const first = await generatedRunIn(app.stack.apiUrl, context, {
      name: 'Settled bot',
      executions: 6,
      oldestMinutesAgo: 10,
    });
    expect((await apiAs(context, 'POST', `synthesis-runs/${first.runId}/approve`)).status).toBe(200);
    // The same evidence again: the approved configuration already answers it.
    const again = await apiAs(context, 'POST', `pipelines/${first.pipelineId}/synthesize`, {
      synthesisHandler: 'heuristic-v1',
    });
    await expect
      .poll(async () => (await apiAs(context, 'GET', `synthesis-runs/${again.body.id}`)).body.status, {
        timeout: 30_000,
      })
      .toBe('generated');
    const quiet = (await apiAs(context, 'GET', `synthesis-runs/${again.body.id}`)).body;
    expect(quiet.proposedConfigurationId).toBeNull();
    await page.goto(appUrl(`runs/${again.body.id}`));
    await page.getByRole('heading', { name: 'Nothing to change' }).waitFor();
    await page.getByRole('heading', { name: 'Diagnosis' }).waitFor();
    if (quiet.diagnosis?.findings.length > 0)
      expect(await page.getByRole('list', { name: 'Findings' }).getByRole('listitem').count()).toBe(
        quiet.diagnosis.findings.length,
      );
    expect(await page.getByRole('region', { name: 'Warnings' }).textContent()).toContain(
      quiet.structuredWarnings[0].message,
    );

    // The effect's difference of two failure rates is in percentage points, not "%".
    await apiAs(context, 'POST', `pipelines/${first.pipelineId}/executions`, {
      executions: Array.from({ length: 4 }, (_, i) => ({
        status: i === 0 ? 'failed' : 'succeeded',
        durationMs: 700,
      })),
    });
    await page.goto(appUrl(`runs/${first.runId}`));
    // The panel's own figures (each guarded metric's tile has a Difference of its own).
    const difference = page
      .getByRole('region', { name: 'Effect' })
      .locator('dl.facts')
      .first()
      .locator('dt', { hasText: 'Difference' });
    await difference.waitFor();
    expect(await difference.locator('xpath=following-sibling::dd[1]').textContent()).toMatch(
      /^−25\.0 percentage points in the failure rate \(no interval yet: each arm needs at least 30 executions/,
    );

    const failed = await apiAs(context, 'POST', `pipelines/${first.pipelineId}/synthesize`, {
      synthesisHandler: 'claude-v1',
    });
    await page.goto(appUrl(`runs/${failed.body.id}`));
    await page
      .getByRole('status', { name: 'Run status' })
      .filter({ hasText: /^failed$/ })
      .waitFor({ timeout: 30_000 });
    expect(await page.locator('.facts').textContent()).not.toContain('this handler calls no model');
    await page.getByRole('button', { name: 'Retry with heuristic-v1' }).click();
    await page.waitForURL((url) => !url.pathname.endsWith(failed.body.id));
    await page
      .getByRole('status', { name: 'Run status' })
      .filter({ hasText: /^generated$/ })
      .waitFor({ timeout: 30_000 });
    expect(await page.locator('.facts').textContent()).toContain('heuristic-v1');
  });
});
