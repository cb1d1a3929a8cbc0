import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { nanoid } from 'nanoid';
import { beforeAll, describe, expect, it } from 'vitest';
import { runEvent, SYSTEM_ACTOR } from '../../../lambdas/core/events.ts';
import { RETENTION_DAYS } from '../../../lambdas/core/lifecycle.ts';
import type { ApprovalPlan } from '../../../lambdas/core/ports/review.ts';
import type { RunRepository } from '../../../lambdas/core/ports/runs.ts';
import { newPendingRun } from '../../../lambdas/core/run-state.ts';
import type { Activation } from '../../../lambdas/core/schemas/pipelines.ts';
import type { SynthesisRun } from '../../../lambdas/core/schemas/runs.ts';
import { makePipelineRepository } from '../../../lambdas/store/pipelines.ts';
import { makeRunRepository } from '../../../lambdas/store/runs.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { setUpApiEnvironment } from '../api/harness.ts';

/** The lower bound of a read of every record (no record is dated before 2000). */
const WHOLE_HISTORY = '2000-01-01T00:00:00.000Z';

let db: DynamoDBDocumentClient;
let names: TableNames;
let runs: RunRepository;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  runs = makeRunRepository(db, { runs: names.Runs, data: names.Data, events: names.Events });
});

const at = () => new Date().toISOString();
const failedEvent = (id: string) =>
  runEvent({ id, teamId: 't1', pipelineId: 'p1' }, 'failed', at(), SYSTEM_ACTOR);
const generatedEvent = (run: SynthesisRun) => runEvent(run, 'generated', at(), SYSTEM_ACTOR);
const rejectedEvent = (run: SynthesisRun) => runEvent(run, 'rejected', at(), REVIEWER);
const approvedEvents = (run: SynthesisRun) => [runEvent(run, 'approved', at(), REVIEWER)];
const REVIEWER = { userId: 'u2', credential: 'session' } as const;

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
  const pipelines = makePipelineRepository(db, names.Data, names.Events);
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
        generatedEvent(claimed),
      ),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await pipelines.getConfiguration(pipelineId, proposal.id)).toBeNull(); // nothing half-written

    await runs.completeGenerated(
      { ...claimed, status: 'generated', proposedConfigurationId: proposal.id },
      proposal,
      lease,
      generatedEvent(claimed),
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
    expect(
      await runs.fail(
        run.id,
        'boom',
        new Date().toISOString(),
        ['generating'],
        undefined,
        failedEvent(run.id),
      ),
    ).toBeNull();
    const failed = await runs.fail(
      run.id,
      'boom',
      new Date().toISOString(),
      ['pending'],
      undefined,
      failedEvent(run.id),
    );
    expect(failed).toMatchObject({ status: 'failed', errorMessage: 'boom' });
    expect(
      await runs.fail(
        run.id,
        'again',
        new Date().toISOString(),
        ['pending', 'generating'],
        undefined,
        failedEvent(run.id),
      ),
    ).toBeNull();
    expect(
      await runs.fail(
        nanoid(),
        'missing',
        new Date().toISOString(),
        ['pending'],
        undefined,
        failedEvent(nanoid()),
      ),
    ).toBeNull();
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

/** A run of a stored pipeline moved to `status` through the store, and the activation approving it would record. */
async function runIn(status: 'pending' | 'generated' | 'approved' | 'failed') {
  const { pipelines, pipelineId } = await storedPipeline();
  const run = pendingRun({ pipelineId });
  await runs.create(run);
  const proposalId = nanoid();
  const at = new Date().toISOString();
  const activation = {
    id: nanoid(),
    pipelineId,
    configurationId: proposalId,
    version: 2,
    previousConfigurationId: 'c1',
    previousVersion: 1,
    source: 'approval' as const,
    synthesisRunId: run.id,
    reason: null,
    summary: 'approved',
    activatedAt: at,
    activatedBy: 'u2',
  };
  let current: SynthesisRun = run;
  if (status === 'failed')
    current = (await runs.fail(run.id, 'boom', at, ['pending'], undefined, failedEvent(run.id))) ?? run;
  if (status === 'generated' || status === 'approved') {
    const claim = await runs.claim(run.id, at, new Date(0).toISOString());
    if (claim.outcome !== 'claimed') throw new Error('not claimed');
    current = await runs.completeGenerated(
      { ...claim.run, status: 'generated', proposedConfigurationId: proposalId },
      {
        id: proposalId,
        pipelineId,
        slots: [{ id: 's', name: 's', kind: 'model', settings: { temperature: 0 } }],
        source: 'synthesis',
        synthesisRunId: run.id,
        createdAt: at,
        createdBy: 'u1',
      },
      at,
      generatedEvent(run),
    );
  }
  if (status === 'approved')
    current = await runs.approve(current, { at, by: 'u2' }, planOf(activation), approvedEvents(current));
  expect((await runs.get(run.id))?.status).toBe(status);
  return { run: current, activation, pipelines, pipelineId };
}

/** An approval of every change that activates the proposal as it is (serving it to every caller). */
const planOf = (activation: Activation): ApprovalPlan => ({
  approvedChangeIds: [],
  appliedConfigurationId: activation.configurationId,
  newConfiguration: null,
  activation,
  rollout: null,
  serving: {
    pipelineId: activation.pipelineId,
    teamId: 't1',
    active: {
      id: activation.configurationId,
      pipelineId: activation.pipelineId,
      version: activation.version,
      slots: [{ id: 's', name: 's', kind: 'model', settings: { temperature: 0 } }],
      source: 'synthesis',
      createdAt: activation.activatedAt,
      createdBy: 'u1',
    },
    rollout: null,
  },
});

describe('moves the run state table forbids, on DynamoDB Local', () => {
  it('refuses to approve a pending run with a 409 naming its status, and changes nothing', async () => {
    const { run, activation, pipelines, pipelineId } = await runIn('pending');
    await expect(
      runs.approve(run, { at: activation.activatedAt, by: 'u2' }, planOf(activation), approvedEvents(run)),
    ).rejects.toMatchObject({
      statusCode: 409,
      message: 'The run is pending; only a generated run can be approved.',
    });
    expect(await runs.get(run.id)).toEqual(run);
    expect((await pipelines.getPipeline(pipelineId))?.activeConfigurationId).toBe('c1');
    expect((await pipelines.listActivations(pipelineId, { limit: 10 })).items).toEqual([]);
  });

  it('refuses to reject an approved or failed run, naming the status, and changes nothing', async () => {
    for (const status of ['approved', 'failed'] as const) {
      const { run } = await runIn(status);
      const before = await runs.get(run.id);
      await expect(
        runs.reject(run, { at: new Date().toISOString(), by: 'u3', reason: 'no' }, rejectedEvent(run)),
      ).rejects.toMatchObject({
        code: 'CONFLICT',
        message: `The run is ${status}; only a generated run can be rejected.`,
      });
      expect(await runs.get(run.id)).toEqual(before);
    }
    await expect(
      runs.reject(
        pendingRun(),
        { at: new Date().toISOString(), by: 'u3', reason: null },
        rejectedEvent(pendingRun()),
      ),
    ).rejects.toMatchObject({ message: 'The run is missing; only a generated run can be rejected.' });
  });

  it('rejects a generated run once: a second decision is a 409 naming the status it reached', async () => {
    const { run, activation } = await runIn('generated');
    const rejected = await runs.reject(
      run,
      { at: activation.activatedAt, by: 'u3', reason: 'too risky' },
      rejectedEvent(run),
    );
    expect(rejected).toMatchObject({ status: 'rejected', rejectedBy: 'u3', rejectionReason: 'too risky' });
    await expect(
      runs.approve(run, { at: activation.activatedAt, by: 'u2' }, planOf(activation), approvedEvents(run)),
    ).rejects.toMatchObject({
      message: 'The run is rejected; only a generated run can be approved.',
    });
  });

  it('leaves an approved run alone when asked to fail it, whatever statuses the caller names', async () => {
    const { run } = await runIn('approved');
    const before = await runs.get(run.id);
    const at = new Date().toISOString();
    expect(
      await runs.fail(run.id, 'late failure', at, ['pending', 'generating'], undefined, failedEvent(run.id)),
    ).toBeNull();
    // The table forbids approved → failed even when the caller asks for it.
    expect(
      await runs.fail(run.id, 'late failure', at, ['approved', 'generated'], undefined, failedEvent(run.id)),
    ).toBeNull();
    expect(await runs.get(run.id)).toEqual(before);
  });

  it('never claims or releases a finished run, and says it is finished', async () => {
    for (const status of ['generated', 'failed'] as const) {
      const { run } = await runIn(status);
      const before = await runs.get(run.id);
      const claim = await runs.claim(
        run.id,
        new Date().toISOString(),
        new Date(Date.now() + 60_000).toISOString(),
      );
      expect(claim).toEqual({ outcome: 'finished', run: before });
      await runs.releaseForRetry(run.id, 'throttled', before?.generationStartedAt ?? '');
      expect(await runs.get(run.id)).toEqual(before);
    }
    expect(await runs.claim(nanoid(), new Date().toISOString(), new Date().toISOString())).toEqual({
      outcome: 'missing',
    });
  });

  it('releases a generating run for retry only under the lease that holds it', async () => {
    const run = pendingRun();
    await runs.create(run);
    const lease = '2026-01-01T00:00:00.000Z';
    await runs.claim(run.id, lease, '2025-12-31T23:00:00.000Z');
    await runs.releaseForRetry(run.id, 'throttled', '2026-01-01T00:00:09.000Z');
    expect(await runs.get(run.id)).toMatchObject({ status: 'generating', retryReason: null });
    await runs.releaseForRetry(run.id, 'throttled', lease);
    expect(await runs.get(run.id)).toMatchObject({ status: 'pending', retryReason: 'throttled' });
    // Released, it can be claimed again at once.
    expect((await runs.claim(run.id, '2026-01-01T00:00:10.000Z', '2025-12-31T23:00:00.000Z')).outcome).toBe(
      'claimed',
    );
  });
});

describe('run items that are not runs', () => {
  it('raise an internal error naming the run and the attribute, not a run with wrong values', async () => {
    const run = pendingRun();
    const { PutCommand } = await import('@aws-sdk/lib-dynamodb');
    await db.send(
      new PutCommand({ TableName: names.Runs, Item: { ...run, status: 'paused', changes: 'none' } }),
    );
    const read = runs.get(run.id);
    await expect(read).rejects.toMatchObject({ name: 'CorruptItemError' });
    await expect(read).rejects.toThrow(`The stored synthesis run ${run.id} is corrupt (status: `);
    await expect(read).rejects.toThrow(/changes: /);
    await expect(read).rejects.not.toHaveProperty('statusCode');
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
    await pipelines.recordSignals(signals.slice(0, 30), RETENTION_DAYS.default);
    await pipelines.recordSignals(signals.slice(30), RETENTION_DAYS.default);
    const recent = await pipelines.recentSignals(pipelineId, 5, WHOLE_HISTORY);
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
            generatedEvent(run),
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
