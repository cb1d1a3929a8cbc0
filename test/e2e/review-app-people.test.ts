/**
 * People and their own changes in the review application (Chromium, the local stack): the Members
 * page (invite, the invitee joining from the emailed link, a role change, a removal after a
 * confirmation), the edit-by-hand form (the difference shown before proposing, a bad patch refused
 * in words) and the Good / Bad buttons of an execution, at 1280 and 375 px (screenshots kept in
 * .screenshots/ to look at).
 */
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../lib/bundling.ts';
import type { SeedTeam } from '../../local/seed.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { launchChromium } from '../../web/chromium.ts';

let stack: LocalStack;
let browser: Browser;
let stateDir: string;
let team: SeedTeam;
const contexts: BrowserContext[] = [];
const SHOTS = path.join(REPO_ROOT, '.screenshots');

beforeAll(async () => {
  process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
  stateDir = await mkdtemp(path.join(tmpdir(), 'review-app-people-'));
  stack = await startLocalStack({ port: 0, stateDir, quiet: true, log: () => {} });
  browser = await launchChromium();
  await mkdir(SHOTS, { recursive: true });
  const [first] = stack.teams;
  if (!first) throw new Error('The local stack seeded no team.');
  team = first;
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

/** The invitee follows the link from the outbox (its page's button verifies it), in their own browser. */
async function acceptInvitation(email: string): Promise<void> {
  const outbox = path.join(stateDir, 'outbox');
  const file = (await readdir(outbox))
    .sort()
    .filter((name) => name.endsWith(`-${email}.txt`))
    .at(-1);
  if (!file) throw new Error(`no email to ${email}`);
  const link = /https?:\/\/\S+/.exec(await readFile(path.join(outbox, file), 'utf8'))?.[0] ?? '';
  const context = await browser.newContext();
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(link);
  await page.getByRole('button', { name: /sign in/i }).click();
  await page.getByRole('heading', { name: 'Pipelines', level: 1 }).waitFor();
}

describe('the Members page', () => {
  it.each([1280, 375])(
    'invites, shows the new member, changes a role and removes after confirming (%i px)',
    async (width) => {
      const page = await signedIn(width);
      await page.getByRole('link', { name: 'Members' }).click();
      await page.getByRole('heading', { name: `Members of ${team.name}` }).waitFor();
      const own = page.getByRole('row', { name: new RegExp(team.email) });
      await own.getByText('(you)').waitFor();

      const invitee = `lin.${width}@example.test`;
      await page.getByLabel('Email', { exact: true }).fill(invitee);
      await page.getByLabel('Role', { exact: true }).selectOption('viewer');
      await page.getByRole('button', { name: 'Send invitation' }).click();
      await page.getByText(`Invitation sent to ${invitee} as viewer`).waitFor();
      await page.getByRole('listitem').filter({ hasText: invitee }).waitFor();

      await acceptInvitation(invitee);
      await page.reload();
      const row = page.getByRole('row', { name: new RegExp(invitee) });
      await row.waitFor();
      await page.getByLabel(`Role of ${invitee}`).selectOption('member');
      await page.getByText(`${invitee} is now member.`).waitFor();
      await page.screenshot({ path: path.join(SHOTS, `members-${width}.png`), fullPage: true });

      await page.getByRole('button', { name: `Remove ${invitee}` }).click();
      const dialog = page.getByRole('dialog', { name: `Remove ${invitee}?` });
      await dialog.getByText('Their sessions for').waitFor();
      await dialog.getByRole('button', { name: 'Remove' }).click();
      await page.getByText(`${invitee} was removed`).waitFor();
      await page.getByRole('row', { name: new RegExp(invitee) }).waitFor({ state: 'detached' });
      // The last admin is told why they cannot stop being one.
      await page.getByLabel(`Role of ${team.email}`).selectOption('viewer');
      await page.getByText(/A team keeps at least one admin/).waitFor();
    },
    90_000,
  );
});

describe('the edit-by-hand form', () => {
  it.each([1280, 375])(
    'shows the difference before proposing, and a bad patch is refused in words (%i px)',
    async (width) => {
      const page = await signedIn(width);
      const pipelineId = team.pipelineIds[0] as string;
      await page.goto(`${stack.apiUrl}/app/pipelines/${pipelineId}`);
      await page.getByRole('link', { name: 'change a slot by hand' }).click();
      await page.getByRole('heading', { name: /by hand/, level: 1 }).waitFor();
      await page.getByLabel('Slot').selectOption('answer-model');
      const settings = page.getByLabel('Settings (JSON)');
      const original = JSON.parse(await settings.inputValue());
      expect(original.temperature).toBe(0.9);

      await settings.fill('{"model": "claude-sonnet-4-5", ');
      await page.getByRole('button', { name: 'Review the change' }).click();
      await page.getByText(/The settings are not valid JSON/).waitFor();

      await settings.fill(JSON.stringify({ ...original, temperature: 7 }));
      await page.getByRole('button', { name: 'Review the change' }).click();
      const diff = page.getByRole('table', { name: /Settings of Answer model: 1 changed/ });
      await diff.waitFor();
      await expect(diff.getByRole('row', { name: /temperature changed/ }).innerText()).resolves.toMatch(
        /0\.9[\s\S]*7/,
      );
      await page.getByRole('button', { name: 'Propose this change' }).click();
      await page
        .getByText(
          /Change 1 is refused: its patch would make the settings of slot "answer-model" invalid \(temperature/,
        )
        .waitFor();

      await settings.fill(JSON.stringify({ ...original, temperature: 0.3 }));
      await page.getByLabel('What the change does').fill(`Steadier answers at ${width}`);
      await page.getByRole('button', { name: 'Review the change' }).click();
      await diff.waitFor();
      await page.screenshot({ path: path.join(SHOTS, `edit-by-hand-${width}.png`), fullPage: true });
      await page.getByRole('button', { name: 'Propose this change' }).click();
      await page.waitForURL(/\/app\/runs\//);
      await page.getByText(`Steadier answers at ${width}`).first().waitFor();
      await page.getByText('manual').first().waitFor();
    },
    90_000,
  );
});

describe('feedback on an execution', () => {
  it.each([1280, 375])(
    'Good and Bad record who said what (%i px)',
    async (width) => {
      const pipelineId = team.pipelineIds[0] as string;
      const recorded = await fetch(`${stack.apiUrl}/pipelines/${pipelineId}/executions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${team.apiToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          executions: [{ id: `judged-${width}`, status: 'succeeded', durationMs: 900 }],
        }),
      });
      expect(recorded.status).toBe(201);
      const page = await signedIn(width);
      await page.goto(`${stack.apiUrl}/app/pipelines/${pipelineId}/executions/judged-${width}`);
      const section = page.getByRole('region', { name: 'Was this execution good?' });
      await section.getByText('No one has said yet.').waitFor();
      // Names, not ids: the pipeline in the breadcrumbs, the configuration by its version.
      const crumbs = page.getByRole('navigation', { name: 'Breadcrumbs' });
      await crumbs.getByRole('link', { name: `${team.name} answer bot` }).waitFor();
      await page.getByText('configuration version 1').waitFor();
      await section.getByLabel('Note (optional)').fill('Right answer, right source');
      await section.getByRole('button', { name: /Good/ }).click();
      const given = section.getByRole('list', { name: 'Feedback given' });
      await given.getByText(`Good — ${team.email}`).waitFor();
      await given.getByText('Right answer, right source').waitFor();
      await section.getByRole('button', { name: /Bad/ }).click();
      await given.getByText(`Bad — ${team.email}`).waitFor();
      await page.screenshot({ path: path.join(SHOTS, `feedback-${width}.png`), fullPage: true });
    },
    90_000,
  );
});
