import { spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, CLI_BIN } from '../../cli/build.ts';
import { createPipelineSynthesisClient, type SynthesisRun } from '../../cli/client.ts';
import { EVENT_TYPES } from '../../lambdas/core/event-types.ts';
import { REPO_ROOT } from '../../lib/bundling.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { type AnthropicFake, hang, startAnthropicFake, unauthorized } from '../support/anthropic-fake.ts';
import { waitFor } from '../support/wait.ts';

/**
 * The real `pipeline-synthesis` bin (built by esbuild, run by node as a separate process) against
 * a real local stack on a free port with its own state directory; claude-v1 talks to the local
 * Anthropic fake so a run can be made to fail or to hang.
 */
let stack: LocalStack;
let fake: AnthropicFake;
let workDir: string;
let stateDir: string;

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface CliOptions {
  env?: Record<string, string>;
  /** Without the URL and token variables: the CLI must find the seed file. */
  seed?: boolean;
  /** Called once the process runs, e.g. to press Ctrl-C. */
  whileRunning?: (child: ReturnType<typeof spawn>, output: () => Result) => Promise<void>;
}

async function cli(args: string[], options: CliOptions = {}): Promise<Result> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    LOCAL_STATE_DIR: stateDir,
    ...options.env,
  };
  delete env.PIPELINE_SYNTHESIS_API_URL;
  delete env.PIPELINE_SYNTHESIS_API_TOKEN;
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  if (!options.seed) {
    env.PIPELINE_SYNTHESIS_API_URL = stack.apiUrl;
    env.PIPELINE_SYNTHESIS_API_TOKEN = stack.teams[0]?.apiToken;
  }
  Object.assign(env, options.env);
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    cwd: workDir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const result: Result = { code: null, stdout: '', stderr: '' };
  child.stdout.on('data', (chunk) => {
    result.stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    result.stderr += chunk;
  });
  const exited = new Promise<void>((resolve) =>
    child.once('close', (code) => {
      result.code = code;
      resolve();
    }),
  );
  await options.whileRunning?.(child, () => result);
  await exited;
  return result;
}

const noStackTrace = (result: Result) => expect(result.stderr).not.toMatch(/\n\s+at /);
const json = <T>(text: string) => JSON.parse(text) as T;
const client = () =>
  createPipelineSynthesisClient({ baseUrl: stack.apiUrl, token: stack.teams[0]?.apiToken as string });

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-cli-'));
  stateDir = path.join(workDir, 'state');
  const [, started] = await Promise.all([buildCli(), startAnthropicFake()]);
  fake = started;
  // The worker takes its model settings from the developer's environment, as with `npm start`.
  Object.assign(process.env, {
    ANTHROPIC_API_KEY: 'fake-key',
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_MAX_RETRIES: '0',
  });
  stack = await startLocalStack({ port: 0, stateDir, quiet: true, log: () => {} });
}, 120_000);

afterAll(async () => {
  for (const name of ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'ANTHROPIC_MAX_RETRIES'])
    delete process.env[name];
  await fake?.close();
  await stack?.stop();
  await rm(workDir, { recursive: true, force: true });
}, 60_000);

describe('pipeline-synthesis, the CLI', () => {
  it("runs the README's script on the files in examples/ (heuristic-v1: this file's model is a fake)", async () => {
    await cp(path.join(REPO_ROOT, 'examples'), path.join(workDir, 'examples'), { recursive: true });
    const readme = await readFile(path.join(REPO_ROOT, 'README.md'), 'utf8');
    // The commands of the README's first CLI example, without their comments.
    const script = /```sh\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('### The CLI')))?.[1] ?? '';
    const command = (start: string) => {
      const line =
        script.split('\n').find((candidate) => candidate.includes(`pipeline-synthesis ${start}`)) ?? '';
      const words =
        line
          .replace(/\s+#.*$/, '')
          .split('pipeline-synthesis ')[1]
          ?.split(' | ')[0]
          ?.replace(/\)$/, '') ?? '';
      return words.split(/\s+/).filter((word) => word.length > 0);
    };
    const created = await cli(command('pipelines create'));
    expect(created.code, created.stderr).toBe(0);
    const pipelineId = json<{ id: string }>(created.stdout).id;
    const withPipeline = (args: string[]) => args.map((arg) => (arg === '"$P"' ? pipelineId : arg));
    const signals = await cli(withPipeline(command('signals add')));
    expect(signals, signals.stderr).toMatchObject({ code: 0, stdout: 'Recorded 12 signals in 1 batch.\n' });
    const executions = await cli(withPipeline(command('executions add')));
    expect(executions, executions.stderr).toMatchObject({
      code: 0,
      stdout: 'Recorded 12 executions in 1 batch.\n',
    });
    const synthesized = await cli(withPipeline(command('synthesize')).concat(['--handler', 'heuristic-v1']));
    expect(synthesized.code, synthesized.stderr).toBe(0);
    const run = json<SynthesisRun>(synthesized.stdout);
    expect(run.status).toBe('generated');
    expect(run.changes.map((change) => [change.slotId, Object.keys(change.patch as object)])).toContainEqual([
      'retrieve',
      ['timeoutMs'],
    ]);
    const withRun = (args: string[]) => args.map((arg) => (arg === '"$RUN"' ? run.id : arg));
    const diff = await cli(withRun(command('runs diff')));
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain('timeoutMs');
    const approved = await cli(withRun(command('approve')));
    expect(approved.code, approved.stderr).toBe(0);
  });

  it('runs a whole script: create, add signals and executions from files, synthesize --wait, diff, approve', async () => {
    await writeFile(
      path.join(workDir, 'pipeline.json'),
      JSON.stringify({
        name: 'CLI pipeline',
        slots: [
          { id: 'retrieve', name: 'Retrieve', kind: 'retrieval', settings: { topK: 8, timeoutMs: 1000 } },
          { id: 'model', name: 'Model', kind: 'model', settings: { model: 'm', maxTokens: 256 } },
        ],
      }),
    );
    const signals = Array.from({ length: 150 }, (_, i) => ({
      kind: 'timeout',
      severity: 'critical',
      message: `Retrieval timed out (${i})`,
      slotId: 'retrieve',
    }));
    await writeFile(path.join(workDir, 'signals.ndjson'), signals.map((s) => JSON.stringify(s)).join('\n'));
    const executions = Array.from({ length: 3 }, () => ({
      status: 'failed',
      durationMs: 1000,
      error: 'timeout',
      slotResults: [{ slotId: 'retrieve', status: 'failed', durationMs: 1000, error: 'timeout' }],
    }));
    await writeFile(path.join(workDir, 'executions.json'), JSON.stringify(executions));

    const created = await cli(['pipelines', 'create', '--file', 'pipeline.json', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const pipeline = json<{ id: string; activeConfigurationId: string }>(created.stdout);

    const added = await cli(['signals', 'add', pipeline.id, '--file', 'signals.ndjson', '--json']);
    expect(added.code, added.stderr).toBe(0);
    const answers = added.stdout
      .trim()
      .split('\n')
      .map((line) => json<{ signals: unknown[] }>(line));
    expect(answers.map((answer) => answer.signals.length)).toEqual([100, 50]);

    const recorded = await cli(['executions', 'add', pipeline.id, '--file', 'executions.json']);
    expect(recorded).toMatchObject({ code: 0, stdout: 'Recorded 3 executions in 1 batch.\n' });

    const synthesized = await cli([
      'synthesize',
      pipeline.id,
      '--handler',
      'heuristic-v1',
      '--wait',
      '--json',
    ]);
    expect(synthesized.code, synthesized.stderr).toBe(0);
    const run = json<SynthesisRun>(synthesized.stdout);
    expect(run.status).toBe('generated');
    // --json is the API's answer byte for byte.
    const direct = await fetch(`${stack.apiUrl}/synthesis-runs/${run.id}`, {
      headers: { authorization: `Bearer ${stack.teams[0]?.apiToken}` },
    });
    expect(synthesized.stdout).toBe(`${await direct.text()}\n`);

    const diff = await cli(['runs', 'diff', run.id]);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain('- timeoutMs: 1000');
    expect(diff.stdout).toMatch(/\+ timeoutMs: \d+/);
    expect(diff.stdout).not.toContain('\u001b['); // stdout is a pipe: no colour

    const approved = await cli(['approve', run.id]);
    expect(approved.code, approved.stderr).toBe(0);
    const shown = await cli(['pipelines', 'show', pipeline.id, '--json']);
    expect(json<{ activeConfigurationId: string }>(shown.stdout).activeConfigurationId).toBe(
      run.proposedConfigurationId,
    );
    const listed = await cli(['runs', 'list', pipeline.id, '--status', 'approved']);
    expect(listed.stdout).toContain(run.id);
  });

  it('approves some changes as a rollout, shows and serves it, rolls it back, and shows the effect', async () => {
    const api = client();
    const { data: pipeline } = await api.POST('/pipelines', {
      body: {
        name: 'CLI rollout',
        slots: [
          { id: 'retrieve', name: 'Retrieve', kind: 'retrieval', settings: { topK: 8, timeoutMs: 1000 } },
          { id: 'model', name: 'Model', kind: 'model', settings: { model: 'm', maxTokens: 256 } },
        ],
      },
    });
    const pipelineId = pipeline?.id as string;
    const signals = [
      ...Array.from({ length: 4 }, (_, i) => ({
        kind: 'timeout',
        severity: 'critical' as const,
        message: `Retrieval timed out (${i})`,
        slotId: 'retrieve',
      })),
      ...Array.from({ length: 4 }, () => ({
        kind: 'truncation',
        severity: 'warning' as const,
        message: 'Answer truncated: stop_reason max_tokens',
        slotId: 'model',
      })),
    ];
    await api.POST('/pipelines/{pipelineId}/signals', {
      params: { path: { pipelineId } },
      body: { signals },
    });
    const synthesized = await cli([
      'synthesize',
      pipelineId,
      '--handler',
      'heuristic-v1',
      '--wait',
      '--json',
    ]);
    const run = json<SynthesisRun>(synthesized.stdout);
    const modelChange = run.changes.find((change) => change.slotId === 'model')?.id as string;

    const approved = await cli([
      'approve',
      run.id,
      '--changes',
      modelChange,
      '--rollout',
      '10',
      '--auto-promote',
    ]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain('10 % of traffic');

    const shown = await cli(['rollout', 'show', pipelineId]);
    expect(shown.stdout).toMatch(/status:\s+active/);
    expect(shown.stdout).toMatch(/autoPromote:\s+true/);
    const served = await cli(['serve', pipelineId, '--routing-key', 'user-1', '--json']);
    expect(served.code, served.stderr).toBe(0);
    const arm = json<{ arm: string }>(served.stdout).arm;
    expect(['active', 'candidate']).toContain(arm);
    // In words, the arms are the base and the candidate everywhere (the JSON keeps its `active`).
    const said = await cli(['serve', pipelineId, '--routing-key', 'user-1']);
    expect(said.stdout).toContain(`arm: ${arm === 'active' ? 'base' : 'candidate'} (rollout `);

    const rolledBack = await cli(['rollout', 'rollback', pipelineId, '--reason', 'not now']);
    expect(rolledBack.stdout).toMatch(/status:\s+rolled_back/);
    const again = await cli(['rollout', 'rollback', pipelineId]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('no active rollout');

    const effect = await cli(['runs', 'effect', run.id]);
    expect(effect.code, effect.stderr).toBe(0);
    expect(effect.stdout).toContain('verdict: not enough data');
    expect(effect.stdout).toMatch(/^base\s+\S+: /m);
    expect(effect.stdout).toMatch(/^candidate\s+\S+: /m);
    expect((await cli(['approve', run.id, '--rollout', '100'])).code).toBe(1);
  });

  it('colours the diff like git diff on request, and never with NO_COLOR', async () => {
    const pipelineId = stack.teams[0]?.pipelineIds[0] as string;
    const synthesized = await cli([
      'synthesize',
      pipelineId,
      '--handler',
      'heuristic-v1',
      '--wait',
      '--json',
    ]);
    const run = json<SynthesisRun>(synthesized.stdout);
    const coloured = await cli(['runs', 'diff', run.id], { env: { FORCE_COLOR: '1' } });
    expect(coloured.stdout).toContain('\u001b[31m- ');
    expect(coloured.stdout).toContain('\u001b[32m+ ');
    const plain = await cli(['runs', 'diff', run.id], { env: { FORCE_COLOR: '1', NO_COLOR: '1' } });
    expect(plain.stdout).not.toContain('\u001b[');
  });

  it('uses the local stack from the seed file when nothing is configured, and says so on stderr', async () => {
    const me = await cli(['me', '--json'], { seed: true });
    expect(me.code, me.stderr).toBe(0);
    expect(me.stderr).toContain(`Using the local stack at ${stack.apiUrl}`);
    expect(json<{ authentication: { teamId: string } }>(me.stdout).authentication.teamId).toBe(
      stack.teams[0]?.teamId,
    );
  });

  it('exits 1 on a usage error, an unreadable file or an unreachable API, without a stack trace', async () => {
    const unknown = await cli(['frobnicate']);
    expect(unknown.code, unknown.stderr).toBe(1);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
    const missing = await cli(['signals', 'add', 'p1', '--file', 'no-such-file.json']);
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(missing.stderr).toContain('Cannot read no-such-file.json');
    const unreachable = await cli(['me'], {
      env: { PIPELINE_SYNTHESIS_API_URL: `http://127.0.0.1:${await closedPort()}` },
    });
    expect(unreachable.code, unreachable.stderr).toBe(1);
    expect(unreachable.stderr).toContain('Could not reach the API');
    for (const result of [unknown, missing, unreachable]) noStackTrace(result);
  });

  it("exits 2 on an API error and prints the API's {error, message} to stderr", async () => {
    const notFound = await cli(['runs', 'show', 'AAAAAAAAAAAAAAAAAAAAA', '--json']);
    expect(notFound).toMatchObject({ code: 2, stdout: '' });
    expect(notFound.stderr).toMatch(/^error: 404 NOT_FOUND: .+/);
    const refused = await cli(['me'], { env: { PIPELINE_SYNTHESIS_API_TOKEN: 'not-a-token' } });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain('401 UNAUTHORIZED');
    noStackTrace(notFound);
  });

  it('exits 3 when the awaited run fails, with its reason', async () => {
    fake.script(unauthorized());
    const pipelineId = stack.teams[0]?.pipelineIds[0] as string;
    const result = await cli(['synthesize', pipelineId, '--handler', 'claude-v1', '--wait', '--json']);
    expect(result.code, result.stderr).toBe(3);
    expect(json<SynthesisRun>(result.stdout).status).toBe('failed');
    // Its cost was estimated before it started, from the prompt claude-v1 would send.
    expect(json<SynthesisRun>(result.stdout).estimatedCostUsd).toBeGreaterThan(0);
    expect(result.stderr).toMatch(/Run \S+ failed: .+/);
  });

  it('exits 4 when --timeout passes, and the run goes on', async () => {
    const pipelineId = stack.teams[0]?.pipelineIds[0] as string;
    const result = await cli([
      'synthesize',
      pipelineId,
      '--handler',
      'heuristic-v1',
      '--wait',
      '--timeout',
      '0',
    ]);
    expect(result.code, result.stderr).toBe(4);
    expect(result.stderr).toMatch(/is still (pending|generating) after 0 s; it goes on/);
    const runId = /Run (\S+) is still/.exec(result.stderr)?.[1] as string;
    await waitFor(async () => {
      const { data } = await client().GET('/synthesis-runs/{id}', { params: { path: { id: runId } } });
      return data?.status === 'generated';
    }, 'the run to be generated');
  });

  it('stops waiting on Ctrl-C (exit 130) and leaves the run as it was', async () => {
    fake.reset();
    fake.script(hang());
    const pipelineId = stack.teams[0]?.pipelineIds[0] as string;
    const result = await cli(['synthesize', pipelineId, '--handler', 'claude-v1', '--wait'], {
      whileRunning: async (child) => {
        await waitFor(() => fake.requests.length > 0, 'the model call to start', 20_000);
        child.kill('SIGINT');
      },
    });
    expect(result.code, result.stderr).toBe(130);
    const runId = /Stopped waiting; run (\S+) \((pending|generating)\) goes on/.exec(
      result.stderr,
    )?.[1] as string;
    expect(runId, result.stderr).toBeDefined();
    const { data } = await client().GET('/synthesis-runs/{id}', { params: { path: { id: runId } } });
    expect(data?.status).toBe('generating');
  });

  it('adds, lists and removes webhooks, shows their deliveries and reads the audit log', async () => {
    const added = await cli([
      'webhooks',
      'add',
      'http://127.0.0.1:9/hook',
      '--events',
      'webhook.created',
      '--description',
      'ci',
    ]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toMatch(/whsec_[A-Za-z0-9+/]+=*/);
    expect(added.stdout).toContain('shown only this once');
    const asJson = await cli(['webhooks', 'add', 'http://127.0.0.1:9/other', '--json']);
    const other = JSON.parse(asJson.stdout) as { id: string; secret: string };
    expect(other.secret.startsWith('whsec_')).toBe(true);
    const id = other.id;
    // Every type listed one by one: those, not the types a later release adds.
    const listedAll = await cli([
      'webhooks',
      'add',
      'http://127.0.0.1:9/each',
      '--events',
      EVENT_TYPES.join(','),
    ]);
    expect(listedAll.code, listedAll.stderr).toBe(0);

    const listed = await cli(['webhooks', 'list', '--json']);
    expect(JSON.parse(listed.stdout).items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ url: 'http://127.0.0.1:9/hook', description: 'ci' }),
        expect.objectContaining({ id, url: 'http://127.0.0.1:9/other' }),
      ]),
    );
    expect(listed.stdout).not.toContain('whsec_');
    expect((await cli(['webhooks', 'deliveries', id])).code).toBe(0);

    // Readable at 100 columns: the event types summarised, not one 300-character cell.
    const readable = await cli(['webhooks', 'list']);
    expect(readable.code, readable.stderr).toBe(0);
    const rows = readable.stdout.trimEnd().split('\n');
    expect(Math.max(...rows.map((row) => row.length))).toBeLessThanOrEqual(100);
    // Created without a list: every type, those added later too; each listed: so many of today's.
    expect(rows.find((row) => row.includes(id))).toMatch(/\sall\s/);
    expect(rows.find((row) => row.includes('/each '))).toMatch(
      new RegExp(`${EVENT_TYPES.length} of ${EVENT_TYPES.length}`),
    );
    expect(rows.find((row) => row.includes('/hook '))).toMatch(/webhook\.created/);
    // The audit log names who acted: the API token's name, never only its id.
    const people = await cli(['audit', '--type', 'webhook.created']);
    const named = await cli(['audit', '--type', 'webhook.created', '--json', '--limit', '1']);
    const actor = JSON.parse(named.stdout).items[0].data.actor as { name: string | null };
    expect(actor.name).toEqual(expect.any(String));
    // The person and the token they acted through.
    expect(actor.name).toMatch(/ \(API token "[^"]+"\)$/);
    expect(people.stdout).toContain(actor.name);
    expect(people.stdout).not.toMatch(/\bapi_token\b/);

    const audit = await cli(['audit', '--type', 'webhook.created', '--json']);
    expect(
      JSON.parse(audit.stdout).items.map((event: { data: { webhookId: string } }) => event.data.webhookId),
    ).toContain(id);

    expect((await cli(['webhooks', 'add', 'https://10.0.0.1/hook'])).code).toBe(2);
    const removed = await cli(['webhooks', 'remove', id]);
    expect(removed.stdout).toContain(`Deleted webhook ${id}`);
    expect((await cli(['webhooks', 'remove', id])).code).toBe(2);
  });

  it('deletes a pipeline only when told so: --yes from a script, and prints the receipt', async () => {
    await cp(path.join(REPO_ROOT, 'examples'), path.join(workDir, 'examples'), { recursive: true });
    const created = await cli(['pipelines', 'create', '--file', 'examples/pipeline.json', '--json']);
    const pipelineId = json<{ id: string }>(created.stdout).id;
    // Without a terminal to type the name on, and without --yes, nothing is deleted.
    const refused = await cli(['pipelines', 'delete', pipelineId]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/pass --yes/);
    expect((await cli(['pipelines', 'show', pipelineId])).code).toBe(0);

    const deleted = await cli(['pipelines', 'delete', pipelineId, '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toMatch(/receipt: +\S+/);
    expect((await cli(['pipelines', 'show', pipelineId])).code).toBe(2);
    const again = await cli(['pipelines', 'delete', pipelineId, '--yes', '--json']);
    expect(again.code).toBe(2);
  });

  it('has a --help for every command, exiting 0', async () => {
    const commands = [
      [],
      ['me'],
      ['pipelines', 'list'],
      ['pipelines', 'show'],
      ['pipelines', 'create'],
      ['signals', 'add'],
      ['executions', 'add'],
      ['synthesize'],
      ['runs', 'list'],
      ['runs', 'show'],
      ['runs', 'diff'],
      ['approve'],
      ['reject'],
      ['activate'],
      ['runs', 'effect'],
      ['rollout', 'show'],
      ['rollout', 'promote'],
      ['rollout', 'rollback'],
      ['serve'],
      ['tokens', 'list'],
      ['tokens', 'create'],
      ['tokens', 'revoke'],
      ['openapi'],
    ];
    const results = await Promise.all(commands.map((command) => cli([...command, '--help'])));
    for (const [index, result] of results.entries()) {
      expect(result.code, commands[index]?.join(' ')).toBe(0);
      expect(result.stdout).toContain(`Usage: pipeline-synthesis ${commands[index]?.join(' ')}`.trimEnd());
    }
  });

  it('the typed client reads runs and reports API errors as their {error, message} body', async () => {
    const api = client();
    const me = await api.GET('/me');
    expect(me.data?.teams.map((team) => team.id)).toContain(stack.teams[0]?.teamId);
    const missing = await api.GET('/synthesis-runs/{id}', {
      params: { path: { id: 'AAAAAAAAAAAAAAAAAAAAA' } },
    });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.error).toBe('NOT_FOUND');
  });

  it('exports a pipeline as NDJSON into a file, following the pages, with progress on stderr', async () => {
    const api = client();
    const created = await api.POST('/pipelines', {
      body: { name: 'export me', slots: [{ id: 'model', name: 'Model', kind: 'model', settings: {} }] },
    });
    const pipelineId = created.data?.id as string;
    await api.POST('/pipelines/{pipelineId}/signals', {
      params: { path: { pipelineId } },
      body: { signals: [{ kind: 'timeout', severity: 'critical', message: 'slow' }] },
    });
    const result = await cli(['export', pipelineId, '--output', 'export.ndjson']);
    expect(result.code, result.stderr).toBe(0);
    // The pipeline, its configuration, the signal, and the hour of the signal in the series.
    expect(result.stderr).toMatch(/exported 4 records in 1 page/);
    const lines = (await readFile(path.join(workDir, 'export.ndjson'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; record: { id: string } });
    expect(lines.map((line) => line.type)).toEqual(['pipeline', 'configuration', 'signal', 'series_hour']);
    expect(lines[0]?.record).toEqual(created.data);

    const missing = await cli(['export', 'no-such-pipeline']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/404 NOT_FOUND/);
    noStackTrace(missing);
  });
});
