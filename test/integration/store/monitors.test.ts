import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { nanoid } from 'nanoid';
import { describe, expect, it } from 'vitest';
import { type DomainEvent, newEvent, SYSTEM_ACTOR } from '../../../lambdas/core/events.ts';
import type { MonitorRecord } from '../../../lambdas/core/schemas/monitors.ts';
import { monitorRepositoryFromEnv } from '../../../lambdas/wiring/repositories.ts';
import { setUpApiEnvironment } from '../api/harness.ts';

const AT = '2026-12-03T10:00:00.000Z';

function monitor(pipelineId: string, id = nanoid()): MonitorRecord {
  return {
    id,
    pipelineId,
    teamId: 'team-1',
    name: 'Failures',
    metric: 'failure_rate',
    kind: null,
    comparator: 'above',
    threshold: 0.1,
    windowMinutes: 5,
    minExecutions: 1,
    state: 'no_data',
    since: AT,
    lastValue: null,
    judgedAt: null,
    createdAt: AT,
    createdBy: 'u1',
    updatedAt: AT,
    stateSeq: 0,
  };
}

const alerted = (record: MonitorRecord): DomainEvent =>
  newEvent(
    'monitor.alerted',
    {
      teamId: record.teamId,
      pipelineId: record.pipelineId,
      monitorId: record.id,
      status: 'alert',
      actor: SYSTEM_ACTOR,
    },
    { at: AT, key: `${record.id}-${record.stateSeq + 1}` },
  );

describe('monitors in DynamoDB Local', () => {
  it('keeps a pipeline to its cap, lists newest first a page at a time, changes and deletes', async () => {
    await setUpApiEnvironment();
    const monitors = monitorRepositoryFromEnv();
    const pipelineId = nanoid();
    const ids = ['m1', 'm2', 'm3'];
    for (const id of ids) await monitors.create(monitor(pipelineId, id), 3);
    await expect(monitors.create(monitor(pipelineId, 'm4'), 3)).rejects.toMatchObject({
      statusCode: 400,
      message: expect.stringContaining('at most 3 monitors'),
    });
    const first = await monitors.list(pipelineId, { limit: 2 });
    expect(first.items.map((item) => item.id)).toEqual(['m3', 'm2']);
    const second = await monitors.list(pipelineId, { limit: 2, cursor: first.nextCursor ?? undefined });
    expect(second.items.map((item) => item.id)).toEqual(['m1']);

    const changed = await monitors.update(pipelineId, 'm1', { threshold: 0.2, kind: null, updatedAt: AT });
    expect(changed).toMatchObject({ id: 'm1', threshold: 0.2, state: 'no_data' });
    await monitors.remove(pipelineId, 'm1');
    await expect(monitors.remove(pipelineId, 'm1')).rejects.toMatchObject({ statusCode: 404 });
    await expect(monitors.update(pipelineId, 'm1', { name: 'x', updatedAt: AT })).rejects.toMatchObject({
      statusCode: 404,
    });
    // A deletion frees its place under the cap.
    await monitors.create(monitor(pipelineId, 'm4'), 3);
  });

  it('finds every monitor through the index shards, a page at a time', async () => {
    await setUpApiEnvironment();
    const monitors = monitorRepositoryFromEnv();
    const pipelineId = nanoid();
    const created = Array.from({ length: 25 }, () => monitor(pipelineId));
    for (const each of created) await monitors.create(each, 50);
    const found: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await monitors.listAll(cursor, 4);
      found.push(...page.items.filter((item) => item.pipelineId === pipelineId).map((item) => item.id));
      cursor = page.cursor;
      pages++;
    } while (cursor !== null && pages < 100);
    expect(found.sort()).toEqual(created.map((each) => each.id).sort());
  });

  it('writes a change of state with its event once: a second judge of the same state writes nothing', async () => {
    const { db, names } = await setUpApiEnvironment();
    const monitors = monitorRepositoryFromEnv();
    const record = monitor(nanoid());
    await monitors.create(record, 50);
    const judgement = { state: 'alert' as const, since: AT, lastValue: 0.5, judgedAt: AT };

    expect(await monitors.recordJudgement(record, judgement, alerted(record))).toBe('written');
    expect(await monitors.recordJudgement(record, judgement, alerted(record))).toBe('stale');
    expect(await monitors.get(record.pipelineId, record.id)).toMatchObject({
      state: 'alert',
      lastValue: 0.5,
      stateSeq: 1,
    });

    // Unchanged state: the value and time are written, the counter stays.
    const later = { ...judgement, lastValue: 0.6, judgedAt: '2026-12-03T10:01:00.000Z' };
    const current = (await monitors.get(record.pipelineId, record.id)) as MonitorRecord;
    expect(await monitors.recordJudgement(current, later, null)).toBe('written');
    expect(await monitors.get(record.pipelineId, record.id)).toMatchObject({ lastValue: 0.6, stateSeq: 1 });

    const { Items = [] } = await db.send(
      new QueryCommand({
        TableName: names.Events,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': 'TEAM#team-1#EVENTS' },
      }),
    );
    expect(Items.filter((item) => item.data?.monitorId === record.id).map((item) => item.type)).toEqual([
      'monitor.alerted',
    ]);

    // A deleted monitor's judgement writes nothing.
    await monitors.remove(record.pipelineId, record.id);
    expect(await monitors.recordJudgement(current, later, null)).toBe('stale');
    expect(await monitors.get(record.pipelineId, record.id)).toBeNull();
  });
});
