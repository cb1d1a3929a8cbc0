import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PIPELINE_DELETER } from '../../lambdas/functions.ts';
import { deletionKey, signalIdKey, signalKey } from '../../lambdas/store/keys.ts';
import { createDocumentClient } from '../../lambdas/wiring/aws.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { waitFor } from '../support/wait.ts';

/**
 * A pipeline's deletion on the real local stack (the job in its own execution environment, fed by
 * the local lifecycle queue), whose environment is ended (SIGKILL) in the middle of the job: the
 * message comes back, the job resumes, and the receipt's counts are still exact.
 */
let stack: LocalStack;
let stateDir: string;

beforeAll(async () => {
  stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-deletion-e2e-'));
  stack = await startLocalStack({
    port: 0,
    stateDir,
    quiet: true,
    log: () => {},
    visibilityTimeoutMs: { [PIPELINE_DELETER.trigger.queue]: 1_500 },
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

// Not stuck but long on a shared machine: at a load of 12 on 2 CPUs, writing the 30,000 signals took
// 53 s and deleting them and their markers (60,000 items, 64 steps of a shard each) 60 s.
describe('deleting a pipeline on the local stack', { timeout: 300_000 }, () => {
  it('keeps exact counts when the job’s environment is ended halfway, and completes', async () => {
    const token = stack.teams[0]?.apiToken as string;
    const call = async (method: string, route: string, body?: unknown) => {
      const response = await fetch(`${stack.apiUrl}${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      // biome-ignore lint/suspicious/noExplicitAny: asserted field by field
      return { status: response.status, body: (await response.json()) as any };
    };
    const created = await call('POST', '/pipelines', {
      name: 'to be deleted',
      slots: [{ id: 'model', name: 'Model', kind: 'model', settings: {} }],
    });
    const pipelineId = created.body.id as string;
    // Written straight to the table (the API takes 100 a request): signals and their id markers.
    const db = createDocumentClient(
      new DynamoDBClient({
        endpoint: stack.dynamodbEndpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
    );
    const total = 30_000;
    const now = Date.now();
    const writes: Promise<unknown>[] = [];
    for (let start = 0; start < total; start += 25) {
      const items = Array.from({ length: Math.min(25, total - start) }, (_, i) => {
        const signal = {
          id: `s${start + i}`,
          pipelineId,
          kind: 'error',
          severity: 'info',
          message: 'x',
          occurredAt: new Date(now - (start + i) * 1000).toISOString(),
        };
        return [{ ...signalKey(signal), ...signal }, { ...signalIdKey(pipelineId, signal.id) }];
      }).flat();
      for (let half = 0; half < items.length; half += 25) {
        const requests = items.slice(half, half + 25).map((Item) => ({ PutRequest: { Item } }));
        writes.push(db.send(new BatchWriteCommand({ RequestItems: { [stack.tables.Data]: requests } })));
      }
      if (writes.length >= 16) await Promise.all(writes.splice(0));
    }
    await Promise.all(writes);

    const deleted = await call('DELETE', `/pipelines/${pipelineId}`);
    expect(deleted.status).toBe(202);
    const receiptOf = async () =>
      (await db.send(new GetCommand({ TableName: stack.tables.Data, Key: deletionKey(deleted.body.id) })))
        .Item;

    // Halfway through the signals, the job's environment ends.
    await waitFor(
      async () => {
        const signals = Number((await receiptOf())?.counts?.signals ?? 0);
        return signals > 0 && signals < total;
      },
      'the deletion job to be halfway through the signals',
      60_000,
      20,
    );
    const deleter = stack.functions.get(PIPELINE_DELETER.entry);
    const pids = deleter?.environmentPids() ?? [];
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    expect(Number((await receiptOf())?.counts?.signals)).toBeLessThan(total);

    await waitFor(
      async () => (await call('GET', `/deletions/${deleted.body.id}`)).body.status === 'completed',
      'the deletion to complete after its environment was ended',
      200_000,
      200,
    );
    const receipt = await call('GET', `/deletions/${deleted.body.id}`);
    expect(receipt.body.counts).toEqual({
      configurations: 1,
      activations: 0,
      rollouts: 0,
      signals: total,
      executions: 0,
      runs: 0,
    });
    expect((await call('GET', `/pipelines/${pipelineId}`)).status).toBe(404);
  });
});
