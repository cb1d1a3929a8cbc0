import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait.ts';

/**
 * Drives `npm start` the way a user does: start it, read .local/seed.json, use the API over HTTP
 * with a seeded token, press Ctrl-C (SIGINT to the process group), and start it again.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');

interface Seed {
  apiUrl: string;
  dynamodbEndpoint: string;
  teams: Array<{ teamId: string; apiToken: string; pipelineIds: string[]; email: string; password: string }>;
}

const running = new Set<ChildProcess>();

async function startLocalStack(): Promise<{ child: ChildProcess; seed: Seed; output: () => string }> {
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-e2e-'));
  let output = '';
  const child = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, PORT: '0', LOCAL_STATE_DIR: stateDir, QUIET: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  await waitFor(
    () => output.includes('ready in') || child.exitCode !== null,
    'the local stack to be ready',
    60_000,
    50,
  );
  if (!output.includes('ready in')) throw new Error(`npm start failed:\n${output}`);
  const seed = JSON.parse(await readFile(path.join(stateDir, 'seed.json'), 'utf8')) as Seed;
  return { child, seed, output: () => output };
}

/** Ctrl-C in a terminal: SIGINT to the whole foreground process group (npm, node and the functions). */
async function pressCtrlC(child: ChildProcess): Promise<boolean> {
  // npm re-raises the signal after its child exited, so "ended by SIGINT" is a clean stop too.
  const exited = new Promise<boolean>((resolve) =>
    child.once('exit', (code, signal) => resolve(code === 0 || signal === 'SIGINT')),
  );
  process.kill(-(child.pid as number), 'SIGINT');
  const code = await exited;
  running.delete(child);
  return code;
}

function portAcceptsConnections(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

afterAll(() => {
  for (const child of running) process.kill(-(child.pid as number), 'SIGKILL');
});

describe('npm start', () => {
  it('runs the whole synthesis path over HTTP, then stops everything on Ctrl-C and starts again', async () => {
    const { child, seed } = await startLocalStack();
    expect(seed.teams).toHaveLength(2);
    const [team, otherTeam] = seed.teams;
    if (!team || !otherTeam) throw new Error('two seeded teams expected');
    const api = async (method: string, route: string, body?: unknown, token = team.apiToken) => {
      const response = await fetch(`${seed.apiUrl}${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
      const json: any = await response.json();
      return { status: response.status, headers: response.headers, body: json };
    };

    // The seeded token works, a missing or foreign one does not.
    expect((await api('GET', '/me')).body.teams[0].id).toBe(team.teamId);
    expect(await api('GET', '/me', undefined, 'nope')).toMatchObject({
      status: 401,
      body: { error: 'UNAUTHORIZED' },
    });
    expect(
      (await api('GET', `/pipelines/${team.pipelineIds[0]}`, undefined, otherTeam.apiToken)).status,
    ).toBe(403);
    expect((await api('GET', '/no-such-route')).body.error).toBe('NOT_FOUND');

    // The OpenAPI document needs no credential.
    const openapi = await fetch(`${seed.apiUrl}/openapi.json`);
    expect(openapi.status).toBe(200);
    const document = (await openapi.json()) as { paths: object; servers: Array<{ url: string }> };
    expect(Object.keys(document.paths)).toContain('/synthesis-runs/{id}');
    // Its first server is this local stack itself, with its real port.
    expect(document.servers[0]?.url).toBe(seed.apiUrl);

    // The seeded user can log in with the seeded password; the session works as a Bearer.
    const login = await fetch(`${seed.apiUrl}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: team.email, password: team.password, delivery: 'body' }),
    });
    expect(login.status).toBe(200);
    const { accessToken } = (await login.json()) as { accessToken: string };
    const viaSession = await api('GET', '/me', undefined, accessToken);
    expect(viaSession.body.authentication).toMatchObject({ method: 'session', teamId: team.teamId });

    // Create a pipeline with slots, record signals and executions.
    const slots = [
      { id: 'lookup', name: 'Lookup', kind: 'retrieval', settings: { topK: 5, timeoutMs: 1000 } },
      {
        id: 'writer',
        name: 'Writer',
        kind: 'model',
        settings: { model: 'claude-haiku', temperature: 1, maxTokens: 300 },
      },
    ];
    const pipeline = await api('POST', '/pipelines', { name: 'e2e bot', slots });
    expect(pipeline.status).toBe(201);
    const signals = await api('POST', `/pipelines/${pipeline.body.id}/signals`, {
      signals: [
        ...Array.from({ length: 4 }, (_, i) => ({
          kind: 'timeout',
          severity: 'critical',
          message: `lookup timed out ${i}`,
          slotId: 'lookup',
        })),
        ...Array.from({ length: 3 }, () => ({
          kind: 'format_error',
          severity: 'warning',
          message: 'invalid JSON in output',
          slotId: 'writer',
        })),
      ],
    });
    expect(signals.status).toBe(201);
    const executions = await api('POST', `/pipelines/${pipeline.body.id}/executions`, {
      executions: [
        {
          status: 'failed',
          durationMs: 1000,
          error: 'timeout',
          slotResults: [{ slotId: 'lookup', status: 'failed', durationMs: 1000 }],
        },
      ],
    });
    expect(executions.status).toBe(201);

    // Synthesize, poll the Location until generated.
    const started = await api('POST', `/pipelines/${pipeline.body.id}/synthesize`, {});
    expect(started.status).toBe(202);
    expect(started.body.status).toBe('pending');
    const location = started.headers.get('location') as string;
    expect(location).toBe(`/synthesis-runs/${started.body.id}`);
    let run = started.body;
    await waitFor(
      async () => {
        run = (await api('GET', location)).body;
        return run.status === 'generated' || run.status === 'failed';
      },
      'the run to be generated',
      20_000,
      25,
    );
    expect(run.status).toBe('generated');

    // The proposal cites real signals and real slots, and its configuration is stored.
    const signalIds = new Set(signals.body.signals.map((signal: { id: string }) => signal.id));
    for (const finding of run.diagnosis.findings) {
      for (const id of finding.signalIds) expect(signalIds.has(id)).toBe(true);
    }
    expect(run.changes.length).toBeGreaterThan(0);
    for (const change of run.changes) expect(['lookup', 'writer']).toContain(change.slotId);
    const proposed = await api(
      'GET',
      `/pipelines/${pipeline.body.id}/configurations/${run.proposedConfigurationId}`,
    );
    expect(proposed).toMatchObject({
      status: 200,
      body: { version: 2, source: 'synthesis', synthesisRunId: run.id },
    });

    // Approve: the proposal becomes active. Roll back: the original is active again.
    expect((await api('POST', `/synthesis-runs/${run.id}/approve`)).body.status).toBe('approved');
    expect((await api('GET', `/pipelines/${pipeline.body.id}`)).body.activeConfigurationId).toBe(
      run.proposedConfigurationId,
    );
    const rollback = await api(
      'POST',
      `/pipelines/${pipeline.body.id}/configurations/${pipeline.body.activeConfigurationId}/activate`,
      {
        reason: 'e2e rollback',
      },
    );
    expect(rollback.body.summary).toBe('Restored version 1 (replacing version 2).');
    expect((await api('GET', `/pipelines/${pipeline.body.id}`)).body.activeConfigurationId).toBe(
      pipeline.body.activeConfigurationId,
    );

    // Ctrl-C stops the API and DynamoDB Local; a second start works.
    expect(await pressCtrlC(child)).toBe(true);
    expect(await portAcceptsConnections(seed.apiUrl)).toBe(false);
    expect(await portAcceptsConnections(seed.dynamodbEndpoint)).toBe(false);

    const second = await startLocalStack();
    const me = await fetch(`${second.seed.apiUrl}/me`, {
      headers: { authorization: `Bearer ${second.seed.teams[0]?.apiToken}` },
    });
    expect(me.status).toBe(200);
    expect(await pressCtrlC(second.child)).toBe(true);
    expect(await portAcceptsConnections(second.seed.dynamodbEndpoint)).toBe(false);
  }, 180_000);
});
