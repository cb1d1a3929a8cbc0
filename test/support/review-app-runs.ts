/*
 * What the review application's browser tests of a run page share: calling the API as the signed-in
 * page does (its session cookie and CSRF header), signing in, and a pipeline of its own with
 * executions carrying input and a generated heuristic-v1 run.
 */
import type { BrowserContext, Page } from 'playwright-core';
import type { SeedTeam } from '../../local/seed.ts';
import { waitFor } from './wait.ts';

/** Calls the API with the context's session, as the app does. */
export async function apiAs(
  apiUrl: string,
  context: BrowserContext,
  method: 'GET' | 'POST' | 'PUT',
  route: string,
  body?: unknown,
) {
  const response = await context.request.fetch(`${apiUrl}/${route}`, {
    method,
    headers: method === 'GET' ? {} : { 'x-requested-with': 'e2e', 'content-type': 'application/json' },
    ...(body === undefined ? {} : { data: JSON.stringify(body) }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: asserted field by field
  const answer = (await response.json().catch(() => undefined)) as any;
  return { status: response.status(), body: answer };
}

/** Signs `team`'s person in through the app's form, and waits for the pipelines page. */
export async function signIn(page: Page, apiUrl: string, team: SeedTeam): Promise<void> {
  await page.goto(`${apiUrl}/app/`);
  await page.getByLabel('Email').fill(team.email);
  await page.getByLabel('Password').fill(team.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Pipelines', level: 1 }).waitFor();
}

const RETRIEVE_AND_MODEL = [
  { id: 'retrieve', name: 'Retrieve', kind: 'retrieval', settings: { topK: 8, timeoutMs: 1000 } },
  { id: 'model', name: 'Model', kind: 'model', settings: { model: 'm', maxTokens: 256 } },
];
const TIMEOUTS = Array.from({ length: 5 }, (_, i) => ({
  kind: 'timeout',
  severity: 'critical',
  message: `Retrieval timed out (${i})`,
  slotId: 'retrieve',
}));

/** Four reports of each fault, for the demo's slots: heuristic-v1 answers them with five changes. */
export const FIVE_CHANGE_SIGNALS = [
  ['timeout', 'critical', 'Retrieval timed out after 1500 ms', 'retrieve'],
  ['truncation', 'warning', 'Answer truncated: stop_reason max_tokens', 'answer-model'],
  ['format', 'critical', 'Malformed JSON: unexpected token', 'answer-model'],
  ['feedback', 'warning', 'User said the answer was wrong', 'answer-prompt'],
].flatMap(([kind, severity, message, slotId]) =>
  Array.from({ length: 4 }, (_, i) => ({ kind, severity, message: `${message} (${i})`, slotId })),
);

/**
 * A pipeline of its own (its rules affect no other test) named `name`, with five retrieval timeouts
 * (or `signals` on `slots`), `executions` executions carrying input (every other one failed), the
 * oldest `oldestMinutesAgo` minutes ago, one a minute, and a generated run.
 */
export async function generatedRun(
  apiUrl: string,
  context: BrowserContext,
  {
    name,
    executions,
    oldestMinutesAgo,
    slots = RETRIEVE_AND_MODEL,
    signals = TIMEOUTS,
  }: { name: string; executions: number; oldestMinutesAgo: number; slots?: unknown[]; signals?: unknown[] },
): Promise<{ pipelineId: string; runId: string }> {
  const created = await apiAs(apiUrl, context, 'POST', 'pipelines', { name, slots });
  const pipelineId = created.body.id as string;
  await apiAs(apiUrl, context, 'POST', `pipelines/${pipelineId}/signals`, { signals });
  await apiAs(apiUrl, context, 'POST', `pipelines/${pipelineId}/executions`, {
    executions: Array.from({ length: executions }, (_, i) => ({
      id: `case-${i}`,
      status: i % 2 === 0 ? 'failed' : 'succeeded',
      durationMs: 900,
      startedAt: new Date(Date.now() - (oldestMinutesAgo - i) * 60_000).toISOString(),
      input: { question: `Where is order ${i}?` },
      ...(i % 2 === 0
        ? {
            error: 'retrieval timed out',
            slotResults: [{ slotId: 'retrieve', status: 'failed', durationMs: 1000, error: 'timeout' }],
          }
        : {}),
    })),
  });
  const started = await apiAs(apiUrl, context, 'POST', `pipelines/${pipelineId}/synthesize`, {
    synthesisHandler: 'heuristic-v1',
  });
  const runId = started.body.id as string;
  await waitFor(
    async () => (await apiAs(apiUrl, context, 'GET', `synthesis-runs/${runId}`)).body?.status === 'generated',
    `run ${runId} to be generated`,
    30_000,
    100,
  );
  return { pipelineId, runId };
}
