/**
 * The decision path for `npm run screenshots`: a five-change run evaluated change by change, its
 * approve form with a typo in the share, the confirmation in words, the approved run's shipped and
 * left-out changes, the pipeline during the rollout (progress, diff), promoting on nothing measured,
 * and the pipeline after a roll back.
 */
import type { Page } from 'playwright-core';
import { DEMO_SLOTS } from '../local/seed.ts';
import { FIVE_CHANGE_SIGNALS } from '../test/support/review-app-runs.ts';

type Call = (method: 'GET' | 'POST', route: string, body?: unknown) => Promise<Record<string, unknown>>;

/** A generated run of five changes whose change 3, replayed alone, breaks two cases. */
async function evaluatedRun(call: Call): Promise<{ pipelineId: string; runId: string }> {
  const pipeline = await call('POST', 'pipelines', { name: 'Support answers', slots: DEMO_SLOTS });
  const pipelineId = pipeline.id as string;
  await call('POST', `pipelines/${pipelineId}/signals`, { signals: FIVE_CHANGE_SIGNALS });
  await call('POST', `pipelines/${pipelineId}/executions`, {
    executions: Array.from({ length: 10 }, (_, i) => ({
      id: `ticket-${i}`,
      status: i % 2 === 0 ? 'failed' : 'succeeded',
      durationMs: 900,
      startedAt: new Date(Date.now() - (20 - i) * 60_000).toISOString(),
      input: { question: `Where is order ${i}?` },
    })),
  });
  const { id } = await call('POST', `pipelines/${pipelineId}/synthesize`, {
    synthesisHandler: 'heuristic-v1',
  });
  for (let tries = 0; (await call('GET', `synthesis-runs/${id}`)).status !== 'generated'; tries++) {
    if (tries > 100) throw new Error(`run ${id} was not generated`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const set = await call('GET', `synthesis-runs/${id}/evaluation-set`);
  const ids = (set.cases as Array<{ executionId: string }>).map((c) => c.executionId);
  const broken = new Set(ids.slice(1, 3));
  const arms = ['candidate', '1', '2', '3', '4', '5'].map((arm) =>
    arm === 'candidate' ? arm : `change:${arm}`,
  );
  const results = ids.flatMap((executionId, index) => [
    { executionId, arm: 'base', passed: index !== 0 },
    ...arms.map((arm) => ({
      executionId,
      arm,
      passed: !(broken.has(executionId) && (arm === 'candidate' || arm === 'change:3')),
    })),
  ]);
  for (let at = 0; at < results.length; at += 100)
    await call('POST', `synthesis-runs/${id}/evaluations`, { results: results.slice(at, at + 100) });
  return { pipelineId, runId: id as string };
}

/** `file` names where each screenshot goes (parts of pages and dialogs, not whole pages). */
export async function decisionShots(page: Page, apiUrl: string, file: (name: string) => string) {
  const call: Call = async (method, route, body) => {
    const response = await page.request.fetch(`${apiUrl}/${route}`, {
      method,
      headers: { 'x-requested-with': 'screenshots', 'content-type': 'application/json' },
      ...(body === undefined ? {} : { data: JSON.stringify(body) }),
    });
    return (await response.json()) as Record<string, unknown>;
  };
  const { pipelineId, runId } = await evaluatedRun(call);
  await page.goto(`${apiUrl}/app/runs/${runId}`);
  await page.getByRole('checkbox', { name: /^Change 1 / }).waitFor();
  await page.getByRole('checkbox', { name: /Roll out to a share of traffic first/ }).check();
  await page.getByLabel(/Share of traffic for the candidate/).fill('abc');
  await page.locator('.recommendation').waitFor();
  await page.getByRole('list', { name: 'Regressed cases' }).waitFor();
  await page.getByText(/Regressions are judged on/).waitFor();
  await page
    .getByRole('region', { name: 'Evaluation' })
    .screenshot({ path: file('12a-evaluation-per-change') });
  await page.getByRole('region', { name: 'Decide' }).screenshot({ path: file('12-approve-form-typo') });
  await page.getByLabel(/Share of traffic for the candidate/).fill('10');
  await page.getByRole('button', { name: 'Approve', exact: true }).click();
  await page.getByRole('dialog').waitFor();
  await page.screenshot({ path: file('13-approve-confirm') });
  await page.getByRole('dialog').getByRole('button', { name: 'Approve', exact: true }).click();
  await page.getByRole('region', { name: 'What was approved' }).waitFor();
  await page
    .getByText(/executions a promotion needs/)
    .first()
    .waitFor();
  await page
    .getByRole('region', { name: 'What was approved' })
    .screenshot({ path: file('14-approved-shipped') });
  await page.getByRole('region', { name: 'Rollout' }).screenshot({ path: file('14b-rollout-panel') });
  await page.goto(`${apiUrl}/app/pipelines/${pipelineId}`);
  await page
    .getByText(/executions a promotion needs/)
    .first()
    .waitFor();
  await page.getByText(/What the candidate \(version/).click();
  await page
    .getByRole('region', { name: /Rollout in progress/ })
    .screenshot({ path: file('15-pipeline-rollout-progress') });
  await page.getByRole('button', { name: 'Promote to all traffic…' }).click();
  await page.getByRole('dialog').waitFor();
  await page.screenshot({ path: file('16-promote-unmeasured') });
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('button', { name: 'Roll back…' }).click();
  await page
    .getByRole('dialog')
    .getByLabel(/Reason/)
    .fill('Change 4 needs a second look first.');
  await page.getByRole('dialog').getByRole('button', { name: 'Roll back' }).click();
  await page.getByRole('region', { name: /Last rollout/ }).waitFor();
  await page.getByText(/· rollout rolled back/).waitFor();
  await page.screenshot({ path: file('17-pipeline-after-roll-back') });
}
