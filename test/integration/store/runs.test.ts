import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { nanoid } from 'nanoid';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunRepository } from '../../../lambdas/core/ports.ts';
import { newPendingRun } from '../../../lambdas/core/run-state.ts';
import type { SynthesisRun } from '../../../lambdas/core/schemas.ts';
import { makePipelineRepository } from '../../../lambdas/store/pipelines.ts';
import { makeRunRepository } from '../../../lambdas/store/runs.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { setUpApiEnvironment } from '../api/harness.ts';

let db: DynamoDBDocumentClient;
let names: TableNames;
let runs: RunRepository;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  runs = makeRunRepository(db, { runs: names.Runs, data: names.Data });
});

function pendingRun(overrides: Partial<SynthesisRun> = {}): SynthesisRun {
  const run = newPendingRun({
    id: nanoid(),
    pipelineId: 'p1',
    teamId: 't1',
    synthesisHandler: 'heuristic-v1',
    baseConfigurationId: 'c1',
    jobId: nanoid(),
    createdAt: new Date().toISOString(),
    triggeredBy: 'u1',
  });
  return { ...run, ...overrides };
}

async function storedPipeline() {
  const pipelines = makePipelineRepository(db, names.Data);
  const pipelineId = nanoid();
  const createdAt = new Date().toISOString();
  await pipelines.createPipeline(
    { id: pipelineId, teamId: 't1', name: 'p', activeConfigurationId: 'c1', createdAt },
    {
      id: 'c1',
      pipelineId,
      version: 1,
      slots: [{ id: 's', name: 's', kind: 'model', settings: {} }],
      source: 'manual',
      createdAt,
      createdBy: 'u1',
    },
  );
  return { pipelines, pipelineId };
}

describe('run repository on DynamoDB Local', () => {
  it('stores one item per run whose attributes are exactly the wire fields', async () => {
    const run = pendingRun();
    await runs.create(run);
    const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
    const { Item } = await db.send(new GetCommand({ TableName: names.Runs, Key: { id: run.id } }));
    expect(Item).toEqual(run);
    await expect(runs.create(run)).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('lets exactly one of two concurrent workers claim a pending run', async () => {
    const run = pendingRun();
    await runs.create(run);
    const now = new Date().toISOString();
    const stale = new Date(Date.now() - 60_000).toISOString();
    const claims = await Promise.all([runs.claim(run.id, now, stale), runs.claim(run.id, now, stale)]);
    expect(claims.map((claim) => claim.outcome).sort()).toEqual(['claimed', 'leased']);
    expect((await runs.get(run.id))?.status).toBe('generating');
  });

  it('re-claims a generating run only once its lease has run out', async () => {
    const run = pendingRun();
    await runs.create(run);
    const t0 = '2026-01-01T00:00:00.000Z';
    expect((await runs.claim(run.id, t0, '2025-12-31T23:58:00.000Z')).outcome).toBe('claimed');
    // lease still fresh: a redelivery two seconds later must not take it, and learns who holds it
    const early = await runs.claim(run.id, '2026-01-01T00:00:02.000Z', '2025-12-31T23:58:02.000Z');
    expect(early).toMatchObject({ outcome: 'leased', run: { generationStartedAt: t0 } });
    // two minutes later the first worker is certainly gone
    const reclaimed = await runs.claim(run.id, '2026-01-01T00:02:01.000Z', '2026-01-01T00:00:01.000Z');
    expect(reclaimed).toMatchObject({
      outcome: 'claimed',
      run: { generationStartedAt: '2026-01-01T00:02:01.000Z' },
    });
  });

  it('completes a run with a new configuration version, and refuses a worker that lost its lease', async () => {
    const { pipelines, pipelineId } = await storedPipeline();
    const run = pendingRun({ pipelineId });
    await runs.create(run);
    const lease = new Date().toISOString();
    const claim = await runs.claim(run.id, lease, new Date(0).toISOString());
    if (claim.outcome !== 'claimed') throw new Error('not claimed');
    const claimed = claim.run;
    const proposal = {
      id: nanoid(),
      pipelineId,
      slots: [{ id: 's', name: 's', kind: 'model', settings: { temperature: 0 } }],
      source: 'synthesis' as const,
      synthesisRunId: run.id,
      createdAt: lease,
      createdBy: 'u1',
    };

    await expect(
      runs.completeGenerated(
        { ...claimed, status: 'generated', proposedConfigurationId: proposal.id },
        proposal,
        'another-lease',
      ),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await pipelines.getConfiguration(pipelineId, proposal.id)).toBeNull(); // nothing half-written

    await runs.completeGenerated(
      { ...claimed, status: 'generated', proposedConfigurationId: proposal.id },
      proposal,
      lease,
    );
    // The number the refused completion took (2) is skipped, never reused: versions are unique.
    expect(await pipelines.getConfiguration(pipelineId, proposal.id)).toMatchObject({
      version: 3,
      source: 'synthesis',
    });
    expect((await runs.get(run.id))?.status).toBe('generated');
  });

  it('fails a run only from the statuses it is asked to, never a finished one', async () => {
    const run = pendingRun();
    await runs.create(run);
    expect(await runs.fail(run.id, 'boom', new Date().toISOString(), ['generating'])).toBeNull();
    const failed = await runs.fail(run.id, 'boom', new Date().toISOString(), ['pending']);
    expect(failed).toMatchObject({ status: 'failed', errorMessage: 'boom' });
    expect(await runs.fail(run.id, 'again', new Date().toISOString(), ['pending', 'generating'])).toBeNull();
    expect(await runs.fail(nanoid(), 'missing', new Date().toISOString(), ['pending'])).toBeNull();
  });

  it('lists a pipeline runs newest first across pages', async () => {
    const pipelineId = nanoid();
    const created = ['2026-01-01T00:00:01.000Z', '2026-01-01T00:00:03.000Z', '2026-01-01T00:00:02.000Z'];
    for (const createdAt of created) await runs.create(pendingRun({ pipelineId, createdAt }));
    const first = await runs.listByPipeline(pipelineId, { limit: 2 });
    const second = await runs.listByPipeline(pipelineId, { limit: 2, cursor: first.nextCursor ?? undefined });
    expect([...first.items, ...second.items].map((run) => run.createdAt)).toEqual([
      '2026-01-01T00:00:03.000Z',
      '2026-01-01T00:00:02.000Z',
      '2026-01-01T00:00:01.000Z',
    ]);
    expect(second.nextCursor).toBeNull();
    await expect(
      runs.listByPipeline('other', { limit: 2, cursor: first.nextCursor ?? undefined }),
    ).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    });
  });
});

describe('pipeline repository on DynamoDB Local', () => {
  it('reads the newest signals with one bounded query, whatever the history size', async () => {
    const { pipelines, pipelineId } = await storedPipeline();
    const signals = Array.from({ length: 60 }, (_, i) => ({
      id: `s${String(i).padStart(3, '0')}`,
      pipelineId,
      kind: 'error',
      severity: 'warning' as const,
      message: `m${i}`,
      occurredAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    }));
    await pipelines.recordSignals(signals.slice(0, 30));
    await pipelines.recordSignals(signals.slice(30));
    const recent = await pipelines.recentSignals(pipelineId, 5);
    expect(recent.map((signal) => signal.id)).toEqual(['s059', 's058', 's057', 's056', 's055']);
  });
});

describe('many runs of one pipeline completing at once', () => {
  it('gives 100 concurrent completions 100 distinct configuration versions, every run generated', async () => {
    const { pipelines, pipelineId } = await storedPipeline();
    const lease = new Date().toISOString();
    const claimed = await Promise.all(
      Array.from({ length: 100 }, async () => {
        const run = pendingRun({ pipelineId });
        await runs.create(run);
        const claim = await runs.claim(run.id, lease, new Date(0).toISOString());
        if (claim.outcome !== 'claimed') throw new Error('not claimed');
        return claim.run;
      }),
    );

    const completed = await Promise.allSettled(
      claimed.map((run) => {
        const proposal = {
          id: nanoid(),
          pipelineId,
          slots: [{ id: 's', name: 's', kind: 'model', settings: { temperature: 0.1 } }],
          source: 'synthesis' as const,
          synthesisRunId: run.id,
          createdAt: lease,
          createdBy: 'u1',
        };
        return runs
          .completeGenerated(
            { ...run, status: 'generated', proposedConfigurationId: proposal.id },
            proposal,
            lease,
          )
          .then(() => proposal.id);
      }),
    );

    expect(completed.filter((result) => result.status === 'rejected')).toEqual([]);
    const ids = completed.map((result) => (result as PromiseFulfilledResult<string>).value);
    const versions = await Promise.all(
      ids.map(async (id) => (await pipelines.getConfiguration(pipelineId, id))?.version),
    );
    expect(new Set(versions).size).toBe(100);
    expect(Math.min(...(versions as number[]))).toBe(2);
    for (const run of claimed) expect((await runs.get(run.id))?.status).toBe('generated');
  });
});

describe('what the sweeper sees', () => {
  it('lists runs of one status created before a bound with a Query on the status index', async () => {
    const old = pendingRun({ createdAt: '2001-01-01T00:00:00.000Z' });
    const fresh = pendingRun({ createdAt: '2001-01-01T02:00:00.000Z' });
    const oldGenerating = pendingRun({ createdAt: '2001-01-01T00:30:00.000Z', status: 'generating' });
    for (const run of [old, fresh, oldGenerating]) await runs.create(run);

    const pending = await runs.listStale('pending', '2001-01-01T01:00:00.000Z', 100);
    const generating = await runs.listStale('generating', '2001-01-01T01:00:00.000Z', 100);

    expect(pending.map((run) => run.id)).toEqual([old.id]);
    expect(generating.map((run) => run.id)).toEqual([oldGenerating.id]);
  });
});
