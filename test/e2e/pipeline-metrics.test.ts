/**
 * The pipeline over time through the local stack (GET …/metrics): executions and scores recorded
 * over three hours at known times give exact buckets; an activation in the middle is an annotation
 * naming the version and the person, and splits the per-configuration series; bad ranges are 400s
 * naming the limit; another team's token is refused (403, as for every pipeline of another team).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';

let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir: await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-metrics-')),
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const MINUTE = 60_000;
const HOUR = 3_600_000;

async function api(method: string, route: string, body?: unknown, team = 0) {
  const response = await fetch(`${stack.apiUrl}${route}`, {
    method,
    headers: {
      authorization: `Bearer ${stack.teams[team]?.apiToken ?? ''}`,
      'content-type': 'application/json',
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

interface Bucket {
  at: string;
  executions: number;
  failed: number;
  failureRate: number | null;
  scores: Record<string, { count: number; mean: number }>;
}

describe('GET /pipelines/{pipelineId}/metrics', () => {
  it('counts what was recorded where it happened, marks the activation and splits the series at it', async () => {
    const slots = [
      { id: 'lookup', name: 'Lookup', kind: 'retrieval', settings: { topK: 5, timeoutMs: 1000 } },
      { id: 'writer', name: 'Writer', kind: 'model', settings: { model: 'claude-haiku', temperature: 1 } },
    ];
    const pipeline = await api('POST', '/pipelines', { name: 'metrics bot', slots });
    expect(pipeline.status).toBe(201);
    const id = pipeline.body.id as string;
    const first = pipeline.body.activeConfigurationId as string;
    // Three hours ago to ten minutes ago, on version 1: every fifth one failed.
    const start = Math.floor((Date.now() - 3 * HOUR) / HOUR) * HOUR;
    const times = Array.from({ length: 120 }, (_, i) => start + i * 90_000);
    const recorded = await api('POST', `/pipelines/${id}/executions`, {
      executions: times.slice(0, 100).map((at, i) => ({
        status: i % 5 === 0 ? 'failed' : 'succeeded',
        durationMs: 100 + i,
        startedAt: new Date(at).toISOString(),
      })),
    });
    expect(recorded.status).toBe(201);
    expect(
      (
        await api('POST', `/pipelines/${id}/signals`, {
          signals: times.slice(0, 40).map((at, i) => ({
            kind: 'relevance',
            severity: 'info',
            message: `score ${i}`,
            value: i % 2,
            occurredAt: new Date(at + 1_000).toISOString(),
          })),
        })
      ).status,
    ).toBe(201);

    // Version 2 by hand, approved: its executions start now.
    const proposal = await api('POST', `/pipelines/${id}/proposals`, {
      changes: [{ slotId: 'writer', description: 'Cooler', patch: { temperature: 0.2 } }],
    });
    expect(proposal.status).toBe(201);
    const approved = await api('POST', `/synthesis-runs/${proposal.body.id}/approve`, {});
    expect(approved.body.status).toBe('approved');
    const second = (await api('GET', `/pipelines/${id}`)).body.activeConfigurationId as string;
    expect(second).not.toBe(first);
    expect(
      (
        await api('POST', `/pipelines/${id}/executions`, {
          executions: Array.from({ length: 7 }, () => ({ status: 'succeeded', durationMs: 50 })),
        })
      ).status,
    ).toBe(201);

    const from = new Date(start).toISOString();
    const to = new Date(Date.now() + MINUTE).toISOString();
    const hours = await api('GET', `/pipelines/${id}/metrics?from=${from}&to=${to}&step=hour`);
    expect(hours.status).toBe(200);
    const whole = hours.body.series[0].buckets as Bucket[];
    const inHour = (h: number) => times.slice(0, 100).filter((at) => Math.floor((at - start) / HOUR) === h);
    for (const h of [0, 1]) {
      const ats = inHour(h);
      const failed = ats.filter((at) => times.indexOf(at) % 5 === 0).length;
      expect(whole[h]).toMatchObject({
        at: new Date(start + h * HOUR).toISOString(),
        executions: ats.length,
        failed,
      });
    }
    expect(whole.reduce((sum, b) => sum + b.executions, 0)).toBe(107);
    const scored = whole.flatMap((b) => (b.scores.relevance ? [b.scores.relevance] : []));
    expect(scored.reduce((sum, s) => sum + s.count, 0)).toBe(40);
    expect(scored.reduce((sum, s) => sum + s.count * s.mean, 0)).toBeCloseTo(20, 6);

    // By the minute, per configuration: version 1 before the activation, version 2 after it.
    const minutes = await api(
      'GET',
      `/pipelines/${id}/metrics?from=${from}&to=${to}&step=minute&groupBy=configuration`,
    );
    expect(minutes.status).toBe(200);
    const activation = (minutes.body.annotations as Array<Record<string, unknown>>).find(
      (a) => a.type === 'activation',
    );
    expect(activation).toMatchObject({ configurationId: second, version: 2, label: 'Activated version 2' });
    expect(String(activation?.byName)).toContain('@');
    const at = Date.parse(String(activation?.at));
    const seriesOf = (configurationId: string) =>
      (minutes.body.series as Array<{ configurationId?: string; buckets: Bucket[] }>).find(
        (s) => s.configurationId === configurationId,
      )?.buckets ?? [];
    const busy = (buckets: Bucket[]) => buckets.filter((b) => b.executions > 0).map((b) => Date.parse(b.at));
    expect(Math.max(...busy(seriesOf(first)))).toBeLessThan(at);
    expect(Math.min(...busy(seriesOf(second)))).toBeGreaterThanOrEqual(Math.floor(at / MINUTE) * MINUTE);
    expect(busy(seriesOf(second)).length).toBeGreaterThan(0);
    expect(seriesOf(second).reduce((sum, b) => sum + b.executions, 0)).toBe(7);
  });

  it('refuses a bad range with a 400 naming the limit, and another team with a 403', async () => {
    const pipeline = await api('POST', '/pipelines', {
      name: 'metrics limits',
      slots: [{ id: 'lookup', name: 'Lookup', kind: 'retrieval', settings: { topK: 5 } }],
    });
    const route = `/pipelines/${pipeline.body.id}/metrics`;
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    const cases: Array<[string, RegExp]> = [
      [`?from=${iso(now)}&to=${iso(now - HOUR)}`, /before to/],
      [`?from=${iso(now - 2 * 86_400_000)}&to=${iso(now)}&step=minute`, /at most 1440/],
      ['?step=week', /step must be minute, hour or day/],
      ['?groupBy=slot', /groupBy must be configuration/],
      ['?from=yesterday', /from must be a UTC timestamp/],
      [`?from=${iso(now - 200 * 86_400_000)}&step=day`, /retention of 90 days/],
      [`?to=${iso(now + 3 * 86_400_000)}`, /24 hours ahead/],
    ];
    for (const [query, message] of cases) {
      const answer = await api('GET', `${route}${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.body.error, query).toBe('VALIDATION_ERROR');
      expect(answer.body.message, query).toMatch(message);
    }
    const empty = await api('GET', `${route}?step=day&from=${iso(now - 29 * 86_400_000)}`);
    expect(empty.status).toBe(200);
    expect(empty.body.series[0].buckets).toHaveLength(30);
    const other = await api('GET', route, undefined, 1);
    expect(other.status).toBe(403);
    expect(other.body.error).toBe('FORBIDDEN');
  });
});
