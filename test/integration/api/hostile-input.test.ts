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

/**
 * Bodies an attacker (or a broken client) sends: each gets a clear 4xx, never a 500, and nothing
 * of a refused request is stored.
 */
let handlers: Record<string, Handler>;
let caller: Caller;
let pipelineId: string;

const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
const pipelineBody = (settings: string, name = '"hostile"') =>
  `{"name":${name},"slots":[{"id":"s","name":"s","kind":"model","settings":${settings}}]}`;

async function createPipeline(body: string) {
  return invoke(
    handlers['create-pipeline'] as Handler,
    apiEvent({ method: 'POST', resource: '/pipelines', body, principal: caller.principal }),
  );
}

async function countPipelines(): Promise<number> {
  const listed = await invoke(
    handlers['list-pipelines'] as Handler,
    apiEvent({ method: 'GET', resource: '/pipelines', query: { limit: '100' }, principal: caller.principal }),
  );
  return listed.body.items.length;
}

beforeAll(async () => {
  const { db, names } = await setUpApiEnvironment();
  caller = await createCaller(db, names);
  handlers = await loadHandlers(['create-pipeline', 'list-pipelines', 'get-configuration', 'record-signals']);
  const created = await createPipeline(JSON.stringify({ name: 'base', slots: DEMO_SLOTS }));
  pipelineId = created.body.id;
});

describe('hostile JSON bodies', () => {
  it.each([
    ['nested 25 deep', pipelineBody(nested(22))],
    ['nested 200 deep', pipelineBody(nested(200))],
    ['nested 10,000 deep', pipelineBody(nested(10_000))],
    ['a number too big for a double (1e400)', pipelineBody('{"x":1e400}')],
    ['a number DynamoDB cannot store (1e200)', pipelineBody('{"x":1e200}')],
    ['a number that underflows DynamoDB (1e-200)', pipelineBody('{"x":1e-200}')],
    ['a __proto__ key', pipelineBody('{"__proto__":{"polluted":true}}')],
    ['a NUL in a string', pipelineBody('{}', '"bad\\u0000name"')],
    ['an unpaired surrogate in a string', pipelineBody('{}', '"bad\\ud800name"')],
    ['an unpaired surrogate in a key', pipelineBody('{"\\udc00":1}')],
  ])('refuses %s with 400 VALIDATION_ERROR and stores nothing', async (_, body) => {
    const before = await countPipelines();

    const response = await createPipeline(body);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: 'VALIDATION_ERROR', message: expect.any(String) });
    expect(await countPipelines()).toBe(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    ["at the top of a slot's settings", '{"":1}', 'slots[0].settings has an empty key'],
    [
      "deep inside a slot's settings",
      '{"tools":[{"search":{"":true}}]}',
      'slots[0].settings.tools[0].search has an empty key',
    ],
  ])(
    'refuses an empty key %s with 400 naming where it is, and stores nothing',
    async (_, settings, named) => {
      const before = await countPipelines();

      const response = await createPipeline(pipelineBody(settings));

      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ error: 'VALIDATION_ERROR' });
      expect(response.body.message).toContain(named);
      expect(await countPipelines()).toBe(before);
    },
  );

  it('stores 1e20, a "constructor" key and the deepest allowed nesting as plain data, and returns them intact', async () => {
    const settings = `{"big":1e20,"constructor":{"prototype":"kept"},"deep":${nested(20)}}`;
    const created = await createPipeline(pipelineBody(settings));
    expect(created.status).toBe(201);

    const configuration = await invoke(
      handlers['get-configuration'] as Handler,
      apiEvent({
        method: 'GET',
        resource: '/pipelines/{pipelineId}/configurations/{configurationId}',
        pathParameters: { pipelineId: created.body.id, configurationId: created.body.activeConfigurationId },
        principal: caller.principal,
      }),
    );
    expect(configuration.status).toBe(200);
    expect(configuration.body.slots[0].settings).toEqual(JSON.parse(settings));
  });

  it('answers 413 PAYLOAD_TOO_LARGE naming the limit for a configuration bigger than an item, storing nothing', async () => {
    const slots = Array.from({ length: 50 }, (_, index) => ({
      id: `s${index}`,
      name: 's',
      kind: 'model',
      settings: { prompt: 'x'.repeat(15_000) },
    }));
    const before = await countPipelines();

    const response = await createPipeline(JSON.stringify({ name: 'too big', slots }));

    expect(response.status).toBe(413);
    expect(response.body).toMatchObject({
      error: 'PAYLOAD_TOO_LARGE',
      message: expect.stringContaining('400 KB'),
    });
    expect(await countPipelines()).toBe(before);
  });
});

describe('hostile timestamps', () => {
  it.each([
    ['9999-12-31T00:00:00.000Z'],
    ['1970-01-01T00:00:00.000Z'],
    [new Date(Date.now() + 25 * 3_600_000).toISOString()],
  ])('refuses a signal dated %s with 400, storing no signal of the batch', async (occurredAt) => {
    const response = await invoke(
      handlers['record-signals'] as Handler,
      apiEvent({
        method: 'POST',
        resource: '/pipelines/{pipelineId}/signals',
        pathParameters: { pipelineId },
        body: {
          signals: [
            { kind: 'error', severity: 'warning', message: 'fine' },
            { kind: 'error', severity: 'warning', message: 'dated wrong', occurredAt },
          ],
        },
        principal: caller.principal,
      }),
    );

    expect(response).toMatchObject({ status: 400, body: { error: 'VALIDATION_ERROR' } });
  });

  it('accepts a signal from a client whose clock runs an hour ahead', async () => {
    const response = await invoke(
      handlers['record-signals'] as Handler,
      apiEvent({
        method: 'POST',
        resource: '/pipelines/{pipelineId}/signals',
        pathParameters: { pipelineId },
        body: {
          signals: [
            {
              kind: 'error',
              severity: 'warning',
              message: 'skewed',
              occurredAt: new Date(Date.now() + 3_600_000).toISOString(),
            },
          ],
        },
        principal: caller.principal,
      }),
    );

    expect(response.status).toBe(201);
  });
});
