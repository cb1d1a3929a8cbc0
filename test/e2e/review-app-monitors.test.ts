/**
 * The review application's Monitors section (Chromium, the local stack): a person adds a monitor
 * with the form (labels, keyboard), sees its state in words, since when and its last value with
 * the unit once the judge has run, and deletes it after a confirmation; at 1280 and 375 px.
 */
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { MONITOR_JUDGE } from '../../lambdas/functions.ts';
import { DEMO_SLOTS } from '../../local/seed.ts';
import { useReviewApp } from '../support/review-app-stack.ts';

const app = useReviewApp('review-app-monitors-');

async function api(method: string, route: string, body?: unknown) {
  const response = await fetch(`${app.stack.apiUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${app.team.apiToken}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
  return { status: response.status, body: (await response.json().catch(() => null)) as any };
}

async function signedIn(width: number): Promise<Page> {
  const context = await app.browser.newContext({ viewport: { width, height: 900 } });
  app.contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${app.stack.apiUrl}/app/`);
  await page.getByLabel('Email').fill(app.team.email);
  await page.getByLabel('Password').fill(app.team.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Pipelines', level: 1 }).waitFor();
  return page;
}

/** One pass of the scheduled judge, now (it runs every minute on its own). */
async function judgeNow() {
  const judge = app.stack.functions.get(MONITOR_JUDGE.entry);
  if (!judge) throw new Error('no judge-monitors function in the local stack');
  await judge.invoke({ source: 'aws.events', 'detail-type': 'Scheduled Event' });
}

describe('the Monitors section of a pipeline page', { timeout: 120_000 }, () => {
  for (const width of [1280, 375]) {
    it(`adds a monitor with the form, shows its state in words after a judgement, and deletes it at ${width} px`, async () => {
      const pipeline = (await api('POST', '/pipelines', { name: `monitored ${width}`, slots: DEMO_SLOTS }))
        .body;
      const page = await signedIn(width);
      await page.goto(`${app.stack.apiUrl}/app/pipelines/${pipeline.id}`);
      const section = page.locator('section', {
        has: page.getByRole('heading', { name: 'Monitors', exact: true }),
      });
      await section.getByText('No monitors yet.').waitFor();

      // The form by its labels, typed and submitted with the keyboard.
      await section.getByLabel('Name').fill('Failures over 10 %');
      await section.getByLabel('Metric').selectOption('failure_rate');
      await section.getByLabel('Alert when').selectOption('above');
      await section.getByLabel(/^Threshold/).fill('0.1');
      await section.getByLabel(/^Window/).fill('5');
      await section.getByLabel(/^At least/).fill('4');
      await section.getByLabel(/^At least/).press('Enter');
      const table = section.getByRole('table', { name: 'Monitors' });
      await table.getByText('Failures over 10 %', { exact: true }).waitFor();
      expect(await table.innerText()).toContain('No data');
      expect(await table.innerText()).toContain('Failure rate above 10 % over 5 min (at least 4 executions)');

      // Failures recorded, the judge runs: the state reads Alert, with the value in percent.
      const recorded = await api('POST', `/pipelines/${pipeline.id}/executions`, {
        executions: [
          ...Array.from({ length: 3 }, () => ({ status: 'failed', durationMs: 200 })),
          { status: 'succeeded', durationMs: 200 },
        ],
      });
      expect(recorded.status).toBe(201);
      await judgeNow();
      await page.reload();
      const row = section.getByRole('row', { name: /Failures over 10 %/ });
      await row.getByText('Alert', { exact: true }).waitFor();
      expect(await row.innerText()).toContain('75 %');
      await section.screenshot({ path: path.join(tmpdir(), `monitors-${width}.png`) });

      // Delete: a confirmation first; Cancel keeps it, Delete removes it.
      await section.getByRole('button', { name: 'Delete monitor Failures over 10 %' }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete the monitor "Failures over 10 %"?' });
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      expect(await table.count()).toBe(1);
      await section.getByRole('button', { name: 'Delete monitor Failures over 10 %' }).focus();
      await page.keyboard.press('Enter');
      await dialog.getByRole('button', { name: 'Delete' }).click();
      await section.getByText('No monitors yet.').waitFor();
      expect((await api('GET', `/pipelines/${pipeline.id}/monitors`)).body.items).toEqual([]);
    });
  }
});
