/**
 * The review application's browser tests share one set-up: a local stack on a free port with
 * temporary state, Debian's Chromium, the first seeded team, and the browser contexts a test opens
 * closed after it. `useReviewApp` registers the hooks; its getters read what they started.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { SeedTeam } from '../../local/seed.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { launchChromium } from '../../web/chromium.ts';

export interface ReviewApp {
  readonly stack: LocalStack;
  readonly browser: Browser;
  readonly team: SeedTeam;
  /** Contexts to close after the test that opened them. */
  readonly contexts: BrowserContext[];
}

export function useReviewApp(stateDirPrefix: string): ReviewApp {
  let stack: LocalStack | undefined;
  let browser: Browser | undefined;
  let team: SeedTeam | undefined;
  let stateDir: string | undefined;
  const contexts: BrowserContext[] = [];
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`The review app's ${what} is not started (beforeAll failed?).`);
    return value;
  };

  beforeAll(async () => {
    process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
    delete process.env.ANTHROPIC_API_KEY;
    stateDir = await mkdtemp(path.join(tmpdir(), stateDirPrefix));
    stack = await startLocalStack({ port: 0, stateDir, quiet: true, log: () => {} });
    browser = await launchChromium();
    [team] = stack.teams;
    if (!team) throw new Error('The local stack seeded no team.');
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    if (stateDir) await rm(stateDir, { recursive: true, force: true });
  });

  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close().catch(() => undefined);
  });

  return {
    get stack() {
      return started(stack, 'stack');
    },
    get browser() {
      return started(browser, 'browser');
    },
    get team() {
      return started(team, 'team');
    },
    contexts,
  };
}
