/**
 * A monitor's change of state to a webhook receiver on 127.0.0.1, on the local stack with the
 * judge's real schedule (every minute): failed executions are recorded, and the time from their
 * answer to the receiver's `monitor.alerted` is measured, then healthy ones and `monitor.resolved`.
 * Target: within 90 s of the records that caused it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEMO_SLOTS } from '../local/seed.ts';
import { startLocalStack } from '../local/stack.ts';
import { stackApi, UNLIMITED } from './stack-api.ts';

export const MONITOR_ARRIVAL_MAX_S = 90;

export interface MonitorArrivalFigures {
  alertedS: number;
  resolvedS: number;
}

export async function measureMonitorArrival(): Promise<MonitorArrivalFigures> {
  const arrivals: Array<{ type: string; at: number }> = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const type = (JSON.parse(body) as { type?: string }).type ?? '';
      arrivals.push({ type, at: performance.now() });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-bench-monitors-'));
  const stack = await startLocalStack({ port: 0, quiet: true, stateDir, limits: UNLIMITED });
  try {
    const team = stack.teams[0];
    if (!team) throw new Error('the local stack seeds two teams');
    const api = stackApi(stack.apiUrl, team.apiToken);
    const pipeline = await api('POST', '/pipelines', { name: 'monitor bench', slots: DEMO_SLOTS });
    await api('POST', '/webhooks', { url, eventTypes: ['monitor.alerted', 'monitor.resolved'] });
    await api('POST', `/pipelines/${pipeline.id}/monitors`, {
      name: 'Failures over half',
      metric: 'failure_rate',
      comparator: 'above',
      threshold: 0.5,
      windowMinutes: 5,
      minExecutions: 5,
    });
    const record = (count: number, status: 'failed' | 'succeeded') =>
      api('POST', `/pipelines/${pipeline.id}/executions`, {
        executions: Array.from({ length: count }, () => ({ status, durationMs: 120 })),
      });
    const arrivalOf = async (type: string, since: number) => {
      const deadline = since + 150_000;
      for (;;) {
        const arrival = arrivals.find((a) => a.type === type && a.at >= since);
        if (arrival) return (arrival.at - since) / 1000;
        if (performance.now() > deadline) return Number.POSITIVE_INFINITY;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    await record(10, 'failed');
    const failedAt = performance.now();
    const alertedS = await arrivalOf('monitor.alerted', failedAt);
    await record(40, 'succeeded');
    const healthyAt = performance.now();
    const resolvedS = await arrivalOf('monitor.resolved', healthyAt);
    return { alertedS, resolvedS };
  } finally {
    await stack.stop();
    server.close();
    await rm(stateDir, { recursive: true, force: true });
  }
}

export function formatMonitorArrival(f: MonitorArrivalFigures, verdict: (ok: boolean) => string): string {
  const line = (what: string, seconds: number) =>
    `${what} at the receiver ${seconds.toFixed(1)} s after the records (target ≤ ${MONITOR_ARRIVAL_MAX_S} s) ${verdict(seconds <= MONITOR_ARRIVAL_MAX_S)}`;
  return [line('monitor.alerted', f.alertedS), line('monitor.resolved', f.resolvedS)].join('\n');
}
