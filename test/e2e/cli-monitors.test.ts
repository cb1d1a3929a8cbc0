/**
 * `pipeline-synthesis monitors create|list|delete` as a real process (the bin built by esbuild, run
 * by node) against a local stack: what it creates the API holds, the table shows each monitor's
 * state, --json passes the API's answer through, and refusals exit with their code and words.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../../cli/build.ts';
import { DEMO_SLOTS } from '../../local/seed.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { runCli } from '../support/cli-process.ts';
import { type Api, apiOf } from '../support/rollout-traffic.ts';

let stack: LocalStack;
let api: Api;
let workDir: string;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-cli-monitors-'));
  await buildCli();
  stack = await startLocalStack({
    port: 0,
    stateDir: path.join(workDir, 'state'),
    quiet: true,
    log: () => {},
  });
  api = apiOf(stack);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await rm(workDir, { recursive: true, force: true });
}, 60_000);

const cli = (args: string[]) =>
  runCli(args, {
    cwd: workDir,
    env: {
      ...process.env,
      PIPELINE_SYNTHESIS_API_URL: stack.apiUrl,
      PIPELINE_SYNTHESIS_API_TOKEN: stack.teams[0]?.apiToken,
    },
  });

describe('pipeline-synthesis monitors', { timeout: 120_000 }, () => {
  it('creates, lists and deletes a monitor, and exits 1 or 2 with the reason when refused', async () => {
    const pipeline = (await api('POST', '/pipelines', { name: 'watched', slots: DEMO_SLOTS })).body;

    const created = await cli([
      '--json',
      'monitors',
      'create',
      pipeline.id,
      '--name',
      'Slow answers',
      '--metric',
      'duration_p95',
      '--comparator',
      'above',
      '--threshold',
      '2000',
      '--window',
      '30',
      '--min-executions',
      '10',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const monitor = JSON.parse(created.stdout);
    expect(monitor).toMatchObject({
      name: 'Slow answers',
      metric: 'duration_p95',
      windowMinutes: 30,
      state: 'no_data',
    });
    expect((await api('GET', `/pipelines/${pipeline.id}/monitors/${monitor.id}`)).body.minExecutions).toBe(
      10,
    );

    const listed = await cli(['monitors', 'list', pipeline.id]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(monitor.id);
    expect(listed.stdout).toMatch(/Slow answers\s+no_data/);
    expect(listed.stdout).toContain('duration_p95 above 2000 over 30 min');
    const json = await cli(['--json', 'monitors', 'list', pipeline.id]);
    expect(JSON.parse(json.stdout)).toEqual((await api('GET', `/pipelines/${pipeline.id}/monitors`)).body);

    // A flag the CLI can check is refused before anything is sent; the API's refusal is exit 2 with its words.
    const badMetric = await cli([
      'monitors',
      'create',
      pipeline.id,
      '--name',
      'x',
      '--metric',
      'latency',
      '--comparator',
      'above',
      '--threshold',
      '1',
      '--window',
      '5',
    ]);
    expect(badMetric.code).toBe(1);
    expect(badMetric.stderr).toContain('--metric must be one of');
    const noKind = await cli([
      'monitors',
      'create',
      pipeline.id,
      '--name',
      'x',
      '--metric',
      'signal_mean',
      '--comparator',
      'below',
      '--threshold',
      '0.5',
      '--window',
      '5',
    ]);
    expect(noKind.code).toBe(2);
    expect(noKind.stderr).toContain('kind is required with metric signal_mean');
    expect((await api('GET', `/pipelines/${pipeline.id}/monitors`)).body.items).toHaveLength(1);

    const deleted = await cli(['monitors', 'delete', pipeline.id, monitor.id]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toContain(`Deleted monitor ${monitor.id}.`);
    expect((await api('GET', `/pipelines/${pipeline.id}/monitors`)).body.items).toEqual([]);
    const again = await cli(['monitors', 'delete', pipeline.id, monitor.id]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('does not exist');
  });
});
