/**
 * The pipeline over time for `npm run screenshots`: three hours of two configurations with an
 * activation between them, the pipeline page's Over time section (charts and the changes), one
 * chart with its readout at the last full hour and its table open. `npx tsx web/screenshots-metrics.ts`
 * takes only these, at both widths, on a local stack of its own.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { startLocalStack } from '../local/stack.ts';
import type { Call } from '../test/support/guarded-rollout.ts';
import { metricsHistory } from '../test/support/metrics-history.ts';
import { launchChromium } from './chromium.ts';

/** `file` names where each screenshot goes. */
export async function metricsShots(page: Page, apiUrl: string, file: (name: string) => string) {
  const call: Call = async (method, route, body) => {
    const response = await page.request.fetch(`${apiUrl}/${route}`, {
      method,
      headers: { 'x-requested-with': 'screenshots', 'content-type': 'application/json' },
      ...(body === undefined ? {} : { data: JSON.stringify(body) }),
    });
    return response.json();
  };
  const { pipelineId } = await metricsHistory(call, 'Charted answers');
  await page.goto(`${apiUrl}/app/pipelines/${pipelineId}`);
  const section = page.getByRole('region', { name: 'Over time' });
  const chart = section.getByRole('figure', { name: 'Failure rate' });
  await chart.waitFor();
  await section.screenshot({ path: file('19-pipeline-over-time') });
  await chart.getByRole('slider').focus();
  await page.keyboard.press('End');
  await page.keyboard.press('ArrowLeft');
  await chart.getByText('Table of failure rate').click();
  await chart.screenshot({ path: file('19a-chart-readout-table') });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
  const outDir = join(import.meta.dirname, '..', '.screenshots');
  const stateDir = await mkdtemp(join(tmpdir(), 'pipeline-synthesis-screenshots-metrics-'));
  const stack = await startLocalStack({ port: 0, stateDir, quiet: true });
  const browser = await launchChromium();
  try {
    await mkdir(outDir, { recursive: true });
    const team = stack.teams[0];
    if (!team) throw new Error('The local stack seeded no team.');
    for (const width of [1280, 375]) {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${stack.apiUrl}/app/`);
      await page.getByLabel('Email').fill(team.email);
      await page.getByLabel('Password').fill(team.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Pipelines' }).waitFor();
      await metricsShots(page, stack.apiUrl, (name) => join(outDir, `${name}-${width}.png`));
      await context.close();
    }
  } finally {
    await browser.close();
    await stack.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}
