/**
 * The review's OTLP bombs against the whole local stack (its gateway, functions in their own
 * environments, DynamoDB Local): each is answered with a 4xx `{error, message}`, while another team
 * keeps exporting traces through the same stack and every one of its requests is answered and
 * stored; the stack is up afterwards. The latency ratio under bombs is bench/otlp.ts's.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { type Bomb, reviewBombs } from '../support/otlp-bombs.ts';
import { protobufBody, recordingTracer, run } from '../support/otlp-requests.ts';

let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir: await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-otlp-bombs-')),
    log: () => {},
  });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

const team = (index: number) => {
  const seeded = stack.teams[index];
  if (!seeded) throw new Error(`no seeded team ${index}`);
  return { token: seeded.apiToken, pipelineId: seeded.pipelineIds[0] as string };
};

async function send(
  who: { token: string; pipelineId: string },
  body: Uint8Array,
  headers: Record<string, string>,
): Promise<{ status: number; text: string }> {
  const response = await fetch(`${stack.apiUrl}/pipelines/${who.pipelineId}/otlp/v1/traces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${who.token}`, ...headers },
    body,
  });
  return { status: response.status, text: await response.text() };
}

const bombHeaders = (bomb: Bomb) => ({
  'content-type': bomb.contentType,
  ...(bomb.gzip ? { 'content-encoding': 'gzip' } : {}),
});

async function get(who: { token: string }, route: string) {
  const response = await fetch(`${stack.apiUrl}${route}`, {
    headers: { authorization: `Bearer ${who.token}` },
  });
  return { status: response.status, body: (await response.json()) as { items?: Array<{ id: string }> } };
}

describe('the local stack under the review’s OTLP bombs', { timeout: 300_000 }, () => {
  it('answers every bomb with a 4xx while another team’s traces are all answered and stored', async () => {
    const attacker = team(0);
    const other = team(1);
    const bombs = reviewBombs();
    const pipeline = await get(other, `/pipelines/${other.pipelineId}`);
    const { activeConfigurationId } = pipeline.body as unknown as { activeConfigurationId: string };

    let bombing = true;
    const sentByOther: string[] = [];
    const answersToOther: number[] = [];
    // The other team exports one trace at a time, as its batch processor would, for as long as the
    // bombs last (and at least five), alternating protobuf's two media types.
    const otherTeam = (async () => {
      for (let round = 0; bombing || round < 5; round++) {
        const tracer = recordingTracer();
        sentByOther.push(run(tracer, other.pipelineId, activeConfigurationId, Date.now() - 60_000 - round));
        const type = round % 2 === 0 ? 'application/x-protobuf' : 'application/protobuf';
        answersToOther.push(
          (await send(other, protobufBody(tracer.spans()), { 'content-type': type })).status,
        );
      }
    })();
    const answers: Array<{ status: number; text: string }> = [];
    for (const bomb of bombs) answers.push(await send(attacker, bomb.body, bombHeaders(bomb)));
    bombing = false;
    await otherTeam;

    for (const [index, bomb] of bombs.entries()) {
      const answer = answers[index];
      expect(answer?.status, bomb.name).toBe(bomb.status);
      expect(JSON.parse(answer?.text ?? ''), bomb.name).toEqual({
        error: expect.any(String),
        message: expect.any(String),
      });
    }
    expect(
      answersToOther.every((status) => status === 200),
      answersToOther.join(', '),
    ).toBe(true);
    const stored = await get(other, `/pipelines/${other.pipelineId}/executions?limit=100`);
    expect(stored.status).toBe(200);
    expect(stored.body.items?.map((execution) => execution.id)).toEqual(expect.arrayContaining(sentByOther));
    // Nothing of the bombs was stored, and the stack still answers.
    const attacked = await get(attacker, `/pipelines/${attacker.pipelineId}/executions?limit=100`);
    expect(attacked.body.items?.filter((execution) => /^[0-9a-f]{32}$/.test(execution.id))).toEqual([]);
    expect((await get(attacker, '/me')).status).toBe(200);
  });
});
