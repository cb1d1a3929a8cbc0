import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait.ts';

/**
 * Webhooks through `npm start`: a change committed over HTTP reaches a receiver on 127.0.0.1
 * through the events table's stream (DynamoDB Local's Streams API), the deliverer functions in
 * their own environments and the local queue; the receiver verifies with `standardwebhooks`.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');

interface Seed {
  apiUrl: string;
  teams: Array<{ teamId: string; email: string; password: string; apiToken: string; pipelineIds: string[] }>;
}

let child: ChildProcess | undefined;
let receiver: Server | undefined;

afterAll(() => {
  if (child?.pid) process.kill(-child.pid, 'SIGKILL');
  receiver?.close();
});

describe('webhooks on the local stack', () => {
  it('delivers synthesis_run.generated and the rejection, signed, to a receiver on 127.0.0.1, and lists them in the audit log', async () => {
    const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-webhooks-'));
    let output = '';
    child = spawn('npm', ['start', '--silent'], {
      cwd: ROOT,
      detached: true,
      env: { ...process.env, PORT: '0', LOCAL_STATE_DIR: stateDir, QUIET: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr?.on('data', (chunk) => {
      output += chunk;
    });
    await waitFor(
      () => output.includes('ready in') || child?.exitCode !== null,
      'the local stack',
      90_000,
      50,
    );
    if (!output.includes('ready in')) throw new Error(`npm start failed:\n${output}`);
    const seed = JSON.parse(await readFile(path.join(stateDir, 'seed.json'), 'utf8')) as Seed;
    const [team] = seed.teams;
    if (!team) throw new Error('a seeded team expected');

    const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
    receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        received.push({ headers: request.headers, body });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver?.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

    const api = async (method: string, route: string, body?: unknown) => {
      const response = await fetch(`${seed.apiUrl}${route}`, {
        method,
        headers: { authorization: `Bearer ${team.apiToken}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
      return { status: response.status, body: (await response.json()) as any };
    };

    const created = await api('POST', '/webhooks', {
      url,
      eventTypes: ['synthesis_run.generated', 'synthesis_run.rejected'],
    });
    expect(created.status).toBe(201);
    // The local stack alone allows http to 127.0.0.1; a private address is refused there too.
    expect((await api('POST', '/webhooks', { url: 'https://192.168.1.10/hook' })).status).toBe(400);

    const started = await api('POST', `/pipelines/${team.pipelineIds[0]}/synthesize`, {});
    expect(started.status).toBe(202);
    await waitFor(() => received.length > 0, 'the webhook delivery', 60_000, 20).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${output}`);
    });
    const [delivery] = received;
    if (!delivery) throw new Error('no delivery');
    const payload = new Webhook(created.body.secret).verify(delivery.body, {
      'webhook-id': String(delivery.headers['webhook-id']),
      'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
      'webhook-signature': String(delivery.headers['webhook-signature']),
    }) as { type: string; data: { runId: string; actor: unknown } };
    expect(payload).toMatchObject({
      type: 'synthesis_run.generated',
      data: { runId: started.body.id, actor: { userId: 'system', credential: 'system' } },
    });

    const audit = await api(
      'GET',
      `/audit-events?pipelineId=${team.pipelineIds[0]}&type=synthesis_run.generated`,
    );
    expect(audit.body.items.map((event: { id: string }) => event.id)).toEqual([
      delivery.headers['webhook-id'],
    ]);

    // A reject writes the run alone and carries its event in it: the runs table's stream relays it.
    const rejected = await api('POST', `/synthesis-runs/${started.body.id}/reject`, { reason: 'not now' });
    expect(rejected.status).toBe(200);
    await waitFor(() => received.length > 1, 'the rejection delivery', 60_000, 20).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${output}`);
    });
    const rejection = received[1];
    if (!rejection) throw new Error('no second delivery');
    expect(
      new Webhook(created.body.secret).verify(rejection.body, {
        'webhook-id': String(rejection.headers['webhook-id']),
        'webhook-timestamp': String(rejection.headers['webhook-timestamp']),
        'webhook-signature': String(rejection.headers['webhook-signature']),
      }),
    ).toMatchObject({
      type: 'synthesis_run.rejected',
      data: { runId: started.body.id, status: 'rejected', actor: { credential: 'api_token' } },
    });
    const rejections = await api(
      'GET',
      `/audit-events?pipelineId=${team.pipelineIds[0]}&type=synthesis_run.rejected`,
    );
    expect(rejections.body.items.map((event: { id: string }) => event.id)).toEqual([
      rejection.headers['webhook-id'],
    ]);
    expect(received).toHaveLength(2);

    // The approval rules' one item carries approval_rules.updated, relayed from the settings stream;
    // a person changes them, from a session.
    const login = await api('POST', '/auth/login', {
      email: team.email,
      password: team.password,
      delivery: 'body',
    });
    const rules = await fetch(`${seed.apiUrl}/pipelines/${team.pipelineIds[0]}/approval-rules`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${login.body.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        requireEvaluation: false,
        maxRegressions: 0,
        minEvaluatedCases: 0,
        forbidSelfApproval: false,
        allowApiTokens: true,
      }),
    });
    expect(rules.status).toBe(200);
    let updates: Array<{ type: string; data: { actor: { credential: string } } }> = [];
    await waitFor(
      async () => {
        updates = (
          await api('GET', `/audit-events?pipelineId=${team.pipelineIds[0]}&type=approval_rules.updated`)
        ).body.items;
        return updates.length > 0;
      },
      'approval_rules.updated in the audit log',
      60_000,
      50,
    );
    expect(updates).toHaveLength(1);
    expect(updates[0]?.data.actor.credential).toBe('session');
  }, 180_000);
});
