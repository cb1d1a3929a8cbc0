/**
 * The pipeline over time for `npm run screenshots`: three hours of two configurations with an
 * activation between them, the pipeline page's Over time section (charts and the changes), one
 * chart with its readout at the last full hour and its table open. `npx tsx web/screenshots-metrics.ts`
 * takes only these, at both widths, on a local stack of its own.
 */
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import type { Call } from '../test/support/guarded-rollout.ts';
import { metricsHistory } from '../test/support/metrics-history.ts';
import { takeAlone } from './screenshots-alone.ts';

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
  await takeAlone('metrics', metricsShots);
}
