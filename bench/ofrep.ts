/**
 * OpenFeature's remote evaluation (OFREP) through the local stack, as ratios measured in the same
 * process on the same stack:
 *   - single: POST /ofrep/v1/evaluate/flags/{key} against GET …/serving-configuration for the same
 *     pipeline in a 50 % rollout, p50 and throughput at 16 callers. Targets: p50 ≤ 1.1 ×,
 *     throughput ≥ 0.9 ×.
 *   - bulk: POST /ofrep/v1/evaluate/flags for a team of 50 pipelines against one single evaluation
 *     of that team (target ≤ 3 ×), and its 304 (If-None-Match) against a poll, GET …/serving-configuration
 *     answered 304 (target ≤ 1.2 ×, as serving's own target against a poll).
 *   - routing: 10,000 targeting keys: the candidate's share within ±3 points of the percent, and
 *     every key the same configuration from OFREP and from serving-configuration.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEMO_SLOTS } from '../local/seed.ts';
import { startLocalStack } from '../local/stack.ts';
import { pipelineWithGeneratedRun, stackApi, UNLIMITED } from './stack-api.ts';

export interface OfrepFigures {
  servingP50Ms: number;
  singleP50Ms: number;
  servingPerSecond: number;
  singlePerSecond: number;
  teamSingleP50Ms: number;
  bulkP50Ms: number;
  bulkFlags: number;
  poll304P50Ms: number;
  bulk304P50Ms: number;
  keys: number;
  percent: number;
  candidateShare: number;
  disagreements: number;
}

function p50(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** One request with a team's token; its status, ETag and JSON body. */
function caller(apiUrl: string, apiToken: string) {
  return async (method: string, route: string, body?: unknown, ifNoneMatch?: string) => {
    const response = await fetch(`${apiUrl}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${apiToken}`,
        'content-type': 'application/json',
        ...(ifNoneMatch ? { 'if-none-match': ifNoneMatch } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.status >= 400) throw new Error(`${method} ${route}: ${response.status} ${text}`);
    // biome-ignore lint/suspicious/noExplicitAny: the bench reads a few fields
    const json: any = text ? JSON.parse(text) : null;
    return { status: response.status, etag: response.headers.get('etag') ?? undefined, body: json };
  };
}

type Call = () => Promise<unknown>;

async function sequential(call: (i: number) => Promise<unknown>, samples: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    await call(i);
    times.push(performance.now() - start);
  }
  return p50(times);
}

async function throughput(call: (i: number) => Promise<unknown>, ms: number): Promise<number> {
  let done = 0;
  const until = performance.now() + ms;
  await Promise.all(
    Array.from({ length: 16 }, async (_, lane) => {
      while (performance.now() < until) {
        await call(lane * 1_000_000 + done);
        done += 1;
      }
    }),
  );
  return done / (ms / 1000);
}

/** p50s of two calls measured alternately (the machine is shared; drift hits both alike). */
async function alternated(
  a: Call | ((i: number) => Promise<unknown>),
  b: Call | ((i: number) => Promise<unknown>),
) {
  await sequential(a, 20);
  await sequential(b, 20);
  const first: number[] = [];
  const second: number[] = [];
  for (let round = 0; round < 3; round++) {
    first.push(await sequential(a, 100));
    second.push(await sequential(b, 100));
  }
  return [p50(first), p50(second)] as const;
}

export async function measureOfrep(): Promise<OfrepFigures> {
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-bench-ofrep-'));
  const stack = await startLocalStack({ port: 0, quiet: true, stateDir, limits: UNLIMITED });
  try {
    const [first, second] = stack.teams;
    if (!first || !second) throw new Error('the local stack seeds two teams');
    const api = caller(stack.apiUrl, first.apiToken);
    const percent = 50;
    const { pipeline, run } = await pipelineWithGeneratedRun(
      stackApi(stack.apiUrl, first.apiToken),
      'rolled out',
    );
    await api('POST', `/synthesis-runs/${run.id}/approve`, { rollout: { percent, minExecutions: 100_000 } });
    const serve = (i: number) =>
      api('GET', `/pipelines/${pipeline.id}/serving-configuration?routingKey=user-${i}`);
    const evaluate = (i: number) =>
      api('POST', `/ofrep/v1/evaluate/flags/${pipeline.id}`, { context: { targetingKey: `user-${i}` } });

    const [servingP50Ms, singleP50Ms] = await alternated(serve, evaluate);
    const servingRates: number[] = [];
    const singleRates: number[] = [];
    for (let round = 0; round < 3; round++) {
      servingRates.push(await throughput(serve, 2_000));
      singleRates.push(await throughput(evaluate, 2_000));
    }

    // A team of 50 pipelines: its bulk evaluation against one of its single evaluations.
    const team = caller(stack.apiUrl, second.apiToken);
    const seeded = (await team('GET', '/pipelines?limit=100')).body.items as Array<{ id: string }>;
    const ids = seeded.map((item) => item.id);
    while (ids.length < 50)
      ids.push(
        (await team('POST', '/pipelines', { name: `pipeline ${ids.length}`, slots: DEMO_SLOTS })).body.id,
      );
    const context = { context: { targetingKey: 'user-1' } };
    const bulk = () => team('POST', '/ofrep/v1/evaluate/flags', context);
    const bulkFlags = (await bulk()).body.flags.length as number;
    const [teamSingleP50Ms, bulkP50Ms] = await alternated(
      () => team('POST', `/ofrep/v1/evaluate/flags/${ids[0]}`, context),
      bulk,
    );
    const { etag } = await bulk();
    const polled = await team('GET', `/pipelines/${ids[0]}/serving-configuration?routingKey=user-1`);
    const [poll304P50Ms, bulk304P50Ms] = await alternated(
      () =>
        team('GET', `/pipelines/${ids[0]}/serving-configuration?routingKey=user-1`, undefined, polled.etag),
      () => team('POST', '/ofrep/v1/evaluate/flags', context, etag),
    );

    // Routing over 10,000 targeting keys, 16 at a time.
    const keys = 10_000;
    let candidates = 0;
    let disagreements = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let i = next++; i < keys; i = next++) {
          const [served, flag] = await Promise.all([serve(i), evaluate(i)]);
          if (served.body.configuration.id !== flag.body.variant) disagreements++;
          if (flag.body.metadata.arm === 'candidate') candidates++;
        }
      }),
    );
    return {
      servingP50Ms,
      singleP50Ms,
      servingPerSecond: p50(servingRates),
      singlePerSecond: p50(singleRates),
      teamSingleP50Ms,
      bulkP50Ms,
      bulkFlags,
      poll304P50Ms,
      bulk304P50Ms,
      keys,
      percent,
      candidateShare: (candidates / keys) * 100,
      disagreements,
    };
  } finally {
    await stack.stop();
  }
}

export function formatOfrep(f: OfrepFigures): string {
  const ok = (pass: boolean) => (pass ? 'ok' : 'MISSED');
  const r = (n: number) => n.toFixed(2);
  const single = f.singleP50Ms / f.servingP50Ms;
  const rate = f.singlePerSecond / f.servingPerSecond;
  const bulk = f.bulkP50Ms / f.teamSingleP50Ms;
  const notModified = f.bulk304P50Ms / f.poll304P50Ms;
  const share = Math.abs(f.candidateShare - f.percent);
  return [
    `OFREP single evaluation p50 ${r(f.singleP50Ms)} ms vs serving-configuration ${r(f.servingP50Ms)} ms: ${r(single)}× (target ≤ 1.1×) ${ok(single <= 1.1)}`,
    `OFREP single ${f.singlePerSecond.toFixed(0)}/s vs serving ${f.servingPerSecond.toFixed(0)}/s at 16 callers: ${r(rate)}× (target ≥ 0.9×) ${ok(rate >= 0.9)}`,
    `OFREP bulk, a team of ${f.bulkFlags} pipelines, p50 ${r(f.bulkP50Ms)} ms vs one single evaluation ${r(f.teamSingleP50Ms)} ms: ${r(bulk)}× (target ≤ 3×) ${ok(bulk <= 3 && f.bulkFlags === 50)}`,
    `OFREP bulk 304 p50 ${r(f.bulk304P50Ms)} ms vs a serving-configuration poll answered 304 ${r(f.poll304P50Ms)} ms: ${r(notModified)}× (target ≤ 1.2×) ${ok(notModified <= 1.2)}`,
    `routing over ${f.keys.toLocaleString('en-US')} targeting keys: candidate ${f.candidateShare.toFixed(1)} % for a ${f.percent} % rollout (target within ±3 points) ${ok(share <= 3)}; ${f.disagreements} keys given another configuration by OFREP than by serving-configuration (target 0) ${ok(f.disagreements === 0)}`,
  ].join('\n');
}
