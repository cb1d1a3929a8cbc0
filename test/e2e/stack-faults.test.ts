import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.ts';
import { type AnthropicFake, overloaded, unauthorized } from '../support/anthropic-fake.ts';
import { type StackWithModelFake, startStackWithModelFake } from '../support/stack-with-model-fake.ts';
import { waitFor } from '../support/wait.ts';

/**
 * Runs through the real local stack (functions in their own environments, the local queue with
 * its ChangeMessageVisibility, the Anthropic fake as the model API): what a user sees when runs
 * meet faults and contention.
 */
describe('the local stack under faults and contention', () => {
  let stack: LocalStack;
  let fake: AnthropicFake;
  const lines: string[] = [];
  // biome-ignore lint/suspicious/noExplicitAny: API bodies are asserted field by field
  let call: (method: string, route: string, body?: unknown) => Promise<{ status: number; body: any }>;

  let running: StackWithModelFake;

  beforeAll(async () => {
    running = await startStackWithModelFake({
      name: 'stack-faults',
      log: (line) => lines.push(line),
      // 30 runs polled every 100 ms from one token is more than its 50 requests a second.
      limits: { requestsPerSecondPerCredential: 10_000, burstPerCredential: 10_000 },
    });
    ({ stack, fake } = running);
    const token = stack.teams[0]?.apiToken as string;
    call = async (method, route, body) => {
      const response = await fetch(`${stack.apiUrl}${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: await response.json() };
    };
  });
  afterAll(async () => {
    await running?.stop();
  });

  const pipelineId = () => stack.teams[0]?.pipelineIds[0] as string;
  async function until(runId: string, statuses: string[]) {
    // biome-ignore lint/suspicious/noExplicitAny: API bodies are asserted field by field
    let run: any;
    await waitFor(
      async () => {
        run = (await call('GET', `/synthesis-runs/${runId}`)).body;
        return statuses.includes(run.status);
      },
      `run ${runId} to be ${statuses.join(' or ')}`,
      30_000,
      100,
    );
    return run;
  }

  it('fails a run at once on a permanent model error: one call, one ERROR line naming the run', async () => {
    fake.reset();
    fake.script(unauthorized());
    const started = await call('POST', `/pipelines/${pipelineId()}/synthesize`, {
      synthesisHandler: 'claude-v1',
    });

    const run = await until(started.body.id, ['failed', 'generated']);

    expect(run.status).toBe('failed');
    expect(run.errorMessage).toMatch(/401|API key|authentication/i);
    expect(fake.requests).toHaveLength(1);
    await waitFor(
      () => lines.some((line) => line.includes(started.body.id) && line.includes('"ERROR"')),
      'the log',
    );
    const logged = lines.filter((line) => line.includes(started.body.id) && line.includes('"level":"ERROR"'));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/^\[local-process-synthesis-jobs\] /);
  });

  it('retries a transient model error after seconds, not the 720 s visibility timeout, then generates', async () => {
    fake.reset();
    fake.script(overloaded());
    const started = await call('POST', `/pipelines/${pipelineId()}/synthesize`, {
      synthesisHandler: 'claude-v1',
    });

    // While the job waits out its backoff, the run is pending and says why.
    let waiting: { status: string; retryReason: string | null } | undefined;
    await waitFor(
      async () => {
        waiting = (await call('GET', `/synthesis-runs/${started.body.id}`)).body;
        return (
          waiting?.retryReason != null || waiting?.status === 'generated' || waiting?.status === 'failed'
        );
      },
      'the retry',
      30_000,
      100,
    );
    const run = await until(started.body.id, ['generated', 'failed']);

    expect(run.status).toBe('generated');
    expect(fake.requests).toHaveLength(2);
    // Within `until`'s 30 s: the first backoff is 5 s ± 20 %, not the queue's 720 s.
    expect(waiting).toMatchObject({
      status: 'pending',
      retryReason: expect.stringMatching(/overloaded|529/i),
    });
  });

  it('generates every one of 30 parallel starts on one pipeline, each proposal with its own version', async () => {
    const starts = await Promise.all(
      Array.from({ length: 30 }, () =>
        call('POST', `/pipelines/${pipelineId()}/synthesize`, { synthesisHandler: 'heuristic-v1' }),
      ),
    );
    expect(starts.map((start) => start.status)).toEqual(starts.map(() => 202));

    const runs = await Promise.all(starts.map((start) => until(start.body.id, ['generated', 'failed'])));
    const versions = await Promise.all(
      runs.map(
        async (run) =>
          (await call('GET', `/pipelines/${pipelineId()}/configurations/${run.proposedConfigurationId}`)).body
            .version,
      ),
    );

    expect(runs.map((run) => run.status)).toEqual(runs.map(() => 'generated'));
    expect(new Set(versions).size).toBe(30);
  });
});
