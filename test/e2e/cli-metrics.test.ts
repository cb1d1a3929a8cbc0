/**
 * `pipeline-synthesis metrics` as a real process against the local stack: three hours recorded at
 * known times through the API become a table with a sparkline per column, per configuration with
 * --by-configuration, the API's answer as it came with --json, and a range past the bucket limit
 * exits 2 naming it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../../cli/build.ts';
import { bucketLabel } from '../../cli/metrics-render.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { runCli } from '../support/cli-process.ts';
import type { Call } from '../support/guarded-rollout.ts';
import { type MetricsHistory, metricsHistory } from '../support/metrics-history.ts';

let stack: LocalStack;
let stateDir: string;
let history: MetricsHistory;

const token = () => stack.teams[0]?.apiToken ?? '';

beforeAll(async () => {
  process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
  stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-cli-metrics-'));
  [stack] = await Promise.all([
    startLocalStack({ port: 0, quiet: true, stateDir, log: () => {} }),
    buildCli(),
  ]);
  const call: Call = async (method, route, body) => {
    const response = await fetch(`${stack.apiUrl}/${route}`, {
      method,
      headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return response.json();
  };
  history = await metricsHistory(call, 'Measured from a terminal');
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

const cli = (args: string[]) =>
  runCli(args, {
    cwd: tmpdir(),
    env: {
      PATH: process.env.PATH,
      PIPELINE_SYNTHESIS_API_URL: stack.apiUrl,
      PIPELINE_SYNTHESIS_API_TOKEN: token(),
    },
  });

describe('the metrics command', { timeout: 120_000 }, () => {
  it('prints a sparkline per column above the recorded hours, and the activation with its person', async () => {
    const shown = await cli(['metrics', history.pipelineId]);
    expect(shown.code, shown.stderr).toBe(0);
    const lines = shown.stdout.split('\n');
    expect(lines).toContain('All executions:');
    // From the hour 24 h ago to the one running now (25): a blank for each hour without executions.
    const rates = lines.find((line) => line.startsWith('failure_rate'));
    expect(rates?.replace(/^failure_rate {2}/, '')).toMatch(/^ {21}[▁-█]{3} $/);
    for (const hour of history.hours) {
      const rate = `${((hour.failed / hour.executions) * 100).toFixed(2)}%`;
      const tokens = hour.executions * hour.tokensPerExecution;
      expect(shown.stdout).toMatch(
        new RegExp(
          `^${bucketLabel(hour.at, 'hour')}\\s+${hour.executions}\\s+${hour.failed}\\s+${rate.replace('.', '\\.')}\\s+\\d+\\s+${tokens}\\s`,
          'm',
        ),
      );
    }
    expect(shown.stdout).toMatch(
      /^Changes:\n {2}\d{4}-\d{2}-\d{2} \d{2}:\d{2} {2}.*version 2.* \(by (?!the system).+\)$/im,
    );
  });

  it('splits the series per configuration, and prints the API answer as it came with --json', async () => {
    const split = await cli(['metrics', history.pipelineId, '--by-configuration']);
    expect(split.code, split.stderr).toBe(0);
    const [first, second] = history.configurations;
    expect(split.stdout).toContain(`Configuration ${first}`);
    expect(split.stdout).toContain(`Configuration ${second} (version 2)`);

    const json = await cli(['metrics', history.pipelineId, '--since', '6h', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const answer = JSON.parse(json.stdout);
    expect(answer.step).toBe('hour');
    expect(answer.series).toHaveLength(1);
    const byHour = new Map(answer.series[0].buckets.map((bucket: { at: string }) => [bucket.at, bucket]));
    for (const hour of history.hours)
      expect(byHour.get(hour.at)).toMatchObject({ executions: hour.executions, failed: hour.failed });
    expect(answer.annotations).toEqual([expect.objectContaining({ configurationId: second, version: 2 })]);
  });

  it('exits 2 naming the limit for more buckets than an answer holds, and 1 for a --since it cannot read', async () => {
    const tooMany = await cli(['metrics', history.pipelineId, '--since', '2d', '--step', 'minute']);
    expect(tooMany.code).toBe(2);
    expect(tooMany.stderr).toMatch(/1,?440/);
    const unreadable = await cli(['metrics', history.pipelineId, '--since', 'yesterday']);
    expect(unreadable.code).toBe(1);
    expect(unreadable.stderr).toContain('--since takes a duration such as 90m, 24h or 7d');
  });
});
