/**
 * The review application shows what a pipeline recorded (Chromium, the local stack): its
 * executions with their source (OpenTelemetry traces or the API), and one execution's slots,
 * error and the signals citing it, at 1440 and 375 px.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SLOTS, type SeedTeam } from '../../local/seed.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { launchChromium } from '../../web/chromium.ts';
import { protobufBody, recordingTracer, run } from '../support/otlp-requests.ts';

let stack: LocalStack;
let browser: Browser;
let stateDir: string;
let team: SeedTeam;
let pipelineId: string;
let tracedId: string;
const contexts: BrowserContext[] = [];

async function api(method: string, route: string, body: unknown, contentType = 'application/json') {
  const response = await fetch(`${stack.apiUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${team.apiToken}`, 'content-type': contentType },
    body: body instanceof Buffer ? body : JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

beforeAll(async () => {
  process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
  stateDir = await mkdtemp(path.join(tmpdir(), 'review-app-executions-'));
  stack = await startLocalStack({ port: 0, stateDir, quiet: true, log: () => {} });
  browser = await launchChromium();
  const [first] = stack.teams;
  if (!first) throw new Error('The local stack seeded no team.');
  team = first;
  const pipeline = JSON.parse(
    (await api('POST', '/pipelines', { name: 'traced bot', slots: DEMO_SLOTS })).text,
  );
  pipelineId = pipeline.id;
  const tracer = recordingTracer();
  tracedId = run(tracer, pipelineId, pipeline.activeConfigurationId, Date.now() - 120_000, true);
  const sent = await api(
    'POST',
    `/pipelines/${pipelineId}/otlp/v1/traces`,
    protobufBody(tracer.spans()),
    'application/x-protobuf',
  );
  expect(sent.status).toBe(200);
  const recorded = await api('POST', `/pipelines/${pipelineId}/executions`, {
    executions: [{ id: 'api-run', status: 'succeeded', durationMs: 1200 }],
  });
  expect(recorded.status).toBe(201);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close().catch(() => undefined);
});

async function signedIn(width: number): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${stack.apiUrl}/app/`);
  await page.getByLabel('Email').fill(team.email);
  await page.getByLabel('Password').fill(team.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Pipelines', level: 1 }).waitFor();
  return page;
}

describe('the executions of a pipeline in the review application', { timeout: 120_000 }, () => {
  for (const width of [1440, 375]) {
    it(`lists them with their source and shows one's slots and signals at ${width} px`, async () => {
      const page = await signedIn(width);
      await page.goto(`${stack.apiUrl}/app/pipelines/${pipelineId}`);
      const section = page.locator('section', { has: page.getByRole('heading', { name: 'Executions' }) });
      await section.getByRole('link', { name: `Execution ${tracedId}` }).waitFor();
      const rows = await section.locator('tbody tr').allInnerTexts();
      expect(rows).toHaveLength(2);
      expect(rows.find((row) => row.includes('API'))).toMatch(/succeeded/);
      expect(rows.find((row) => row.includes('OpenTelemetry'))).toMatch(
        /failed[\s\S]*answer-model \(failed\)/,
      );
      await page.screenshot({ path: path.join(tmpdir(), `executions-list-${width}.png`), fullPage: true });

      await section.getByRole('link', { name: `Execution ${tracedId}` }).click();
      await page.getByRole('heading', { name: 'Slots' }).waitFor();
      await expect(page.getByRole('heading', { level: 1 }).innerText()).resolves.toMatch(/Execution failed/);
      await expect(page.locator('main').innerText()).resolves.toMatch(/source\s+OpenTelemetry/);
      const slots = await page
        .locator('section', { has: page.getByRole('heading', { name: 'Slots' }) })
        .innerText();
      expect(slots).toMatch(/retrieve[\s\S]*succeeded/);
      expect(slots).toMatch(/answer-model[\s\S]*failed[\s\S]*120 \/ 40/);
      const signals = await page
        .locator('section', { has: page.getByRole('heading', { name: 'Signals citing it' }) })
        .innerText();
      expect(signals).toMatch(/relevance \(warning\)/);
      expect(signals).toMatch(/error \(critical\) · answer-model/);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(width);
      await page.screenshot({ path: path.join(tmpdir(), `execution-${width}.png`), fullPage: true });
    });
  }

  for (const width of [1280, 375]) {
    it(`browses the signals by severity, kind and time, and opens the execution one cites, at ${width} px`, async () => {
      const page = await signedIn(width);
      await page.goto(`${stack.apiUrl}/app/pipelines/${pipelineId}`);
      const section = page.locator('section', {
        has: page.getByRole('heading', { name: 'Signals', exact: true }),
      });
      const table = section.getByRole('table', { name: 'Signals' });
      const rows = () => table.locator('tbody tr').allInnerTexts();
      await table.waitFor();
      const all = await rows();
      expect(all).toHaveLength(2);
      expect(all.find((row) => row.includes('relevance'))).toMatch(/warning/);
      expect(all.find((row) => row.includes('error'))).toMatch(/critical[\s\S]*answer-model/);

      await section.getByLabel('Severity').selectOption('critical');
      await section.getByRole('button', { name: 'Show' }).click();
      await expect.poll(rows).toHaveLength(1);
      expect((await rows())[0]).toMatch(/critical[\s\S]*error/);
      await section.screenshot({ path: path.join(tmpdir(), `signals-${width}.png`) });
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(width);

      // A window that ends before the signals occurred, typed with the keyboard: nothing matches.
      await section.getByRole('button', { name: 'Clear' }).click();
      await expect.poll(rows).toHaveLength(2);
      await section.getByLabel('Kind').fill('relevance');
      await section.getByLabel('To').fill('2026-01-01T00:00');
      await section.getByLabel('To').press('Enter');
      await section.getByText('No signals match these filters.').waitFor();
      await section.getByLabel('To').fill('');
      await section.getByRole('button', { name: 'Show' }).click();
      await expect.poll(rows).toHaveLength(1);

      await table.getByRole('link', { name: `Execution ${tracedId}` }).click();
      await page.getByRole('heading', { name: 'Slots' }).waitFor();
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(width);
    });
  }

  it('says the executions are loading until their first page answers, never an empty section', async () => {
    const page = await signedIn(1440);
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(`**/pipelines/${pipelineId}/executions**`, async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${stack.apiUrl}/app/pipelines/${pipelineId}`);
    const section = page.locator('section', { has: page.getByRole('heading', { name: 'Executions' }) });
    await section.getByText('Loading executions…').waitFor();
    release();
    await section.getByRole('link', { name: `Execution ${tracedId}` }).waitFor();
    await expect(section.getByText('Loading executions…').count()).resolves.toBe(0);
  });
});
