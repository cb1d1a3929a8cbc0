/**
 * Webhook fairness between teams on the local stack: one team has 16 webhooks whose receivers
 * accept the connection and never answer, and changes its settings 15 times (240 deliveries that
 * each hang until the deliverer's 10 s timeout); then another team changes its settings, a few
 * times, a second apart. For each of the other team's events: the time from its commit (the audit
 * log's timestamp) to its arrival at its receiver on 127.0.0.1. Target: every one within 2 s.
 */
import { mkdtemp } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startLocalStack } from '../local/stack.ts';
import { stackApi, UNLIMITED } from './stack-api.ts';

export interface FairnessFigures {
  hungDeliveries: number;
  /** Commit → arrival of each of the other team's events, ms. */
  otherTeamMs: number[];
}

const HUNG_WEBHOOKS = 16;
const BUSY_CHANGES = 15;
const QUIET_EVENTS = 5;

async function until(condition: () => boolean, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}

export async function measureWebhookFairness(): Promise<FairnessFigures> {
  const hung: ServerResponse[] = [];
  const arrivals = new Map<string, number>();
  const receiver = createServer((request, response) => {
    const at = Date.now();
    if (request.url?.startsWith('/hang/')) {
      hung.push(response);
      return;
    }
    request.resume();
    request.on('end', () => {
      arrivals.set(String(request.headers['webhook-id']), at);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-bench-fairness-'));
  const stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir,
    limits: UNLIMITED,
    log: () => undefined,
  });
  try {
    const [busy, quiet] = stack.teams;
    if (!busy || !quiet) throw new Error('two seeded teams expected');
    const api = (token: string, method: string, route: string, body?: unknown) =>
      stackApi(stack.apiUrl, token)(method, route, body);
    const eventTypes = ['team_settings.updated'];
    for (let index = 0; index < HUNG_WEBHOOKS; index++) {
      await api(busy.apiToken, 'POST', '/webhooks', { url: `${base}/hang/${index}`, eventTypes });
    }
    await api(quiet.apiToken, 'POST', '/webhooks', { url: `${base}/quiet`, eventTypes });
    const change = (team: typeof busy, days: number) =>
      api(team.apiToken, 'PATCH', `/teams/${team.teamId}/settings`, {
        signalRetentionDays: days,
        executionRetentionDays: days,
      });
    for (let index = 0; index < BUSY_CHANGES; index++) await change(busy, 400 + index);
    // The busy team's deliveries are hanging in every invocation the deliverer runs.
    await until(() => hung.length >= 50, 30_000);
    const otherTeamMs: number[] = [];
    for (let index = 0; index < QUIET_EVENTS; index++) {
      await change(quiet, 400 + index);
      const audit = await api(quiet.apiToken, 'GET', '/audit-events?type=team_settings.updated&limit=1');
      const event = audit.items?.[0];
      await until(() => arrivals.has(event?.id), 60_000);
      const arrived = arrivals.get(event?.id);
      if (arrived !== undefined) otherTeamMs.push(arrived - Date.parse(event.timestamp));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    return { hungDeliveries: hung.length, otherTeamMs };
  } finally {
    for (const response of hung) response.destroy();
    await stack.stop();
    receiver.close();
  }
}

export function formatWebhookFairness(figures: FairnessFigures): string {
  const met = figures.otherTeamMs.length === QUIET_EVENTS && figures.otherTeamMs.every((ms) => ms <= 2000);
  return `another team's delivery while one team's ${HUNG_WEBHOOKS} receivers hang (${figures.hungDeliveries} hung POSTs seen): commit → arrival ${figures.otherTeamMs.map((ms) => ms.toFixed(0)).join(', ')} ms (target each ≤ 2000 ms) ${met ? 'ok' : 'MISSED'}`;
}
