/**
 * One group of `npm run screenshots` taken alone (`npx tsx web/screenshots-<group>.ts`): a local
 * stack of its own, signed in as the first seeded team, the group's shots at 1280 and 375 px into
 * .screenshots/.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startLocalStack } from '../local/stack.ts';
import { launchChromium } from './chromium.ts';

export type Shots = (page: Page, apiUrl: string, file: (name: string) => string) => Promise<void>;

export async function takeAlone(group: string, shots: Shots): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
  const outDir = join(import.meta.dirname, '..', '.screenshots');
  const stateDir = await mkdtemp(join(tmpdir(), `pipeline-synthesis-screenshots-${group}-`));
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
      await shots(page, stack.apiUrl, (name) => join(outDir, `${name}-${width}.png`));
      await context.close();
    }
  } finally {
    await browser.close();
    await stack.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}
