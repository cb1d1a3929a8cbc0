import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  type Call,
  GUARDED_MIN_EXECUTIONS,
  GUARDED_PER_ARM,
  GUARDED_ROUNDS,
  guardedRollout,
} from '../support/guarded-rollout.ts';
import { apiAs, generatedRun, signIn } from '../support/review-app-runs.ts';
import { useReviewApp } from '../support/review-app-stack.ts';

/**
 * The effect's guarded metrics in the review application (Chromium, the local stack): a tile per
 * guarded metric with both arms' figures in their units, a chart of the difference and its interval
 * at each judgement named by a sentence, the rollout's step with its progress and what happens next
 * in the judge's words; and an approval without a rollout says, beside its figures, that before
 * against after is not randomized.
 */
const app = useReviewApp('review-app-effect-');

async function signedIn(width: number): Promise<{ page: Page; context: BrowserContext; call: Call }> {
  const context = await app.browser.newContext({ viewport: { width, height: 900 } });
  app.contexts.push(context);
  const page = await context.newPage();
  await signIn(page, app.stack.apiUrl, app.team);
  const call: Call = async (method, route, body) =>
    (await apiAs(app.stack.apiUrl, context, method, route, body)).body;
  return { page, context, call };
}

const tileOf = (page: Page, name: string | RegExp) =>
  page
    .getByRole('list', { name: 'Guarded metrics' })
    .getByRole('listitem')
    .filter({
      has: page.getByRole('heading', { name }),
    });

const figure = async (tile: ReturnType<typeof tileOf>, term: string) =>
  tile.locator('dt', { hasText: term }).locator('xpath=following-sibling::dd[1]').textContent();

describe('the effect of a guarded rollout in the review application', { timeout: 150_000 }, () => {
  it('shows a tile per guarded metric with its figures, a chart named by its summary, the step and what happens next', async () => {
    const { page, call } = await signedIn(1280);
    const { runId } = await guardedRollout(call, 'Guarded answers');
    const effect = await call('GET', `synthesis-runs/${runId}/effect?history=true`);
    const perArm = GUARDED_ROUNDS * GUARDED_PER_ARM;

    await page.goto(`${app.stack.apiUrl}/app/runs/${runId}`);
    const tiles = page.getByRole('list', { name: 'Guarded metrics' }).getByRole('listitem');
    await tiles.first().waitFor();
    expect(await tiles.count()).toBe(2);

    // The failure rate is one test among three here: its interval is not called a 95 % one.
    const effectCard = page.getByRole('region', { name: 'Effect' });
    expect(
      await effectCard
        .locator('dt', { hasText: 'Difference' })
        .first()
        .locator('xpath=following-sibling::dd[1]')
        .textContent(),
    ).toMatch(
      /in the failure rate \(anytime-valid interval [−+±]?[\d.]+ to \+[\d.]+ percentage points, p = [\d.]+\)$/,
    );
    const duration = tileOf(page, 'Mean duration');
    expect(await figure(duration, 'Candidate')).toMatch(new RegExp(`^\\d+ ms \\(n\\s=\\s${perArm}\\)$`));
    expect(await figure(duration, 'Base')).toMatch(new RegExp(`^\\d+ ms \\(n\\s=\\s${perArm}\\)$`));
    expect(await figure(duration, 'Difference')).toMatch(/^\+\d+ ms \(interval [−+±]\d+ ms to \+\d+ ms\)$/);
    expect(await figure(duration, 'Threshold')).toBe('+100 ms (higher is worse)');
    // The worst case a promotion waits on, as the effect answers it.
    expect(await figure(duration, 'At worst (95 %)')).toBe(
      `+${Math.round(effect.metrics[0].worseBound)} ms (the dotted line)`,
    );
    const durationChart = duration.getByRole('img');
    expect(await durationChart.getAttribute('aria-label')).toMatch(
      new RegExp(
        `^Mean duration, candidate minus base, over \\d+ judgements up to ${perArm} candidate executions: now \\+\\d+ ms, interval [−+±]\\d+ ms to \\+\\d+ ms, at worst \\+\\d+ ms at 95 %; the threshold is \\+100 ms, and its 95 % worst case lies within the threshold\\.$`,
      ),
    );
    // The chart draws the threshold line, labelled, and the interval's band.
    expect(await durationChart.locator('text', { hasText: 'threshold +100 ms' }).count()).toBe(1);
    expect(await durationChart.locator('.interval-band').count()).toBe(1);
    expect(await durationChart.locator('.bound-line').count()).toBe(1);

    const score = tileOf(page, 'Signal “relevance”');
    expect(await figure(score, 'Candidate')).toMatch(
      new RegExp(`^0\\.\\d{3} mean score \\(n\\s=\\s${perArm}\\)$`),
    );
    expect(await figure(score, 'Threshold')).toBe('−0.050 (lower is worse)');
    expect(await score.getByRole('img').getAttribute('aria-label')).toMatch(
      /^Signal “relevance”, candidate minus base, over \d+ judgements? up to \d+ candidate executions: now [−+±]0\.\d{3}, interval −0\.\d{3} to \+0\.\d{3}, at worst −0\.\d{3} at 95 %; the threshold is −0\.050, and its 95 % worst case/,
    );
    const verdict = effect.metrics[1].verdict === 'non_inferior' ? 'Within the threshold' : 'Not shown yet';
    expect(await score.getByRole('status', { name: 'Signal “relevance” verdict' }).textContent()).toContain(
      verdict,
    );

    // The step, its progress, and the judge's next move in words.
    expect(await page.locator('.step-progress').textContent()).toContain(
      'Step 1 of 2 · 50 % of traffic to the candidate',
    );
    const bar = page.getByLabel(
      new RegExp(
        `Candidate executions at this step: ${perArm} of the ${GUARDED_MIN_EXECUTIONS} a step needs`,
      ),
    );
    expect(await bar.getAttribute('value')).toBe(String(perArm));
    expect(await bar.getAttribute('max')).toBe(String(GUARDED_MIN_EXECUTIONS));
    expect(effect.next).toMatch(
      /^moves to step 2 of 2 once the candidate has 400 executions at step 1 \(300 so far\)/,
    );
    expect(await page.getByRole('status', { name: 'What happens next' }).textContent()).toBe(
      `It ${effect.next}.`,
    );
  });

  it('fits a phone, and says beside the figures of an approval without a rollout that it is not randomized', async () => {
    const { page, context, call } = await signedIn(375);
    const { runId } = await guardedRollout(call, 'Guarded answers on a phone');
    await page.goto(`${app.stack.apiUrl}/app/runs/${runId}`);
    await tileOf(page, 'Mean duration').waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(375);
    // Each chart fits its tile.
    for (const tile of await page
      .getByRole('list', { name: 'Guarded metrics' })
      .getByRole('listitem')
      .all()) {
      const [chart, box] = await Promise.all([tile.getByRole('img').boundingBox(), tile.boundingBox()]);
      expect((chart?.x ?? 0) + (chart?.width ?? 0)).toBeLessThanOrEqual((box?.x ?? 0) + (box?.width ?? 0));
    }

    const plain = await generatedRun(app.stack.apiUrl, context, {
      name: 'Approved outright',
      executions: 6,
      oldestMinutesAgo: 10,
    });
    expect(
      (await apiAs(app.stack.apiUrl, context, 'POST', `synthesis-runs/${plain.runId}/approve`, {})).status,
    ).toBe(200);
    await page.goto(`${app.stack.apiUrl}/app/runs/${plain.runId}`);
    const note = page.getByRole('note', { name: 'About these figures' });
    await note.waitFor();
    expect(await note.textContent()).toContain('Before/after, not randomized');
    // Its failure rate is a tile too; no rollout, so no step.
    await tileOf(page, 'Failure rate').waitFor();
    expect(await page.locator('.step-progress').count()).toBe(0);
  });
});
