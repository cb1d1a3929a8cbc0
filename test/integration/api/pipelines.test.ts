import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SLOTS } from '../../../local/seed.ts';
import {
  apiEvent,
  type Caller,
  createCaller,
  type HttpLambda as Handler,
  invoke,
  loadHandlers,
  setUpApiEnvironment,
} from './harness.ts';

/** A time inside the team's default 90-day retention window (an older record is refused). */
const RECENT = new Date(Date.now() - 86_400_000).toISOString();

let handlers: Record<string, Handler>;
let admin: Caller;
let otherTeam: Caller;
let viewer: Caller;

beforeAll(async () => {
  const { db, names } = await setUpApiEnvironment();
  [admin, otherTeam, viewer] = await Promise.all([
    createCaller(db, names),
    createCaller(db, names),
    createCaller(db, names, 'viewer'),
  ]);
  const entries = [
    'create-pipeline',
    'list-pipelines',
    'get-pipeline',
    'get-configuration',
    'record-signals',
    'record-executions',
  ];
  handlers = await loadHandlers(entries);
});

async function createPipeline(caller: Caller, name = 'support bot') {
  return invoke(
    handlers['create-pipeline'] as Handler,
    apiEvent({
      method: 'POST',
      resource: '/pipelines',
      body: { name, slots: DEMO_SLOTS },
      principal: caller.principal,
    }),
  );
}

describe('pipelines', () => {
  it('creates a pipeline whose first configuration is version 1 with the given slots', async () => {
    const created = await createPipeline(admin);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ teamId: admin.principal.teamId, name: 'support bot' });

    const configuration = await invoke(
      handlers['get-configuration'] as Handler,
      apiEvent({
        method: 'GET',
        resource: '/pipelines/{pipelineId}/configurations/{configurationId}',
        pathParameters: { pipelineId: created.body.id, configurationId: created.body.activeConfigurationId },
        principal: admin.principal,
      }),
    );
    expect(configuration.status).toBe(200);
    expect(configuration.body).toMatchObject({
      version: 1,
      source: 'manual',
      slots: DEMO_SLOTS,
      createdBy: admin.principal.userId,
    });
  });

  it('lists only the caller team pipelines, newest first, a page at a time', async () => {
    const caller = await createCallerForList();
    for (const name of ['first', 'second', 'third']) await createPipeline(caller, name);
    const list = (query: Record<string, string>) =>
      invoke(
        handlers['list-pipelines'] as Handler,
        apiEvent({ method: 'GET', resource: '/pipelines', query, principal: caller.principal }),
      );

    const page1 = await list({ limit: '2' });
    expect(page1.status).toBe(200);
    expect(page1.body.items.map((p: { name: string }) => p.name)).toEqual(['third', 'second']);
    expect(page1.body.nextCursor).toEqual(expect.any(String));
    const page2 = await list({ limit: '2', cursor: page1.body.nextCursor });
    expect(page2.body.items.map((p: { name: string }) => p.name)).toEqual(['first']);

    const tampered = await list({ cursor: Buffer.from('{"pk":"x"}').toString('base64url') });
    expect(tampered.status).toBe(400);
    expect(tampered.body.error).toBe('VALIDATION_ERROR');
    expect((await list({ limit: '1000' })).status).toBe(400);
  });

  it('answers 403 for another team and 404 for a pipeline that does not exist', async () => {
    const created = await createPipeline(admin);
    const get = (caller: Caller, pipelineId: string) =>
      invoke(
        handlers['get-pipeline'] as Handler,
        apiEvent({
          method: 'GET',
          resource: '/pipelines/{pipelineId}',
          pathParameters: { pipelineId },
          principal: caller.principal,
        }),
      );
    expect((await get(admin, created.body.id)).status).toBe(200);
    const forbidden = await get(otherTeam, created.body.id);
    expect(forbidden).toMatchObject({ status: 403, body: { error: 'FORBIDDEN' } });
    expect(await get(admin, 'no-such-pipeline')).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
    expect(await get(admin, 'bad id!')).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
  });

  it('refuses hostile bodies with a 4xx and an {error, message} body', async () => {
    const post = (body: string | object) =>
      invoke(
        handlers['create-pipeline'] as Handler,
        apiEvent({ method: 'POST', resource: '/pipelines', body, principal: admin.principal }),
      );
    for (const body of [
      '{not json',
      '[]',
      { name: 'x' },
      { name: 'x', slots: [] },
      { name: 'x', slots: DEMO_SLOTS, extra: 1 },
    ]) {
      const response = await post(body);
      expect(response.status).toBe(400);
      expect(response.body).toEqual(
        expect.objectContaining({ error: 'VALIDATION_ERROR', message: expect.any(String) }),
      );
    }
    const duplicateSlots = await post({ name: 'x', slots: [DEMO_SLOTS[0], DEMO_SLOTS[0]] });
    expect(duplicateSlots.status).toBe(400);
    const brokenSettings = await post({
      name: 'x',
      slots: [{ id: 'm', name: 'model', kind: 'model', settings: { temperature: 'hot' } }],
    });
    expect(brokenSettings.status).toBe(400);
    const huge = await post({ name: 'x'.repeat(1_100_000), slots: DEMO_SLOTS });
    expect(huge).toMatchObject({ status: 413, body: { error: 'PAYLOAD_TOO_LARGE' } });
  });

  it('lets a viewer read but not create', async () => {
    const response = await createPipeline(viewer);
    expect(response).toMatchObject({ status: 403, body: { error: 'FORBIDDEN' } });
  });
});

function postSignals(pipelineId: string, signals: object[], caller: Caller = admin) {
  return invoke(
    handlers['record-signals'] as Handler,
    apiEvent({
      method: 'POST',
      resource: '/pipelines/{pipelineId}/signals',
      pathParameters: { pipelineId },
      body: { signals },
      principal: caller.principal,
    }),
  );
}

describe('signals and executions', () => {
  it('records a batch and fills in ids and times the client did not send', async () => {
    const pipeline = (await createPipeline(admin)).body;
    const response = await postSignals(pipeline.id, [
      { kind: 'timeout', severity: 'critical', message: 'slow', slotId: 'retrieve' },
      {
        id: 'client-id-1',
        kind: 'feedback',
        severity: 'info',
        message: 'meh',
        occurredAt: RECENT,
      },
    ]);
    expect(response.status).toBe(201);
    expect(response.body.signals).toHaveLength(2);
    expect(response.body.signals[0]).toMatchObject({
      pipelineId: pipeline.id,
      id: expect.stringMatching(/^[A-Za-z0-9_-]{21}$/),
    });
    expect(response.body.signals[1]).toMatchObject({
      id: 'client-id-1',
      occurredAt: RECENT,
    });

    const executions = await invoke(
      handlers['record-executions'] as Handler,
      apiEvent({
        method: 'POST',
        resource: '/pipelines/{pipelineId}/executions',
        pathParameters: { pipelineId: pipeline.id },
        body: {
          executions: [
            {
              status: 'failed',
              durationMs: 1500,
              error: 'timeout',
              slotResults: [{ slotId: 'retrieve', status: 'failed', durationMs: 1500 }],
            },
          ],
        },
        principal: admin.principal,
      }),
    );
    expect(executions.status).toBe(201);
    expect(executions.body.executions[0]).toMatchObject({
      configurationId: pipeline.activeConfigurationId,
      status: 'failed',
    });
  });

  it('records a batch all or nothing: a repeated signal is a 409 and nothing of the batch is stored twice', async () => {
    const pipeline = (await createPipeline(admin)).body;
    const post = (signals: object[]) => postSignals(pipeline.id, signals);
    const at = RECENT;
    const first = { id: 'sig-a', kind: 'error', severity: 'warning', message: 'a', occurredAt: at };
    expect((await post([first])).status).toBe(201);
    const conflict = await post([{ ...first, id: 'sig-b' }, first]);
    expect(conflict).toMatchObject({ status: 409, body: { error: 'CONFLICT' } });
    expect(conflict.body.message).toContain('sig-a');
    // sig-b was in the refused batch, so it can still be recorded
    expect((await post([{ ...first, id: 'sig-b' }])).status).toBe(201);
  });

  it('bounds batches at 100 and refuses duplicate ids within a batch', async () => {
    const pipeline = (await createPipeline(admin)).body;
    const post = (signals: object[]) => postSignals(pipeline.id, signals);
    const signal = { kind: 'error', severity: 'warning', message: 'x' };
    expect((await post(Array.from({ length: 101 }, () => signal))).status).toBe(400);
    expect((await post(Array.from({ length: 100 }, () => signal))).status).toBe(201);
    expect(
      (
        await post([
          { ...signal, id: 'same' },
          { ...signal, id: 'same' },
        ])
      ).status,
    ).toBe(400);
    expect((await post([{ ...signal, severity: 'fatal' }])).status).toBe(400);
    expect((await post([{ ...signal, message: 'x'.repeat(5000) }])).status).toBe(400);
  });

  it('refuses another team writing signals to a pipeline with 403', async () => {
    const pipeline = (await createPipeline(admin)).body;
    const response = await postSignals(
      pipeline.id,
      [{ kind: 'error', severity: 'warning', message: 'x' }],
      otherTeam,
    );
    expect(response).toMatchObject({ status: 403, body: { error: 'FORBIDDEN' } });
  });
});

let listCallerIndex = 0;
async function createCallerForList(): Promise<Caller> {
  listCallerIndex += 1;
  const { principal } = admin;
  // A fresh team so the listing is not shared with other tests of this file.
  return { apiToken: '', principal: { ...principal, teamId: `${principal.teamId}-list${listCallerIndex}` } };
}
