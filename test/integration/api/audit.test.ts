/*
 * The audit log through its handler on DynamoDB Local: the caller's team only, whatever the
 * pipeline filter, a page of `limit` events of that team, and cursors that stay in it.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { nanoid } from 'nanoid';
import { beforeAll, describe, expect, it } from 'vitest';
import { type DomainEvent, newEvent } from '../../../lambdas/core/events.ts';
import { eventItem } from '../../../lambdas/store/events.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import {
  apiEvent,
  type Caller,
  createCaller,
  type HttpLambda,
  invoke,
  loadHandlers,
  setUpApiEnvironment,
  storePipeline,
} from './harness.ts';

let db: Awaited<ReturnType<typeof setUpApiEnvironment>>['db'];
let names: TableNames;
let ours: Caller;
let theirs: Caller;
let listAudit: HttpLambda;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  [ours, theirs] = await Promise.all([createCaller(db, names), createCaller(db, names)]);
  listAudit = (await loadHandlers(['list-audit-events']))['list-audit-events'] as HttpLambda;
});

const audit = (caller: Caller, query: Record<string, string>) =>
  invoke(
    listAudit,
    apiEvent({ method: 'GET', resource: '/audit-events', query, principal: caller.principal }),
  );

/** `count` configuration.activated events of a pipeline of `teamId`, written to the outbox, oldest first. */
async function recordEvents(teamId: string, pipelineId: string, count: number): Promise<DomainEvent[]> {
  const events: DomainEvent[] = [];
  for (let i = 0; i < count; i++) {
    const event = newEvent(
      'configuration.activated',
      { teamId, pipelineId, configurationId: `c${i}`, actor: { userId: 'system', credential: 'system' } },
      { at: new Date(Date.now() - (count - i) * 1000).toISOString(), key: nanoid() },
    );
    await db.send(new PutCommand({ TableName: names.Events, Item: eventItem(event) }));
    events.push(event);
  }
  return events;
}

/** Every page of a listing, following nextCursor. */
async function allPages(caller: Caller, query: Record<string, string>) {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await audit(caller, { ...query, ...(cursor ? { cursor } : {}) });
    expect(page.status).toBe(200);
    ids.push(...page.body.items.map((event: { id: string }) => event.id));
    cursor = page.body.nextCursor;
  } while (cursor);
  return ids;
}

describe('GET /audit-events?pipelineId', () => {
  it("is a 403 for another team's pipeline, before anything of its events is read", async () => {
    const theirPipeline = await storePipeline(db, names, theirs.principal.teamId);
    await recordEvents(theirs.principal.teamId, theirPipeline, 3);

    const answer = await audit(ours, { pipelineId: theirPipeline, limit: '1' });

    expect(answer.status).toBe(403);
    expect(answer.body).toEqual({ error: 'FORBIDDEN', message: expect.any(String) });
    expect(JSON.stringify(answer.body)).not.toContain(theirPipeline);
  });

  it("pages through the pipeline's events, `limit` of the team's at a time", async () => {
    const pipelineId = await storePipeline(db, names, ours.principal.teamId);
    const events = await recordEvents(ours.principal.teamId, pipelineId, 3);

    const first = await audit(ours, { pipelineId, limit: '1' });
    expect(first.body.items.map((event: { id: string }) => event.id)).toEqual([events[2]?.id]);
    expect(await allPages(ours, { pipelineId, limit: '1' })).toEqual(events.map((e) => e.id).reverse());
  });

  it("keeps a deleted pipeline's events readable by its team, and by no other", async () => {
    // A deleted pipeline has no pipeline item any more; its events stay in the log 400 days.
    const gone = nanoid();
    const events = await recordEvents(theirs.principal.teamId, gone, 2);

    expect(await allPages(theirs, { pipelineId: gone, limit: '1' })).toEqual(
      events.map((e) => e.id).reverse(),
    );
    const foreign = await audit(ours, { pipelineId: gone, limit: '1' });
    expect(foreign.status).toBe(200);
    expect(foreign.body).toEqual({ items: [], nextCursor: null });
  });

  it("refuses a cursor from another team's listing, or from another pipeline's", async () => {
    const [mine, other] = await Promise.all([
      storePipeline(db, names, ours.principal.teamId),
      storePipeline(db, names, ours.principal.teamId),
    ]);
    await Promise.all([
      recordEvents(ours.principal.teamId, mine, 2),
      recordEvents(ours.principal.teamId, other, 2),
      recordEvents(theirs.principal.teamId, nanoid(), 2),
    ]);
    const theirCursor = (await audit(theirs, { limit: '1' })).body.nextCursor as string;
    const otherCursor = (await audit(ours, { pipelineId: other, limit: '1' })).body.nextCursor as string;
    expect(theirCursor).toEqual(expect.any(String));

    for (const [query, cursor] of [
      [{}, theirCursor],
      [{ pipelineId: mine }, otherCursor],
      [{ pipelineId: mine }, theirCursor],
    ] as const) {
      const answer = await audit(ours, { ...query, limit: '1', cursor });
      expect(answer.status).toBe(400);
      expect(answer.body.error).toBe('VALIDATION_ERROR');
    }
  });
});
