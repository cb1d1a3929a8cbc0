import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, CLI_BIN } from '../../cli/build.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';

/**
 * A team of two people, end to end: the real CLI (a separate process) against a real local stack.
 * An admin invites a colleague by email; the colleague opens the link from the local outbox, is
 * signed in, and proposes a change by hand; under forbidSelfApproval the colleague cannot approve
 * it, and the admin approves it as a rollout.
 */
let stack: LocalStack;
let workDir: string;
let stateDir: string;

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function cli(args: string[], token: string, env: Record<string, string> = {}): Promise<Result> {
  const childEnv: Record<string, string | undefined> = {
    ...process.env,
    LOCAL_STATE_DIR: stateDir,
    PIPELINE_SYNTHESIS_API_URL: stack.apiUrl,
    PIPELINE_SYNTHESIS_API_TOKEN: token,
    ...env,
  };
  delete childEnv.FORCE_COLOR;
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    cwd: workDir,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const result: Result = { code: null, stdout: '', stderr: '' };
  child.stdout.on('data', (chunk) => {
    result.stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    result.stderr += chunk;
  });
  await new Promise<void>((resolve) =>
    child.once('close', (code) => {
      result.code = code;
      resolve();
    }),
  );
  return result;
}

async function post(route: string, body: object, token?: string) {
  const response = await fetch(`${stack.apiUrl}${route}`, {
    method: route.includes('approval-rules') ? 'PUT' : 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field
  return { status: response.status, body: (await response.json()) as any };
}

/** The sign-in link of the newest email to `email`, as the person finds it in the outbox. */
async function linkIn(email: string): Promise<URL> {
  const outbox = path.join(stateDir, 'outbox');
  const file = (await readdir(outbox))
    .sort()
    .filter((name) => name.endsWith(`-${email}.txt`))
    .at(-1);
  if (!file) throw new Error(`no email to ${email}`);
  const text = await readFile(path.join(outbox, file), 'utf8');
  expect(text).toMatch(/invites you to the team/);
  return new URL(/https?:\/\/\S+/.exec(text)?.[0] ?? '');
}

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-team-'));
  stateDir = path.join(workDir, 'state');
  await buildCli();
  stack = await startLocalStack({ port: 0, stateDir, quiet: true, log: () => {} });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await rm(workDir, { recursive: true, force: true });
}, 60_000);

describe('a team of two people', () => {
  it('invites by email, signs the colleague in from the link, and the admin approves their change as a rollout', async () => {
    const [team] = stack.teams;
    if (!team) throw new Error('no seeded team');
    const pipelineId = team.pipelineIds[0] as string;
    const colleague = 'grace.hopper@example.test';

    const invited = await cli(['members', 'invite', colleague, '--role', 'member'], team.apiToken);
    expect(invited.code).toBe(0);
    expect(invited.stdout).toMatch(`Invited ${colleague} to ${team.name} as member`);

    // The colleague opens the link: its page's button posts the token to the verify operation.
    const link = await linkIn(colleague);
    const page = await fetch(link);
    expect(page.status).toBe(200);
    const signedIn = await post('/auth/magic-link/verify', {
      token: link.searchParams.get('token'),
      delivery: 'body',
    });
    expect(signedIn.status).toBe(200);
    const colleagueToken = signedIn.body.accessToken as string;

    const me = await cli(['me'], colleagueToken);
    expect(me.stdout).toMatch(colleague);
    expect(me.stdout).toMatch(new RegExp(`${team.teamId}\\s+${team.name}\\s+member`));
    const listed = await cli(['members', 'list'], team.apiToken);
    expect(listed.stdout).toMatch(new RegExp(`${team.email}\\s+\\S+\\s+admin`));
    expect(listed.stdout).toMatch(new RegExp(`${colleague}\\s+grace.hopper\\s+member`));

    // Another person must approve: the admin says so from a session of their own.
    const adminSession = await post('/auth/login', {
      email: team.email,
      password: team.password,
      delivery: 'body',
    });
    const rules = await post(
      `/pipelines/${pipelineId}/approval-rules`,
      {
        requireEvaluation: false,
        maxRegressions: 0,
        minEvaluatedCases: 0,
        forbidSelfApproval: true,
        allowApiTokens: true,
      },
      adminSession.body.accessToken,
    );
    expect(rules.status).toBe(200);

    await writeFile(
      path.join(workDir, 'changes.json'),
      JSON.stringify({
        note: 'Retrieval times out: give it longer',
        changes: [{ slotId: 'retrieve', description: 'Wait 4 s for retrieval', patch: { timeoutMs: 4000 } }],
      }),
    );
    const proposed = await cli(['propose', pipelineId, '--file', 'changes.json', '--json'], colleagueToken);
    expect(proposed.code).toBe(0);
    const run = JSON.parse(proposed.stdout);
    expect(run).toMatchObject({
      status: 'generated',
      synthesisHandler: 'manual',
      triggeredByName: colleague,
      costUsd: 0,
    });

    const own = await cli(['approve', run.id, '--rollout', '10'], colleagueToken);
    expect(own.code).toBe(2);
    expect(own.stderr).toMatch(/409 CONFLICT/);
    expect(own.stderr).toMatch(/forbidSelfApproval|someone else|another/i);

    const approved = await cli(['approve', run.id, '--rollout', '10', '--json'], team.apiToken);
    expect(approved.code).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({ status: 'approved', rolloutId: expect.any(String) });
    const rollout = await cli(['rollout', 'show', pipelineId, '--json'], team.apiToken);
    expect(JSON.parse(rollout.stdout)).toMatchObject({
      status: 'active',
      percent: 10,
      synthesisRunId: run.id,
    });

    // Removing the colleague ends their session at once.
    const removed = await cli(['members', 'remove', colleague], team.apiToken);
    expect(removed.code).toBe(0);
    expect((await cli(['me'], colleagueToken)).code).toBe(2);
  }, 120_000);

  it('--team picks a seeded team, and refuses a team the credential does not act for, saying why', async () => {
    const [first, second] = stack.teams;
    if (!first || !second) throw new Error('two seeded teams expected');
    const seedEnv = { PIPELINE_SYNTHESIS_API_URL: '', PIPELINE_SYNTHESIS_API_TOKEN: '' };
    const picked = await cli(['--team', second.name, 'members', 'list'], '', seedEnv);
    expect(picked.code).toBe(0);
    expect(picked.stdout).toMatch(second.email);
    expect(picked.stdout).not.toMatch(first.email);
    const other = await cli(['--team', second.teamId, 'members', 'list'], first.apiToken);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/none of your teams/);
  }, 60_000);
});
