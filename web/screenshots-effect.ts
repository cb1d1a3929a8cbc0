/**
 * The effect of a guarded rollout for `npm run screenshots`: a rollout guarding the mean duration
 * and a relevance score, judged three times, its Effect card (step, progress, next move, a tile per
 * metric with its chart) and one tile alone. `npx tsx web/screenshots-effect.ts` takes only these,
 * at both widths, on a local stack of its own.
 */
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { type Call, guardedRollout } from '../test/support/guarded-rollout.ts';
import { takeAlone } from './screenshots-alone.ts';

/** `file` names where each screenshot goes. */
export async function effectShots(page: Page, apiUrl: string, file: (name: string) => string) {
  const call: Call = async (method, route, body) => {
    const response = await page.request.fetch(`${apiUrl}/${route}`, {
      method,
      headers: { 'x-requested-with': 'screenshots', 'content-type': 'application/json' },
      ...(body === undefined ? {} : { data: JSON.stringify(body) }),
    });
    return response.json();
  };
  const { runId } = await guardedRollout(call, 'Guarded answers');
  await page.goto(`${apiUrl}/app/runs/${runId}`);
  const tiles = page.getByRole('list', { name: 'Guarded metrics' }).getByRole('listitem');
  await tiles.first().waitFor();
  await page.getByRole('region', { name: 'Effect' }).screenshot({ path: file('18-effect-guarded-metrics') });
  await tiles.first().screenshot({ path: file('18a-effect-metric-tile') });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await takeAlone('effect', effectShots);
}
