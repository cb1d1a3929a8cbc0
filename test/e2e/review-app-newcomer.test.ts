import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { DEMO_SLOTS } from '../../local/seed.ts';
import { useReviewApp } from '../support/review-app-stack.ts';
import { waitFor } from '../support/wait.ts';

/**
 * What a person decides on, shown in order and in words (heuristic-v1, Chromium, the local stack):
 * a pipeline during a rollout, a run page's order (evidence, proposal, then the decision), a run
 * with nothing to change, the effect chart's axis, people by name, 375 px, and accessibility.
 */
const app = useReviewApp('review-app-newcomer-');

const appUrl = (rest = '') => `${app.stack.apiUrl}/app/${rest}`;

async function signedIn(width = 1440): Promise<{ page: Page; context: BrowserContext }> {
  const context = await app.browser.newContext({ viewport: { width, height: 900 } });
  app.contexts.push(context);
  const page = await context.newPage();
  await page.goto(appUrl());
  await page.getByLabel('Email').fill(app.team.email);
  await page.getByLabel('Password').fill(app.team.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Pipelines', level: 1 }).waitFor();
  return { page, context };
}

async function apiAs(context: BrowserContext, method: 'GET' | 'POST', route: string, body?: unknown) {
  const response = await context.request.fetch(`${app.stack.apiUrl}/${route}`, {
    method,
    headers: method === 'GET' ? {} : { 'x-requested-with': 'e2e', 'content-type': 'application/json' },
    ...(body === undefined ? {} : { data: JSON.stringify(body) }),
  });
  return { status: response.status(), body: (await response.json().catch(() => undefined)) as never };
}

/** A pipeline of the demo's slots; with `signals`, retrieval timeouts reported against it. */
async function pipeline(context: BrowserContext, name: string, signals: boolean): Promise<string> {
  const created = await apiAs(context, 'POST', 'pipelines', { name, slots: DEMO_SLOTS });
  const pipelineId = (created.body as { id: string }).id;
  if (signals) {
    const timeouts = Array.from({ length: 4 }, (_, i) => ({
      kind: 'timeout',
      severity: 'critical',
      message: `Retrieval timed out after 1500 ms (query ${i})`,
      slotId: 'retrieve',
    }));
    await apiAs(context, 'POST', `pipelines/${pipelineId}/signals`, { signals: timeouts });
  }
  return pipelineId;
}

async function generatedRun(context: BrowserContext, pipelineId: string): Promise<string> {
  const started = await apiAs(context, 'POST', `pipelines/${pipelineId}/synthesize`, {
    synthesisHandler: 'heuristic-v1',
  });
  const runId = (started.body as { id: string }).id;
  await waitFor(
    async () =>
      ((await apiAs(context, 'GET', `synthesis-runs/${runId}`)).body as { status: string }).status ===
      'generated',
    `run ${runId} to be generated`,
    30_000,
    100,
  );
  return runId;
}

const scrollWidth = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth');

/** Form controls without a label tied to them (for=, wrapping label, aria-label or aria-labelledby). */
const unlabelled = (page: Page) =>
  page.evaluate<string[]>(`[...document.querySelectorAll('input, select, textarea')]
    .filter((element) => element.type !== 'hidden' && element.labels?.length === 0)
    .filter((element) => !element.getAttribute('aria-label') && !element.getAttribute('aria-labelledby'))
    .map((element) => element.outerHTML.slice(0, 80))`);

/** Elements of these selectors whose text contrast with their background is below 4.5:1 (WCAG AA). */
const lowContrast = (page: Page, selectors: string[]) =>
  page.evaluate<string[]>(
    `(() => {const LIST = ${JSON.stringify(selectors)};
    const rgb = (text) => (text.match(/[\\d.]+/g) ?? []).map(Number);
    const luminance = ([r = 0, g = 0, b = 0]) => {
      const [R, G, B] = [r, g, b].map((v) => {
        const c = v / 255;
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * (R ?? 0) + 0.7152 * (G ?? 0) + 0.0722 * (B ?? 0);
    };
    const background = (element) => {
      for (let at = element; at; at = at.parentElement) {
        const colour = rgb(getComputedStyle(at).backgroundColor);
        if (colour.length === 3 || (colour[3] ?? 0) > 0.5) return colour.slice(0, 3);
      }
      return [255, 255, 255];
    };
    const failing = [];
    for (const selector of LIST) {
      for (const element of [...document.querySelectorAll(selector)].slice(0, 20)) {
        if (!element.textContent?.trim()) continue;
        const [a, b] = [luminance(rgb(getComputedStyle(element).color)), luminance(background(element))];
        const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
        if (ratio < 4.5)
          failing.push(\`\${selector} "\${element.textContent.trim().slice(0, 30)}" \${ratio.toFixed(2)}\`);
      }
    }
    return failing;
})()`,
  );

/** Whether every text of an SVG lies within its drawing (no label clipped). */
const labelsInside = (chart: ReturnType<Page['locator']>) =>
  chart.evaluate((svg) => {
    const bounds = svg.getBoundingClientRect();
    return [...svg.querySelectorAll('text')].every((text) => {
      const box = text.getBoundingClientRect();
      return box.left >= bounds.left - 1 && box.right <= bounds.right + 1;
    });
  });

describe('the review application, as a newcomer reads it', { timeout: 120_000 }, () => {
  it('shows a running rollout on the pipeline page and in the list, with "needs review"', async () => {
    const { page, context } = await signedIn();
    const pipelineId = await pipeline(context, `rollout ${Date.now()}`, true);
    const runId = await generatedRun(context, pipelineId);
    expect(
      (await apiAs(context, 'POST', `synthesis-runs/${runId}/approve`, { rollout: { percent: 50 } })).status,
    ).toBe(200);
    await generatedRun(context, pipelineId);

    await page.goto(appUrl(`pipelines/${pipelineId}`));
    const rollout = page.getByRole('region', { name: /Rollout in progress/ });
    await rollout.waitFor();
    expect(await rollout.innerText()).toMatch(/version 2 on 50 % of traffic/);
    expect(await rollout.innerText()).toMatch(/Base.*version 1, 50 %/);
    expect(await rollout.innerText()).toContain(app.team.email);
    expect(
      await page
        .getByRole('heading', { name: /Active configuration: version 1 \(the base of the rollout/ })
        .count(),
    ).toBe(1);

    await page.goto(appUrl());
    const card = page
      .getByRole('listitem')
      .filter({ hasText: /^rollout / })
      .first();
    await card.getByText('Rollout: version 2 on 50 %').waitFor();
    expect(await card.innerText()).toContain('Active: version 1');
    expect(await card.getByRole('link', { name: 'Needs review' }).count()).toBe(1);
  });

  it('orders a run page as evidence, proposal, then the decision, with reject beside its reason', async () => {
    const { page, context } = await signedIn();
    const pipelineId = await pipeline(context, `order ${Date.now()}`, true);
    const runId = await generatedRun(context, pipelineId);
    await page.goto(appUrl(`runs/${runId}`));
    await page.getByRole('heading', { name: 'Decide' }).waitFor();
    await page.getByRole('heading', { name: 'Changes' }).waitFor();
    const order = await page.evaluate<string[]>(
      "[...document.querySelectorAll('h2')].map((heading) => heading.textContent ?? '')",
    );
    const at = (name: string) => order.findIndex((text) => text.startsWith(name));
    expect(at('Diagnosis')).toBeGreaterThanOrEqual(0);
    expect(at('Diagnosis')).toBeLessThan(at('Changes'));
    expect(at('Changes')).toBeLessThan(at('Evaluation'));
    expect(at('Evaluation')).toBeLessThan(at('Decide'));
    expect(await page.getByText('Loading the proposal').count()).toBe(0);
    // The reason field comes after Approve and right before Reject.
    const [approve, reason, reject] = await Promise.all(
      [
        page.getByRole('button', { name: 'Approve', exact: true }),
        page.getByLabel('Reason for rejecting'),
        page.getByRole('button', { name: 'Reject' }),
      ].map(async (locator) => (await locator.boundingBox())?.y ?? -1),
    );
    expect(approve).toBeLessThan(reason as number);
    expect(reason).toBeLessThan(reject as number);
    // A checkbox sits on its label's line.
    const change = page.getByRole('checkbox', { name: /^Change / }).first();
    const box = await change.boundingBox();
    const label = await page.locator('label.check').first().boundingBox();
    expect(Math.abs((box?.y ?? 0) - (label?.y ?? 100))).toBeLessThan(12);
    expect(await unlabelled(page)).toEqual([]);
    // Focus follows reading order: from the breadcrumbs on, each Tab stop is below or beside the last.
    await page.getByRole('navigation', { name: 'Breadcrumbs' }).getByRole('link').first().focus();
    const stops: number[] = [];
    // Until focus leaves the page's last control (and would start again at the top).
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press('Tab');
      if (await page.evaluate<boolean>('document.activeElement === document.body')) break;
      stops.push(
        await page.evaluate<number>(
          '(document.activeElement?.getBoundingClientRect().top ?? 0) + window.scrollY',
        ),
      );
    }
    expect(stops.length).toBeGreaterThan(5);
    const backwards = stops.filter((top, i) => i > 0 && top < (stops[i - 1] ?? 0) - 8);
    expect(backwards, stops.join(', ')).toEqual([]);
    // Contrast: body text, muted text, links and the primary button reach 4.5:1 on their background.
    expect(await lowContrast(page, ['p', '.muted', 'a', 'button.primary', 'label'])).toEqual([]);
  });

  it('says a run with nothing to change has nothing to approve, and offers only Reject', async () => {
    const { page, context } = await signedIn();
    const pipelineId = await pipeline(context, `quiet ${Date.now()}`, false);
    const runId = await generatedRun(context, pipelineId);
    await page.goto(appUrl(`runs/${runId}`));
    await page.getByRole('heading', { name: 'Nothing to change' }).waitFor();
    expect(await page.getByRole('button', { name: 'Approve', exact: true }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Reject' }).count()).toBe(1);
    expect(await page.getByText('Loading the proposal').count()).toBe(0);
    expect(await page.getByText(/pipeline-synthesis evaluate/).count()).toBe(0);
  });

  it('draws the effect with a percent axis, unclipped labels and the card width; names the approver', async () => {
    const { page, context } = await signedIn();
    const pipelineId = await pipeline(context, `effect ${Date.now()}`, true);
    const runId = await generatedRun(context, pipelineId);
    await apiAs(context, 'POST', `pipelines/${pipelineId}/executions`, {
      executions: Array.from({ length: 5 }, (_, i) => ({
        status: i < 2 ? 'failed' : 'succeeded',
        durationMs: 900,
      })),
    });
    expect((await apiAs(context, 'POST', `synthesis-runs/${runId}/approve`, {})).status).toBe(200);
    await page.goto(appUrl(`runs/${runId}`));
    const chart = page.getByRole('img', { name: /Failure rate of the base/ });
    await chart.waitFor();
    const texts = await chart.locator('text').allTextContents();
    expect(texts).toEqual(expect.arrayContaining(['0 %', expect.stringMatching(/^\d+(\.\d+)? %$/)]));
    expect(texts.join(' ')).toContain('Executions failed');
    // Every label lies inside the drawing; the drawing fills the card's width (up to its maximum).
    expect(await labelsInside(chart)).toBe(true);
    const [chartBox, cardBox] = await Promise.all([
      chart.boundingBox(),
      page.getByRole('region', { name: 'Effect' }).boundingBox(),
    ]);
    expect((chartBox?.width ?? 0) / (cardBox?.width ?? 1)).toBeGreaterThan(0.9);
    expect(await page.getByText(/Approved:.*version 2 became the active configuration/).count()).toBe(1);
    expect(await page.locator('.facts').first().innerText()).toContain(`by ${app.team.email}`);
    expect(await page.getByText(/pipeline-synthesis evaluate/).count()).toBe(0);
  });

  it("shows the audit log by people's names, dates on one line, filtered by type and pipeline, at 375 px", async () => {
    const { page, context } = await signedIn(375);
    const pipelineId = await pipeline(context, `audited ${Date.now()}`, true);
    const runId = await generatedRun(context, pipelineId);
    await apiAs(context, 'POST', `synthesis-runs/${runId}/approve`, { rollout: { percent: 50 } });
    await page.goto(appUrl(`pipelines/${pipelineId}`));
    await page.getByRole('region', { name: /Rollout in progress/ }).waitFor();
    expect(await scrollWidth(page)).toBe(375);
    await page.goto(appUrl(`runs/${runId}`));
    await page.getByRole('status', { name: 'Rollout status' }).waitFor();
    expect(await scrollWidth(page)).toBe(375);
    const chart = page.getByRole('img', { name: /Failure rate of the base/ });
    await chart.waitFor();
    expect(await labelsInside(chart)).toBe(true);

    // Events reach the log one stream hop after their change.
    await waitFor(
      async () =>
        (
          (await apiAs(context, 'GET', `audit-events?type=synthesis_run.approved&pipelineId=${pipelineId}`))
            .body as { items: unknown[] }
        ).items.length === 1,
      'the approval in the audit log',
      30_000,
      100,
    );
    await page.goto(appUrl('settings/events'));
    await page.getByRole('heading', { name: 'Audit log', exact: true }).waitFor();
    await page.getByLabel('Event type').selectOption('synthesis_run.approved');
    await page.getByLabel('Pipeline', { exact: true }).selectOption(pipelineId);
    const rows = page.locator('section[aria-labelledby="audit-log"] tbody tr');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().innerText()).toContain(app.team.email);
    const time = rows.first().locator('time');
    // One line of text (about 20 px), not three.
    expect((await time.boundingBox())?.height ?? 99).toBeLessThan(30);
    expect(await scrollWidth(page)).toBe(375);
    expect(await unlabelled(page)).toEqual([]);
  });
});
