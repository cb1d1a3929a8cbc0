import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { BOX, bucketTime, xOf } from '../../web/src/charts/series.ts';
import type { Call } from '../support/guarded-rollout.ts';
import { type HistoryHour, metricsHistory } from '../support/metrics-history.ts';
import { apiAs, signIn } from '../support/review-app-runs.ts';
import { useReviewApp } from '../support/review-app-stack.ts';

/**
 * The pipeline page's charts over time (Chromium, the local stack): three hours recorded through the
 * API at known times, two configurations with an activation between them, read back from each
 * chart's table view (exact counts, rates, tokens and score means, the p95 within 2 % of the nearest
 * rank), from the readout the arrow keys and the pointer move, at 1280 and 375 px, with screenshots;
 * and a range past the team's retention starts where it allows.
 */
const app = useReviewApp('review-app-metrics-');
const SHOTS = path.join(import.meta.dirname, '..', '..', '.screenshots');

async function openCharts(width: number, name: string) {
  const context = await app.browser.newContext({ viewport: { width, height: 900 } });
  app.contexts.push(context);
  const page = await context.newPage();
  await signIn(page, app.stack.apiUrl, app.team);
  const call: Call = async (method, route, body) =>
    (await apiAs(app.stack.apiUrl, context, method, route, body)).body;
  const history = await metricsHistory(call, name);
  await page.goto(`${app.stack.apiUrl}/app/pipelines/${history.pipelineId}`);
  const section = page.getByRole('region', { name: 'Over time' });
  await section.getByRole('figure', { name: 'Failure rate' }).waitFor();
  return { page, section, history };
}

/** A chart's table, opened: its column names and each row's cells by the hour's start. */
async function tableOf(section: Locator, title: string) {
  const chart = section.getByRole('figure', { name: title });
  // Opened once: a details element stays open when the range changes.
  if ((await chart.locator('details').getAttribute('open')) === null)
    await chart.getByText(`Table of ${title.toLowerCase()}`).click();
  const table = chart.getByRole('table');
  const columns = await table.locator('thead th').allInnerTexts();
  const cell = async (hour: HistoryHour, column: string) =>
    (
      await table
        .locator('tbody tr', { has: table.page().locator(`th time[datetime="${hour.at}"]`) })
        .locator('th, td')
        .nth(columns.indexOf(column))
        .innerText()
    ).trim();
  return { chart, columns, cell };
}

const version = (hour: HistoryHour) => `version ${hour.version}`;
const other = (hour: HistoryHour) => `version ${3 - hour.version}`;

async function checkTables(section: Locator, hours: HistoryHour[]) {
  const failure = await tableOf(section, 'Failure rate');
  expect(failure.columns).toEqual(['Hour', 'All executions', 'version 1', 'version 2', 'Changes']);
  for (const hour of hours) {
    const rate = `${((hour.failed / hour.executions) * 100).toFixed(2)} % (${hour.failed} of ${hour.executions} failed)`;
    expect(await failure.cell(hour, 'Hour')).toBe(bucketTime(hour.at, 'hour'));
    expect(await failure.cell(hour, 'All executions')).toBe(rate);
    expect(await failure.cell(hour, version(hour))).toBe(rate);
    expect(await failure.cell(hour, other(hour))).toBe('—');
  }
  const duration = await tableOf(section, 'p95 duration');
  for (const hour of hours) {
    const text = await duration.cell(hour, 'All executions');
    expect(text).toMatch(new RegExp(`^\\d+ ms \\(${hour.executions} executions\\)$`));
    expect(Math.abs(Number.parseInt(text, 10) - hour.p95)).toBeLessThanOrEqual(hour.p95 * 0.02 + 0.5);
  }
  const tokens = await tableOf(section, 'Tokens per execution (input + output)');
  const [oldest] = hours;
  if (!oldest) throw new Error('no hours recorded');
  expect(await tokens.cell(oldest, 'All executions')).toBe(
    `${oldest.tokensPerExecution} tokens (1,000 in + 200 out, 10 executions)`,
  );
  const relevance = await tableOf(section, 'Signal “relevance”, mean');
  for (const hour of hours.filter((each) => each.relevance)) {
    const { count, mean } = hour.relevance ?? { count: 0, mean: 0 };
    expect(await relevance.cell(hour, 'All executions')).toBe(`${mean.toFixed(3)} (n\u00a0=\u00a0${count})`);
  }
}

/** The readout as a person reaches the last full hour: the pointer over its point, then the arrow keys. */
async function checkReadout(page: Page, section: Locator, last: HistoryHour) {
  const chart = section.getByRole('figure', { name: 'Failure rate' });
  const slider = chart.getByRole('slider');
  const words = `All executions: ${((last.failed / last.executions) * 100).toFixed(2)} % (${last.failed} of ${last.executions} failed)`;
  const plot = await slider.locator('svg').boundingBox();
  if (!plot) throw new Error('the chart is not drawn');
  // 24 hourly points; the last full hour is the one before the hour running now.
  await page.mouse.move(plot.x + (xOf(22, 24) / BOX.width) * plot.width, plot.y + plot.height / 2);
  expect(await chart.locator('.series-readout').innerText()).toContain(words);
  await page.mouse.move(0, 0);
  await slider.focus();
  // A day back and forth (Page Up, Page Down), then the last hour and one before it.
  await page.keyboard.press('End');
  await page.keyboard.press('PageUp');
  expect(await slider.getAttribute('aria-valuenow')).toBe('0');
  await page.keyboard.press('PageDown');
  expect(await slider.getAttribute('aria-valuenow')).toBe('23');
  await page.keyboard.press('ArrowLeft');
  expect(await slider.getAttribute('aria-valuetext')).toContain(`${bucketTime(last.at, 'hour')}. ${words}`);
  expect(await chart.locator('.series-readout').innerText()).toContain(words);
}

describe('the pipeline over time in the review application', { timeout: 180_000 }, () => {
  for (const width of [1280, 375]) {
    it(`charts the recorded hours per configuration with the activation marked, readable from each table, at ${width} px`, async () => {
      const { page, section, history } = await openCharts(width, `Charted answers ${width}`);
      await checkTables(section, history.hours);

      // The approval's activation: listed with its person, a numbered line on every chart.
      const changes = section.getByRole('list', { name: /^Activations and rollouts in / });
      expect(await changes.getByRole('listitem').count()).toBe(1);
      expect(await changes.innerText()).toMatch(/version 2[\s\S]*, by (?!the system)\S+/i);
      for (const chart of await section.getByRole('figure').all())
        expect(await chart.locator('.marker').count()).toBe(1);
      const last = history.hours.at(-1);
      if (!last) throw new Error('no hours recorded');
      await checkReadout(page, section, last);

      // Nothing wider than the screen; a chart's table scrolls inside its own box.
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(width);
      await mkdir(SHOTS, { recursive: true });
      await section.screenshot({ path: path.join(SHOTS, `19-pipeline-over-time-${width}.png`) });

      // Another range asks again: 30 days by the day, the three hours in today's (or yesterday's) row.
      await section.getByRole('radio', { name: '30 d' }).check();
      await section.getByText('Activations and rollouts in the last 30 days').waitFor();
      const daily = await tableOf(section, 'Failure rate');
      expect(daily.columns[0]).toBe('Day');
    });
  }

  it('starts a range reaching past the team’s retention at the oldest time it allows, and says so', async () => {
    const { page, section, history } = await openCharts(1280, 'Charted with a short retention');
    const settings = (body: { signalRetentionDays: number; executionRetentionDays: number }) =>
      page.request.fetch(`${app.stack.apiUrl}/teams/${app.team.teamId}/settings`, {
        method: 'PATCH',
        headers: { 'x-requested-with': 'e2e', 'content-type': 'application/json' },
        data: JSON.stringify(body),
      });
    const before = await (
      await page.request.fetch(`${app.stack.apiUrl}/teams/${app.team.teamId}/settings`)
    ).json();
    expect((await settings({ signalRetentionDays: 7, executionRetentionDays: 7 })).status()).toBe(200);
    try {
      await section.getByRole('radio', { name: '30 d' }).check();
      await section
        .getByText(/^The team keeps records for less than 30 days: the charts start at /)
        .waitFor();
      const daily = await tableOf(section, 'Failure rate');
      expect(daily.columns[0]).toBe('Day');
      const executions = history.hours.reduce((sum, hour) => sum + hour.executions, 0);
      const failed = history.hours.reduce((sum, hour) => sum + hour.failed, 0);
      // The three hours in one day's row, or in two when they straddle midnight (UTC).
      const rows = await section
        .getByRole('figure', { name: 'Failure rate' })
        .locator('tbody tr td:nth-of-type(1)')
        .allInnerTexts();
      const counted = rows.flatMap(
        (text) => /\((\d+) of (\d+) failed\)/.exec(text)?.slice(1).map(Number) ?? [],
      );
      expect(counted.filter((_, i) => i % 2 === 0).reduce((a, b) => a + b, 0)).toBe(failed);
      expect(counted.filter((_, i) => i % 2 === 1).reduce((a, b) => a + b, 0)).toBe(executions);
    } finally {
      await settings({
        signalRetentionDays: before.signalRetentionDays,
        executionRetentionDays: before.executionRetentionDays,
      });
    }
  });
});
