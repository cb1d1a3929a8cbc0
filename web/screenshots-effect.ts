/**
 * The effect of a guarded rollout for `npm run screenshots`: a rollout guarding the mean duration
 * and a relevance score, judged three times, its Effect card (step, progress, next move, a tile per
 * metric with its chart) and one tile alone. `npx tsx web/screenshots-effect.ts` takes only these,
 * at both widths, on a local stack of its own.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { startLocalStack } from '../local/stack.ts';
import { type Call, guardedRollout } from '../test/support/guarded-rollout.ts';
import { launchChromium } from './chromium.ts';

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
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
  const outDir = join(import.meta.dirname, '..', '.screenshots');
  const stateDir = await mkdtemp(join(tmpdir(), 'pipeline-synthesis-screenshots-effect-'));
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
      await effectShots(page, stack.apiUrl, (name) => join(outDir, `${name}-${width}.png`));
      await context.close();
    }
  } finally {
    await browser.close();
    await stack.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}
