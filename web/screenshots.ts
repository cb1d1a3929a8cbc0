/**
 * `npm run screenshots`: the review application's main pages at 375 px and 1280 px, written to
 * .screenshots/ (git-ignored) so a reviewer can look without starting anything. It starts its own
 * local stack (free port, temporary state) and drives Debian's Chromium through playwright-core.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { DEMO_SLOTS } from '../local/seed.ts';
import { startLocalStack } from '../local/stack.ts';
import { jsonBody, recordingTracer, run as tracedRun } from '../test/support/otlp-requests.ts';
import { launchChromium } from './chromium.ts';
import { decisionShots } from './screenshots-decision.ts';
import { effectShots } from './screenshots-effect.ts';
import { metricsShots } from './screenshots-metrics.ts';

const OUT_DIR = join(import.meta.dirname, '..', '.screenshots');
const WIDTHS = [1280, 375];

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

const stateDir = await mkdtemp(join(tmpdir(), 'pipeline-synthesis-screenshots-'));
const stack = await startLocalStack({ port: 0, stateDir, quiet: true });
const browser = await launchChromium();
try {
  await mkdir(OUT_DIR, { recursive: true });
  // A team for each width: each pass approves a proposal, after which the same evidence rightly
  // proposes nothing more on that pipeline (it belongs to the configuration approved before).
  for (const [index, width] of WIDTHS.entries()) {
    const team = stack.teams[index % stack.teams.length];
    if (!team) throw new Error('The local stack seeded no team.');
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    const fileOf = (name: string) => join(OUT_DIR, `${name}-${width}.png`);
    const shot = async (name: string) => {
      await page.screenshot({ path: fileOf(name), fullPage: true });
      process.stdout.write(`${fileOf(name)}\n`);
    };
    await page.goto(`${stack.apiUrl}/app/`);
    await page.getByLabel('Email').fill(team.email);
    await page.getByLabel('Password').fill(team.password);
    await shot('1-sign-in');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Pipelines' }).waitFor();
    await shot('2-pipelines');
    await page.getByRole('link', { name: `${team.name} answer bot` }).click();
    await page.getByRole('button', { name: 'Synthesize' }).waitFor();
    await shot('3-pipeline');
    await page.getByRole('button', { name: 'Synthesize' }).click();
    await waitForStatus(page, 'generated');
    await page.getByRole('heading', { name: 'Changes' }).waitFor();
    await page.screenshot({ path: join(OUT_DIR, `4a-run-top-${width}.png`) });
    await shot('4-proposal');
    // The whole proposal is long on a phone: its first changed slot (changes and diff) on its own.
    await page
      .locator('.change-slot')
      .first()
      .screenshot({ path: join(OUT_DIR, `4b-proposal-diff-${width}.png`) });
    // A 409 as a reviewer meets it: another proposal from the same base is approved in another tab first.
    const other = await context.newPage();
    await other.goto(page.url().replace(/runs\/[^/]+$/, `pipelines/${team.pipelineIds[0]}`));
    await other.getByRole('button', { name: 'Synthesize' }).click();
    await waitForStatus(other, 'generated');
    await tickEveryChange(other);
    await other.getByRole('button', { name: 'Approve', exact: true }).click();
    await other.getByRole('dialog').getByRole('button', { name: 'Approve', exact: true }).click();
    await waitForStatus(other, 'approved');
    await other.close();
    await tickEveryChange(page);
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Approve', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'What now' }).waitFor();
    await page
      .getByRole('region', { name: 'Decide' })
      .screenshot({ path: join(OUT_DIR, `6-conflict-${width}.png`) });
    await page.getByRole('link', { name: 'API tokens' }).click();
    await page.getByLabel('Token name').fill('nightly evaluation job');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByRole('button', { name: 'Copy' }).waitFor();
    await shot('5-api-tokens');
    await newcomerShots(page, stack.apiUrl, shot);
    await decisionShots(page, stack.apiUrl, fileOf);
    await effectShots(page, stack.apiUrl, fileOf);
    await metricsShots(page, stack.apiUrl, fileOf);
    await context.close();
  }
} finally {
  await browser.close();
  await stack.stop();
  await rm(stateDir, { recursive: true, force: true });
}

/** The whole proposal: the doubtful changes start unticked. */
async function tickEveryChange(page: Page): Promise<void> {
  const boxes = page.getByRole('checkbox', { name: /^Change / });
  await boxes.first().waitFor();
  for (const box of await boxes.all()) await box.check();
}

async function waitForStatus(page: Page, status: string): Promise<void> {
  await page.getByRole('status', { name: 'Run status' }).filter({ hasText: status }).waitFor();
}

/**
 * What a person decides on: a pipeline during a 50 % rollout (its page, the list), the run page
 * with its rollout and effect, a run with nothing to change, and the audit log with names.
 */
async function newcomerShots(page: Page, apiUrl: string, shot: (name: string) => Promise<void>) {
  const call = async (method: 'GET' | 'POST', route: string, body?: unknown) => {
    const response = await page.request.fetch(`${apiUrl}/${route}`, {
      method,
      headers: { 'x-requested-with': 'screenshots', 'content-type': 'application/json' },
      ...(body === undefined ? {} : { data: JSON.stringify(body) }),
    });
    return (await response.json()) as { id: string; status: string; items?: unknown[] };
  };
  const generated = async (pipelineId: string) => {
    const { id } = await call('POST', `pipelines/${pipelineId}/synthesize`, {
      synthesisHandler: 'heuristic-v1',
    });
    for (let tries = 0; (await call('GET', `synthesis-runs/${id}`)).status !== 'generated'; tries++) {
      if (tries > 100) throw new Error(`run ${id} was not generated`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return id;
  };
  const pipeline = await call('POST', 'pipelines', { name: 'Checkout assistant', slots: DEMO_SLOTS });
  const signals = Array.from({ length: 4 }, (_, i) => ({
    kind: 'timeout',
    severity: 'critical',
    message: `Retrieval timed out after 1500 ms (query ${i})`,
    slotId: 'retrieve',
  }));
  await call('POST', `pipelines/${pipeline.id}/signals`, { signals });
  const executionId = await recordExecutions(page, apiUrl, pipeline.id);
  const runId = await generated(pipeline.id);
  await call('POST', `synthesis-runs/${runId}/approve`, { rollout: { percent: 50 } });
  await generated(pipeline.id);
  await page.goto(`${apiUrl}/app/pipelines/${pipeline.id}`);
  await page.getByRole('region', { name: /Rollout in progress/ }).waitFor();
  await shot('7-pipeline-rollout');
  await page.goto(`${apiUrl}/app/pipelines/${pipeline.id}/executions/${executionId}`);
  await page.getByRole('heading', { name: 'Slots' }).waitFor();
  await shot('7b-execution');
  await page.goto(`${apiUrl}/app/`);
  await page
    .getByText(/Rollout: version/)
    .first()
    .waitFor();
  await shot('8-pipelines-state');
  await page.goto(`${apiUrl}/app/runs/${runId}`);
  await page.getByRole('status', { name: 'Effect verdict' }).waitFor();
  await shot('9-run-rollout');
  const quiet = await call('POST', 'pipelines', { name: 'Quiet pipeline', slots: DEMO_SLOTS });
  await page.goto(`${apiUrl}/app/runs/${await generated(quiet.id)}`);
  await page.getByRole('heading', { name: 'Nothing to change' }).waitFor();
  await shot('10-nothing-to-change');
  await page.goto(`${apiUrl}/app/settings/events`);
  await page.getByRole('heading', { name: 'Audit log', exact: true }).waitFor();
  await page.locator('section[aria-labelledby="audit-log"] tbody tr').first().waitFor();
  await shot('11-events-audit');
}

/** Two executions from OpenTelemetry traces (one failed) and one from the API; the failed one's id. */
async function recordExecutions(page: Page, apiUrl: string, pipelineId: string): Promise<string> {
  const tracer = recordingTracer();
  const pipeline = await (await page.request.fetch(`${apiUrl}/pipelines/${pipelineId}`)).json();
  const configurationId = pipeline.activeConfigurationId as string;
  const now = Date.now();
  tracedRun(tracer, pipelineId, configurationId, now - 60_000);
  const failedTrace = tracedRun(tracer, pipelineId, configurationId, now - 30_000, true);
  const traces = await page.request.fetch(`${apiUrl}/pipelines/${pipelineId}/otlp/v1/traces`, {
    method: 'POST',
    headers: { 'x-requested-with': 'screenshots', 'content-type': 'application/json' },
    data: jsonBody(tracer.spans()),
  });
  if (!traces.ok()) throw new Error(`OTLP ingest answered ${traces.status()}: ${await traces.text()}`);
  const execution = {
    id: 'exec-0001',
    configurationId,
    status: 'succeeded',
    durationMs: 2140,
    slotResults: [{ slotId: 'retrieve', status: 'succeeded', durationMs: 1900 }],
  };
  await page.request.fetch(`${apiUrl}/pipelines/${pipelineId}/executions`, {
    method: 'POST',
    headers: { 'x-requested-with': 'screenshots', 'content-type': 'application/json' },
    data: JSON.stringify({ executions: [execution] }),
  });
  const listed = await (await page.request.fetch(`${apiUrl}/pipelines/${pipelineId}/executions`)).json();
  const failed = (listed.items as Array<{ id: string; status: string }>).find(
    (item) => item.status === 'failed',
  );
  if (!failed) throw new Error(`trace ${failedTrace} became no failed execution`);
  return failed.id;
}
