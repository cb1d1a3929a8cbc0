/**
 * The scheduling row of `npm run bench -- scheduling`: through the local stack, with claude-v1
 * against a slow fake Messages API on 127.0.0.1, one team starts 40 runs, then another team one.
 * Reported: the other team's POST → `generated` against one run's duration alone (fair queues by
 * message group: it should wait for at most one run of the busy team, so ≤ 2 runs' time), and how
 * many of the busy team's runs had finished first.
 */

import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_LIMITS } from '../lambdas/limits.ts';
import { startLocalStack } from '../local/stack.ts';
import { autoReply } from '../test/support/anthropic-fake.ts';

/** How long the fake model takes to answer: one run's duration is about this. */
const MODEL_DELAY_MS = 1_500;
const BURST = 40;

export interface SchedulingFigures {
  oneRunMs: number;
  otherTeamMs: number;
  ratio: number;
  burstFinishedFirst: number;
  burstAllMs: number;
}

/** A Messages API that answers every request with a plausible tool call after MODEL_DELAY_MS. */
async function startSlowModel(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const reply = autoReply(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'));
      setTimeout(() => {
        response.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_bench' });
        response.end(JSON.stringify(reply.kind === 'message' ? reply.body : {}));
      }, MODEL_DELAY_MS);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function measureScheduling(): Promise<SchedulingFigures> {
  const model = await startSlowModel();
  Object.assign(process.env, {
    ANTHROPIC_API_KEY: 'bench-key',
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_MAX_RETRIES: '0',
  });
  const stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir: await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-bench-scheduling-')),
    log: () => {},
    limits: {
      ...DEFAULT_LIMITS,
      requestsPerSecondPerCredential: 1_000_000,
      burstPerCredential: 1_000_000,
      synthesisRunsPerTeamPerHour: 1_000_000,
    },
  });
  try {
    const [busy, other] = stack.teams;
    if (!busy || !other) throw new Error('the local stack seeds two teams');
    const call = async (token: string, method: string, route: string, body?: unknown) => {
      const response = await fetch(`${stack.apiUrl}${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return (await response.json()) as { id: string; status: string };
    };
    const start = (team: typeof busy) =>
      call(team.apiToken, 'POST', `/pipelines/${team.pipelineIds[0]}/synthesize`, {
        synthesisHandler: 'claude-v1',
      });
    const generated = async (team: typeof busy, runId: string) => {
      for (;;) {
        const run = await call(team.apiToken, 'GET', `/synthesis-runs/${runId}`);
        if (run.status === 'generated' || run.status === 'failed') return run.status;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const timed = async (team: typeof busy) => {
      const began = performance.now();
      const run = await start(team);
      await generated(team, run.id);
      return performance.now() - began;
    };

    // Warm both teams' paths, then one run alone: the duration of one run.
    await timed(other);
    const oneRunMs = await timed(busy);

    const burstBegan = performance.now();
    let burstFinished = 0;
    const burstRuns = await Promise.all(Array.from({ length: BURST }, () => start(busy)));
    const burstDone = Promise.all(
      burstRuns.map(async (run) => {
        await generated(busy, run.id);
        burstFinished += 1;
      }),
    );
    const otherTeamMs = await timed(other);
    const burstFinishedFirst = burstFinished;
    await burstDone;
    return {
      oneRunMs,
      otherTeamMs,
      ratio: otherTeamMs / oneRunMs,
      burstFinishedFirst,
      burstAllMs: performance.now() - burstBegan,
    };
  } finally {
    await stack.stop();
    await model.close();
  }
}

export function formatScheduling(figures: SchedulingFigures): string {
  return `one team's ${BURST} slow runs, then another team's one: POST → generated ${figures.otherTeamMs.toFixed(0)} ms vs one run alone ${figures.oneRunMs.toFixed(0)} ms: ${figures.ratio.toFixed(2)}× (target ≤ 2×: at most one run's wait) ${figures.ratio <= 2 ? 'ok' : 'MISSED'}; ${figures.burstFinishedFirst} of the ${BURST} had finished first, all ${BURST} in ${(figures.burstAllMs / 1000).toFixed(1)} s`;
}
