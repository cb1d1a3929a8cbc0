import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../lambdas/wiring/aws.ts';
import { makeAuthRepository } from '../../lambdas/wiring/repositories.ts';
import type { SeedTeam } from '../../local/seed.ts';
import { DEMO_SLOTS } from '../../local/seed.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { launchChromium } from '../../web/chromium.ts';
import { autoReply } from '../support/anthropic-fake.ts';
import { deferred, waitFor } from '../support/wait.ts';

/**
 * The review application (web/) in a real headless Chromium against the real local stack: every
 * step goes through the page as a person would, by the accessible names the issue lists; the API
 * is only used to check what the page did, and to set up the 409s.
 */

/** A model endpoint that holds each answer until the test lets it go, so "generating" can be seen. */
interface GatedModel {
  url: string;
  held: number;
  release(): void;
  close(): Promise<void>;
}

async function startGatedModel(): Promise<GatedModel> {
  let gate = deferred();
  const state = { held: 0 };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      state.held += 1;
      await gate.promise;
      const reply = autoReply(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      response.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_e2e' });
      response.end(JSON.stringify(reply.kind === 'message' ? reply.body : {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get held() {
      return state.held;
    },
    release() {
      gate.resolve();
      gate = deferred();
    },
    close: () =>
      new Promise<void>((resolve) => {
        gate.resolve();
        server.close(() => resolve());
      }),
  };
}

let stack: LocalStack;
let browser: Browser;
let model: GatedModel;
let stateDir: string;
let team: SeedTeam;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
  model = await startGatedModel();
  stateDir = await mkdtemp(path.join(tmpdir(), 'review-app-e2e-'));
  // The worker takes its model settings from the developer's environment, as with `npm start`.
  Object.assign(process.env, {
    ANTHROPIC_API_KEY: ['sk', 'ant', 'e2e-fake'].join('-'),
    ANTHROPIC_BASE_URL: model.url,
  });
  stack = await startLocalStack({ port: 0, stateDir, quiet: true, log: () => {} });
  browser = await launchChromium();
  const [first] = stack.teams;
  if (!first) throw new Error('The local stack seeded no team.');
  team = first;
}, 120_000);

afterAll(async () => {
  delete process.env.ANTHROPIC_API_KEY;
  delete process.env.ANTHROPIC_BASE_URL;
  await browser?.close();
  await stack?.stop();
  await model?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

const appUrl = (rest = '') => `${stack.apiUrl}/app/${rest}`;
const pipelineName = () => `${team.name} answer bot`;

interface Tab {
  page: Page;
  context: BrowserContext;
  /** Console errors that a broken page would log: CSP refusals and uncaught exceptions. */
  problems: string[];
}

async function openTab(width = 1440, context?: BrowserContext): Promise<Tab> {
  const owner = context ?? (await browser.newContext({ viewport: { width, height: 900 } }));
  if (!context) contexts.push(owner);
  const page = await owner.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused to/i.test(message.text()))
      problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  return { page, context: owner, problems };
}

async function signIn(tab: Tab): Promise<void> {
  const { page } = tab;
  await page.goto(appUrl());
  await page.getByLabel('Email').fill(team.email);
  await page.getByLabel('Password').fill(team.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Pipelines', level: 1 }).waitFor();
}

const runStatus = (page: Page) => page.getByRole('status', { name: 'Run status' });

/** Ticks every change, the doubtful ones (which start unticked) included: the whole proposal. */
async function tickEveryChange(page: Page): Promise<void> {
  const boxes = page.getByRole('checkbox', { name: /^Change / });
  await boxes.first().waitFor();
  for (const box of await boxes.all()) await box.check();
}

/** Presses a decision's button, then its confirmation's (a decision always asks first). */
async function decide(page: Page, action: 'Approve' | 'Reject'): Promise<void> {
  await page.getByRole('button', { name: action, exact: true }).click();
  await page.getByRole('dialog').getByRole('button', { name: action, exact: true }).click();
}

async function waitForStatus(page: Page, status: string): Promise<void> {
  await runStatus(page)
    .filter({ hasText: new RegExp(`^${status}$`) })
    .waitFor({ timeout: 30_000 });
}

async function openPipeline(page: Page): Promise<void> {
  await page.getByRole('link', { name: pipelineName() }).click();
  await page.getByRole('heading', { name: pipelineName(), level: 1 }).waitFor();
}

/** On the pipeline page: start a run with `handler` and land on the run's page. */
async function synthesize(page: Page, handler: 'heuristic-v1' | 'claude-v1'): Promise<string> {
  await page.getByLabel('Handler').selectOption(handler);
  await page.getByRole('button', { name: 'Synthesize' }).click();
  await page.waitForURL(/\/app\/runs\/[^/]+$/);
  return decodeURIComponent(new URL(page.url()).pathname.split('/').at(-1) ?? '');
}

/** The API as this browser's session calls it (cookies of the context, CSRF header on writes). */
async function apiAs(context: BrowserContext, method: 'GET' | 'POST', route: string, body?: unknown) {
  const response = await context.request.fetch(`${stack.apiUrl}/${route}`, {
    method,
    headers: method === 'GET' ? {} : { 'x-requested-with': 'e2e', 'content-type': 'application/json' },
    ...(body === undefined ? {} : { data: JSON.stringify(body) }),
  });
  const answer = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
  return { status: response.status(), body: answer };
}

async function generatedRun(context: BrowserContext): Promise<string> {
  const started = await apiAs(context, 'POST', `pipelines/${team.pipelineIds[0]}/synthesize`, {
    synthesisHandler: 'heuristic-v1',
  });
  expect(started.status).toBe(202);
  const runId = (started.body as { id: string }).id;
  await waitFor(
    async () => (await apiAs(context, 'GET', `synthesis-runs/${runId}`)).body?.status === 'generated',
    `run ${runId} to be generated`,
    30_000,
    100,
  );
  return runId;
}

const TRUNCATIONS = Array.from({ length: 4 }, () => ({
  kind: 'truncation',
  severity: 'warning',
  message: 'Answer truncated: stop_reason max_tokens',
  slotId: 'answer-model',
}));

/** A new pipeline of the demo's slots with retrieval timeouts and truncated answers reported. */
async function pipelineWithSignals(context: BrowserContext): Promise<string> {
  const created = await apiAs(context, 'POST', 'pipelines', {
    name: `rollout ${Date.now()}`,
    slots: DEMO_SLOTS,
  });
  const pipelineId = (created.body as { id: string }).id;
  const timeouts = Array.from({ length: 4 }, (_, i) => ({
    kind: 'timeout',
    severity: 'critical',
    message: `Retrieval timed out after 1500 ms (query ${i})`,
    slotId: 'retrieve',
  }));
  await apiAs(context, 'POST', `pipelines/${pipelineId}/signals`, { signals: [...timeouts, ...TRUNCATIONS] });
  return pipelineId;
}

async function generatedRunOn(context: BrowserContext, pipelineId: string): Promise<string> {
  const started = await apiAs(context, 'POST', `pipelines/${pipelineId}/synthesize`, {
    synthesisHandler: 'heuristic-v1',
  });
  const runId = (started.body as { id: string }).id;
  await waitFor(
    async () => (await apiAs(context, 'GET', `synthesis-runs/${runId}`)).body?.status === 'generated',
    `run ${runId} to be generated`,
    30_000,
    100,
  );
  return runId;
}

afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close().catch(() => undefined);
});

describe('the review application in Chromium', { timeout: 90_000 }, () => {
  it('is served at /app/ with a strict CSP, no framing, no referrer and nosniff, and runs under them', async () => {
    const tab = await openTab();
    const responses: Array<{ url: string; headers: Record<string, string> }> = [];
    tab.page.on('response', (response) => {
      if (response.url().startsWith(appUrl()))
        responses.push({ url: response.url(), headers: response.headers() });
    });

    const shell = await tab.page.goto(`${stack.apiUrl}/app`);
    await tab.page.getByRole('button', { name: 'Sign in' }).waitFor();
    const headers = shell?.headers() ?? {};
    const csp = headers['content-security-policy'] ?? '';
    const scriptSources = /script-src ([^;]*)/.exec(csp)?.[1] ?? '';

    expect(tab.page.url()).toBe(appUrl());
    expect(scriptSources.trim()).toBe("'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(headers['referrer-policy']).toBe('no-referrer');
    expect(headers['x-content-type-options']).toBe('nosniff');
    const assets = responses.filter((response) => response.url.includes('/app/assets/'));
    expect(assets.map((asset) => asset.url.split('.').at(-1)).sort()).toEqual(['css', 'js']);
    for (const asset of assets) expect(asset.headers['x-content-type-options']).toBe('nosniff');
    expect(tab.problems).toEqual([]);

    // A deep link loads the same application; a missing asset is a 404, not the page.
    await tab.page.goto(appUrl('settings/tokens'));
    await tab.page.getByRole('button', { name: 'Sign in' }).waitFor();
    const missing = await tab.context.request.get(appUrl('assets/main-NOSUCHFILE.js'));
    expect(missing.status()).toBe(404);
  });

  it('signs in with a password, synthesizes, reads the proposal, approves it and shows the new active configuration', async () => {
    const tab = await openTab();
    const { page } = tab;
    await signIn(tab);
    await openPipeline(page);
    const activeBefore = await page
      .getByRole('heading', { name: /^Active configuration: version \d+$/ })
      .textContent();

    await synthesize(page, 'heuristic-v1');
    await waitForStatus(page, 'generated');
    await page.getByRole('heading', { name: 'Changes' }).waitFor();

    // The findings show the signals they cite, not only their ids.
    const findings = page.getByRole('list', { name: 'Findings' });
    expect(await findings.textContent()).toContain('Retrieval timed out after 1500 ms');
    // The slot's settings side by side, the changed key marked, with both values.
    const retrieve = page.getByRole('table', { name: /Settings of Retrieve documents/ });
    const timeout = retrieve.getByRole('row', { name: /timeoutMs/ });
    expect(await timeout.getAttribute('class')).toBe('changed');
    expect(await timeout.getByRole('cell').allTextContents()).toEqual(['1500', '3000']);
    const topK = retrieve.getByRole('row', { name: /topK/ });
    expect(await topK.getAttribute('class')).toBeNull();
    // A key the proposal adds is shown against "(not set)".
    const prompt = page.getByRole('table', { name: /Settings of Answer prompt/ });
    expect(await prompt.getByRole('row', { name: /instructions/ }).textContent()).toContain('(not set)');

    await tickEveryChange(page);
    await decide(page, 'Approve');
    await waitForStatus(page, 'approved');
    const proposedVersion = Number(
      // The run's facts (an approved run also shows its effect's figures in a list of facts).
      /→ proposed version (\d+)/.exec(
        (await page.locator('.facts').filter({ hasText: 'proposed version' }).textContent()) ?? '',
      )?.[1],
    );
    await page
      .getByRole('navigation', { name: 'Breadcrumbs' })
      .getByRole('link', { name: pipelineName() })
      .click();
    const active = page.getByRole('heading', { name: /^Active configuration: version \d+$/ });
    await active.waitFor();

    expect(await active.textContent()).toBe(`Active configuration: version ${proposedVersion}`);
    expect(await active.textContent()).not.toBe(activeBefore);
    const activeRetrieve = page.getByRole('table', { name: 'Settings of Retrieve documents' });
    expect(await activeRetrieve.getByRole('row', { name: /timeoutMs/ }).textContent()).toContain('3000');
    expect(await page.getByRole('list', { name: 'Activations, newest first' }).textContent()).toContain(
      'approval',
    );

    // And back: the history offers the version the approval replaced.
    const previous = proposedVersion - 1;
    await page.getByRole('button', { name: `Roll back to version ${previous}` }).click();
    await page.getByRole('dialog').getByLabel('Reason').fill('Back to the known good configuration.');
    await page.getByRole('button', { name: `Activate version ${previous}` }).click();
    await page.getByRole('heading', { name: `Active configuration: version ${previous}` }).waitFor();
    expect(await page.getByRole('list', { name: 'Activations, newest first' }).textContent()).toContain(
      'Back to the known good configuration.',
    );
    expect(await page.getByRole('banner').textContent()).toContain(`Signed in as ${team.email}`);
    expect(tab.problems).toEqual([]);
  });

  it('shows the run move from generating to generated without a reload, then stops polling', async () => {
    const tab = await openTab();
    const { page } = tab;
    await signIn(tab);
    await openPipeline(page);
    // Page scripts run in the browser: given as text, they need no DOM types here.
    await page.evaluate('window.sameDocument = true');
    const heldBefore = model.held;

    await synthesize(page, 'claude-v1');
    // The worker is waiting for the model: the page shows it generating, by itself.
    await waitFor(() => model.held > heldBefore, 'the worker to call the model', 30_000, 20);
    await waitForStatus(page, 'generating');
    expect(await page.getByText('updating by itself').count()).toBe(1);
    model.release();
    await waitForStatus(page, 'generated');

    expect(await page.evaluate('window.sameDocument')).toBe(true);
    expect(await page.getByText('updating by itself').count()).toBe(0);
    expect(await page.locator('.facts').textContent()).toMatch(/input and [\d,]+ output tokens in 1 request/);
    // Settled: no more requests for the run.
    let polls = 0;
    page.on('request', (request) => {
      if (/\/synthesis-runs\/[^/]+$/.test(new URL(request.url()).pathname)) polls += 1;
    });
    await page.waitForTimeout(1_500);
    expect(polls).toBe(0);
    expect(tab.problems).toEqual([]);
  });

  it('rejects with a reason, which stays with the run', async () => {
    const tab = await openTab();
    const { page } = tab;
    await signIn(tab);
    await openPipeline(page);
    const runId = await synthesize(page, 'heuristic-v1');
    await waitForStatus(page, 'generated');

    await page.getByLabel('Reason').fill('Raising timeouts hides the slow index; fix the index first.');
    await decide(page, 'Reject');
    await waitForStatus(page, 'rejected');

    expect(await page.getByText('Rejected: Raising timeouts hides the slow index').count()).toBe(1);
    const stored = await apiAs(tab.context, 'GET', `synthesis-runs/${runId}`);
    expect(stored.body).toMatchObject({
      status: 'rejected',
      rejectionReason: 'Raising timeouts hides the slow index; fix the index first.',
    });
  });

  it('tells a 409 in words: the base is no longer active, or someone decided first', async () => {
    const first = await openTab();
    await signIn(first);
    const second = await openTab(1440, first.context);
    const [mine, theirs] = [await generatedRun(first.context), await generatedRun(first.context)];
    await first.page.goto(appUrl(`runs/${mine}`));
    await waitForStatus(first.page, 'generated');
    // In another tab the other proposal, made from the same configuration, is approved first.
    await second.page.goto(appUrl(`runs/${theirs}`));
    await waitForStatus(second.page, 'generated');
    await tickEveryChange(second.page);
    await decide(second.page, 'Approve');
    await waitForStatus(second.page, 'approved');

    await tickEveryChange(first.page);
    await decide(first.page, 'Approve');
    const alert = first.page.getByRole('alert').filter({ hasText: 'What now' });
    await alert.waitFor();
    const baseMoved = (await alert.textContent()) ?? '';

    expect(baseMoved).toContain('The pipeline changed since this proposal was made');
    expect(baseMoved).toMatch(/made from version \d+, but version \d+ is active now/);
    expect(baseMoved).toContain('Approve again with “Rebase onto the configuration active now” checked');
    expect(baseMoved).toContain('start a new synthesis');
    expect(baseMoved).not.toMatch(/[{}]|CONFLICT|409/);
    expect(await runStatus(first.page).textContent()).toBe('generated');

    // Now the same proposal is rejected in the other tab, and this one tries to reject it too.
    await second.page.goto(appUrl(`runs/${mine}`));
    await waitForStatus(second.page, 'generated');
    await decide(second.page, 'Reject');
    await waitForStatus(second.page, 'rejected');
    await decide(first.page, 'Reject');
    await first.page.getByRole('alert').filter({ hasText: 'already rejected' }).waitFor();
    const decidedFirst =
      (await first.page.getByRole('alert').filter({ hasText: 'What now' }).textContent()) ?? '';

    expect(decidedFirst).toContain('This proposal was already rejected');
    expect(decidedFirst).toContain('rejected by you');
    expect(decidedFirst).not.toMatch(/[{}]|CONFLICT|409/);
    // Nothing is left to decide: the form no longer offers to send anything.
    expect(await first.page.getByRole('button', { name: 'Approve', exact: true }).isDisabled()).toBe(true);
    expect(await first.page.getByRole('button', { name: 'Reject', exact: true }).isDisabled()).toBe(true);
  });

  it('creates an API token, shows its secret once with a warning, and revokes it after confirmation', async () => {
    const tab = await openTab();
    const { page } = tab;
    await signIn(tab);
    await page.getByRole('link', { name: 'API tokens' }).click();
    await page.getByRole('heading', { name: 'API tokens', level: 1 }).waitFor();

    await page.getByLabel('Token name').fill('nightly evaluation job');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secretField = page.getByLabel('Token “nightly evaluation job”');
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    const row = page.getByRole('row').filter({ hasText: 'nightly evaluation job' });
    await row.waitFor();
    const hint = (await row.locator('code').textContent()) ?? '';

    expect(await page.getByText('it is shown only this once').count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Copy' }).count()).toBe(1);
    expect(hint.length).toBeGreaterThan(4);
    expect(secret.endsWith(hint.slice(-4))).toBe(true);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.content()).not.toContain(secret);
    await page.reload();
    await row.waitFor();
    expect(await page.content()).not.toContain(secret);

    await row.getByRole('button', { name: 'Revoke' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke “nightly evaluation job”?' });
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await row.filter({ hasText: 'revoked' }).waitFor();

    expect(await row.getByRole('button', { name: 'Revoke' }).count()).toBe(0);
    const refused = await fetch(`${stack.apiUrl}/me`, { headers: { authorization: `Bearer ${secret}` } });
    expect(refused.status).toBe(401);
    expect(tab.problems).toEqual([]);
  });

  it('adds a webhook (its secret shown once), lists its deliveries, deletes it, and shows the audit log', async () => {
    const tab = await openTab();
    const { page } = tab;
    await signIn(tab);
    await page.getByRole('link', { name: 'Webhooks and audit' }).click();
    await page.getByRole('heading', { name: 'Webhooks and audit log', level: 1 }).waitFor();

    await page.getByLabel('URL').fill('http://127.0.0.1:9/review-app-hook');
    await page.getByLabel('Description').fill('browser test');
    const creation = page.waitForResponse(
      (response) => response.request().method() === 'POST' && response.url().endsWith('/webhooks'),
    );
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const { id: webhookId } = (await (await creation).json()) as { id: string };
    const secretField = page.getByLabel('Secret of http://127.0.0.1:9/review-app-hook');
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    expect(secret.startsWith('whsec_')).toBe(true);
    const row = page.getByRole('row').filter({ hasText: 'review-app-hook' });
    await row.waitFor();
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.content()).not.toContain(secret);

    await row.getByRole('button', { name: 'Deliveries' }).click();
    await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
    // The audit log names the webhook's creation and who made it.
    await page.getByRole('heading', { name: 'Audit log', exact: true }).waitFor();
    await page.getByRole('cell', { name: 'webhook.created' }).first().waitFor();
    // …and which webhook (the log reads again once the webhook is added): the "What" of an event
    // with no pipeline names what it changed.
    await page
      .getByRole('row')
      .filter({ hasText: 'webhook.created' })
      .getByRole('cell', { name: `webhook ${webhookId.slice(0, 8)}…`, exact: true })
      .waitFor();

    await row.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', {
      name: 'Delete the webhook to http://127.0.0.1:9/review-app-hook?',
    });
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await row.waitFor({ state: 'detached' });
    // The audit log reads again after each change of the webhooks: the deletion is there at once.
    await page
      .getByRole('row')
      .filter({ hasText: 'webhook.deleted' })
      .getByRole('cell', { name: `webhook ${webhookId.slice(0, 8)}…`, exact: true })
      .waitFor();
    expect(tab.problems).toEqual([]);
  });

  it('keeps every secret in HttpOnly cookies, signs out, and the browser is refused afterwards', async () => {
    const tab = await openTab();
    const { page, context } = tab;
    await signIn(tab);
    const cookies = await context.cookies();
    const visible = (await page.evaluate(
      '({ cookie: document.cookie, stored: JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) })',
    )) as { cookie: string; stored: string };

    expect(cookies.length).toBeGreaterThan(0);
    for (const cookie of cookies) {
      expect(cookie.httpOnly, cookie.name).toBe(true);
      expect(visible.stored).not.toContain(cookie.value);
    }
    expect(visible.cookie).toBe('');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();

    expect(await page.getByText('You have signed out.').count()).toBe(1);
    expect((await apiAs(context, 'GET', 'me')).status).toBe(401);
    await page.goto(appUrl(`pipelines/${team.pipelineIds[0]}`));
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.getByRole('link', { name: pipelineName() }).count()).toBe(0);
  });

  it('refreshes the session a minute before the access token expires, without the person noticing', async () => {
    const tab = await openTab();
    const { page, context } = tab;
    // The page's clock only: the server and the cookies keep real time.
    await context.clock.install();
    await signIn(tab);
    // The refresh token is new on every refresh (an access token issued in the same second may not be).
    const refreshCookie = async () =>
      (await context.cookies()).find((cookie) => cookie.name === 'ps_refresh')?.value;
    const before = await refreshCookie();
    const refreshes: number[] = [];
    page.on('response', (response) => {
      if (new URL(response.url()).pathname === '/auth/refresh') refreshes.push(response.status());
    });

    await page.clock.fastForward('13:00');
    expect(refreshes).toEqual([]);
    await page.clock.fastForward('01:30');
    await waitFor(() => refreshes.length > 0, 'the planned refresh', 10_000, 20);
    await waitFor(async () => (await refreshCookie()) !== before, 'the rotated cookie', 5_000, 20);

    expect(refreshes).toEqual([200]);
    expect(before).toBeDefined();
    await page.getByRole('link', { name: 'API tokens' }).click();
    await page.getByRole('heading', { name: 'API tokens', level: 1 }).waitFor();
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(1);
  });

  it('signs in through the emailed link, which opens the application and leaves the address', async () => {
    const tab = await openTab();
    const { page } = tab;
    await page.goto(appUrl());
    await page.getByLabel('Email').fill(team.email);
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await page.getByText(`If an account exists for ${team.email}`).waitFor();
    const outbox = path.join(stateDir, 'outbox');
    const mails = (await readdir(outbox)).filter((name) => name.includes(team.email));
    const mail = await readFile(path.join(outbox, mails.at(-1) ?? 'missing'), 'utf8');
    const link = /https?:\/\/\S+/.exec(mail)?.[0] ?? '';

    expect(link.startsWith(appUrl('auth/magic-link?token='))).toBe(true);
    await page.goto(link);
    const signInButton = page.getByRole('button', { name: 'Sign in' });
    await signInButton.waitFor();
    // The one-time token leaves the address bar (history, bookmarks) before anything else happens.
    expect(page.url()).toBe(appUrl('auth/magic-link'));
    await signInButton.click();
    await page.getByRole('link', { name: pipelineName() }).waitFor();
    expect(tab.problems).toEqual([]);
  });

  it('sets the team retention window as an admin, and deletes a pipeline after its name is typed, showing the receipt', async () => {
    const tab = await openTab();
    const { page, context } = tab;
    await signIn(tab);
    const created = await apiAs(context, 'POST', 'pipelines', {
      name: 'Pipeline to delete',
      slots: [{ id: 'model', name: 'Model', kind: 'model', settings: {} }],
    });
    expect(created.status).toBe(201);
    const pipelineId = (created.body as { id: string }).id;

    await page.getByRole('link', { name: 'Team settings' }).click();
    await page.getByRole('heading', { name: 'Team settings', level: 1 }).waitFor();
    await page.getByLabel('Signals kept (days)').fill('30');
    await page.getByRole('button', { name: 'Save retention' }).click();
    // Lowering a window deletes data: it asks first, saying what goes; cancelled, nothing is saved.
    const lowering = page.getByRole('dialog');
    expect(await lowering.textContent()).toMatch(/Signals older than 30 days \(now \d+\) are no longer read/);
    await lowering.getByRole('button', { name: 'Cancel' }).click();
    expect((await apiAs(context, 'GET', `teams/${team.teamId}/settings`)).body).not.toMatchObject({
      signalRetentionDays: 30,
    });
    await page.getByRole('button', { name: 'Save retention' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Lower retention' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const settings = await apiAs(context, 'GET', `teams/${team.teamId}/settings`);
    expect(settings.body).toMatchObject({ signalRetentionDays: 30, executionRetentionDays: 90 });
    await page.getByLabel('Signals kept (days)').fill('0');
    await page.getByRole('button', { name: 'Save retention' }).click();
    expect((await apiAs(context, 'GET', `teams/${team.teamId}/settings`)).body).toMatchObject({
      signalRetentionDays: 30,
    });

    await page.goto(appUrl(`pipelines/${pipelineId}`));
    await page.getByRole('heading', { name: 'Pipeline to delete', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Delete pipeline…' }).click();
    await page.getByLabel("Type the pipeline's name").fill('Pipeline to');
    await page.getByRole('button', { name: 'Delete for good' }).click();
    // A name that does not match deletes nothing.
    expect((await apiAs(context, 'GET', `pipelines/${pipelineId}`)).status).toBe(200);
    await page.getByLabel("Type the pipeline's name").fill('Pipeline to delete');
    await page.getByRole('button', { name: 'Delete for good' }).click();
    await page.getByRole('heading', { name: 'Deletion receipt' }).waitFor();
    expect((await apiAs(context, 'GET', `pipelines/${pipelineId}`)).status).toBe(404);
    await page
      .getByRole('status', { name: 'Deletion status' })
      .filter({ hasText: /^completed$/ })
      .waitFor({ timeout: 30_000 });
    expect(await page.locator('.receipt-counts').textContent()).toMatch(/configurations\s*1/);
    expect(tab.problems).toEqual([]);
  });

  it('lists a team with many pipelines a page at a time, each pipeline a link by its name', async () => {
    const other = stack.teams[1];
    if (!other) throw new Error('The local stack seeded one team only.');
    const tab = await openTab();
    const { page } = tab;
    await page.goto(appUrl());
    await page.getByLabel('Email').fill(other.email);
    await page.getByLabel('Password').fill(other.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: `${other.name} answer bot` }).waitFor();
    for (let index = 1; index <= 20; index++) {
      const created = await apiAs(tab.context, 'POST', 'pipelines', {
        name: `Paged pipeline ${index}`,
        slots: [{ id: 'model', name: 'Model', kind: 'model', settings: { temperature: 0.5 } }],
      });
      expect(created.status).toBe(201);
    }
    await page.reload();
    const links = page.getByRole('list', { name: 'Pipelines' }).getByRole('link');
    await page.getByRole('link', { name: 'Paged pipeline 20' }).waitFor();

    expect(await links.count()).toBe(20);
    expect(await page.getByRole('link', { name: `${other.name} answer bot` }).count()).toBe(0);
    await page.getByRole('button', { name: 'Load more pipelines' }).click();
    await page.getByRole('link', { name: `${other.name} answer bot` }).waitFor();
    expect(await links.count()).toBe(21);
    expect(await page.getByRole('button', { name: 'Load more pipelines' }).count()).toBe(0);
  });

  it('approves one change as a rollout at 375 px: rollout panel with arms, effect chart, roll back', async () => {
    const tab = await openTab(375);
    const { page } = tab;
    await signIn(tab);
    const pipelineId = await pipelineWithSignals(tab.context);
    const runId = await generatedRunOn(tab.context, pipelineId);
    await page.goto(appUrl(`runs/${runId}`));
    const changes = page.getByRole('checkbox', { name: /^Change / });
    await changes.first().waitFor();
    const proposed = await changes.count();
    expect(proposed).toBeGreaterThan(1);

    await changes.nth(1).uncheck();
    await page.getByRole('checkbox', { name: /Roll out to a share of traffic/ }).check();
    await page.getByLabel(/Share of traffic for the candidate/).fill('20');
    await decide(page, 'Approve');

    await page
      .getByRole('status', { name: 'Rollout status' })
      .filter({ hasText: /^active$/ })
      .waitFor();
    await expect.poll(() => page.getByRole('row', { name: /Candidate/ }).innerText()).toContain('20 %');
    await page
      .getByRole('status', { name: 'Effect verdict' })
      .filter({ hasText: 'Not enough data yet.' })
      .waitFor();
    expect(
      await page.getByRole('img', { name: /Failure rate of the base .*, of the candidate/ }).isVisible(),
    ).toBe(true);
    // One name for each arm, in the rollout panel and in the effect panel alike.
    expect(await page.getByRole('row', { name: /^Base\b/ }).count()).toBeGreaterThan(0);
    expect(await page.locator('.effect dt').allInnerTexts()).toEqual(
      expect.arrayContaining(['Base', 'Candidate']),
    );
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(375);
    const run = (await apiAs(tab.context, 'GET', `synthesis-runs/${runId}`)).body as {
      approvedChangeIds: string[];
    };
    expect(run.approvedChangeIds).toHaveLength(proposed - 1);

    // Irreversible: it asks first, and the panel shows where the traffic went once it ended.
    await page.getByRole('button', { name: 'Roll back…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Roll back' }).click();
    await page
      .getByRole('status', { name: 'Rollout status' })
      .filter({ hasText: /^rolled back$/ })
      .waitFor();
    await expect
      .poll(() => page.getByRole('row', { name: /Candidate/ }).innerText())
      .toContain('0 % (was 20 %)');
    await expect.poll(() => page.getByRole('row', { name: /^Base\b/ }).innerText()).toContain('100 %');
    expect(tab.problems).toEqual([]);
  });

  it('tells a rebase conflict in words: which setting moved, to what, and what the run would set', async () => {
    const tab = await openTab();
    const { page } = tab;
    await signIn(tab);
    const pipelineId = await pipelineWithSignals(tab.context);
    const stale = await generatedRunOn(tab.context, pipelineId);
    // Meanwhile maxTokens goes 256 → 512 → 1024 through two other approvals.
    for (let i = 0; i < 2; i++) {
      const runId = await generatedRunOn(tab.context, pipelineId);
      const run = (await apiAs(tab.context, 'GET', `synthesis-runs/${runId}`)).body as {
        changes: Array<{ id: string; slotId: string }>;
      };
      const change = run.changes.find((candidate) => candidate.slotId === 'answer-model')?.id;
      expect(
        (await apiAs(tab.context, 'POST', `synthesis-runs/${runId}/approve`, { changeIds: [change] })).status,
      ).toBe(200);
      await apiAs(tab.context, 'POST', `pipelines/${pipelineId}/signals`, { signals: TRUNCATIONS });
    }
    await page.goto(appUrl(`runs/${stale}`));
    const changes = page.getByRole('checkbox', { name: /^Change / });
    await changes.first().waitFor();
    // Keep only the change on answer-model (its maxTokens moved meanwhile).
    for (const box of await page.getByRole('checkbox', { name: /^Change \d+ \((?!answer-model\))/ }).all()) {
      await box.uncheck();
    }
    await page.getByRole('checkbox', { name: /Rebase onto/ }).check();
    await decide(page, 'Approve');

    const conflicts = page.getByRole('alert', { name: 'Rebase conflicts' });
    await conflicts.waitFor();
    expect(await conflicts.innerText()).toContain(
      'maxTokens was 256 when this run was made, is 1024 now, and this run would set it to 512',
    );
    expect((await apiAs(tab.context, 'GET', `synthesis-runs/${stale}`)).body?.status).toBe('generated');
  });

  it('fits a 375 px phone: no page scrolls sideways', async () => {
    const tab = await openTab(375);
    const { page } = tab;
    await signIn(tab);
    const runId = await generatedRun(tab.context);
    const widths: Record<string, number> = {};
    const measure = async (name: string) => {
      widths[name] = (await page.evaluate('document.documentElement.scrollWidth')) as number;
    };

    await measure('pipelines');
    await openPipeline(page);
    await page.getByRole('table').filter({ hasText: 'Status' }).first().waitFor();
    await measure('pipeline');
    await page.goto(appUrl(`runs/${runId}`));
    await page.getByRole('heading', { name: 'Changes' }).waitFor();
    await measure('run');
    await page.getByRole('link', { name: 'API tokens' }).click();
    await page.getByLabel('Token name').fill('phone token');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByRole('row').filter({ hasText: 'phone token' }).waitFor();
    await measure('tokens');

    expect(widths).toEqual({ pipelines: 375, pipeline: 375, run: 375, tokens: 375 });
    expect(tab.problems).toEqual([]);
  });

  // Last: it gives the first seeded user a second team.
  it('switches team for a user in two teams, and acts with the role held there', async () => {
    const other = stack.teams[1];
    if (!other) throw new Error('The local stack seeded one team only.');
    const tab = await openTab();
    const { page } = tab;
    await signIn(tab);
    const me = (await apiAs(tab.context, 'GET', 'me')).body as { user: { id: string } };
    // No endpoint adds a member: written through the store, as an operator's script would.
    const db = createDocumentClient(
      new DynamoDBClient({
        endpoint: stack.dynamodbEndpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
    );
    await makeAuthRepository(db, 'local-Auth', 'local-Events').putMembership({
      userId: me.user.id,
      teamId: other.teamId,
      role: 'viewer',
      createdAt: new Date().toISOString(),
    });
    await page.reload();
    // Known server issue (reported, outside the application): an access token's claims are the
    // session, user and times in whole seconds, so a switch in the same second as the sign-in gets
    // a byte-identical token, which the authorizer's 30 s cache still maps to the old team.
    await page.waitForTimeout(1_100);

    await page.getByLabel('Team').selectOption({ label: `${other.name} (viewer)` });
    await page.getByRole('banner').filter({ hasText: 'viewer of' }).waitFor();
    await page.goto(appUrl(`pipelines/${other.pipelineIds[0]}`));
    await page.getByRole('heading', { name: `${other.name} answer bot`, level: 1 }).waitFor();

    expect(await page.getByRole('button', { name: 'Synthesize' }).isDisabled()).toBe(true);
    expect(await page.getByText('Viewers can read runs but not start them.').count()).toBe(1);
    expect((await apiAs(tab.context, 'GET', 'me')).body).toMatchObject({
      authentication: { teamId: other.teamId, role: 'viewer' },
    });
  });
});
