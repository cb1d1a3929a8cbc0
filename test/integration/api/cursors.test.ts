/*
 * Pagination cursors through the listings' handlers on DynamoDB Local: opaque (nothing internal
 * can be read from one) and authenticated (a forged, edited or foreign cursor is a 400, never a 500).
 */
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

let http: Record<string, Handler>;
let admin: Caller;
let other: Caller;
let pipelineId: string;
let otherPipelineId: string;

const call = (entry: string, input: Parameters<typeof apiEvent>[0]) =>
  invoke(http[entry] as Handler, apiEvent(input));
const session = (caller: Caller) => ({ ...caller.principal, method: 'session' as const, tokenId: undefined });

/** A store cursor as this API gave them before they were sealed: a key, base64url JSON. */
const plain = (key: Record<string, unknown>) => Buffer.from(JSON.stringify(key)).toString('base64url');

async function newPipeline(caller: Caller): Promise<string> {
  const created = await call('create-pipeline', {
    method: 'POST',
    resource: '/pipelines',
    body: { name: 'bot', slots: DEMO_SLOTS },
    principal: caller.principal,
  });
  return created.body.id;
}

beforeAll(async () => {
  const { db, names } = await setUpApiEnvironment();
  http = await loadHandlers([
    'create-pipeline',
    'list-pipelines',
    'list-api-tokens',
    'create-api-token',
    'list-audit-events',
    'list-activations',
    'list-synthesis-runs',
    'export-pipeline',
  ]);
  admin = await createCaller(db, names);
  other = await createCaller(db, names);
  pipelineId = await newPipeline(admin);
  await newPipeline(admin);
  otherPipelineId = await newPipeline(other);
  for (const name of ['ci', 'deploy']) {
    const created = await call('create-api-token', {
      method: 'POST',
      resource: '/api-tokens',
      body: { name, teamId: admin.principal.teamId },
      principal: session(admin),
    });
    expect(created.status).toBe(201);
  }
});

/** Each listing, as the caller reads its first page. */
const LISTINGS = [
  { entry: 'list-pipelines', resource: '/pipelines', params: () => ({}) },
  { entry: 'list-api-tokens', resource: '/api-tokens', params: () => ({}) },
  { entry: 'list-audit-events', resource: '/audit-events', params: () => ({}) },
  {
    entry: 'list-activations',
    resource: '/pipelines/{pipelineId}/activations',
    params: () => ({ pipelineId }),
  },
  {
    entry: 'list-synthesis-runs',
    resource: '/pipelines/{pipelineId}/synthesis-runs',
    params: () => ({ pipelineId }),
  },
] as const;

const list = (
  listing: (typeof LISTINGS)[number],
  query: Record<string, string>,
  caller: Caller = admin,
  params: Record<string, string> = listing.params(),
) =>
  call(listing.entry, {
    method: 'GET',
    resource: listing.resource,
    pathParameters: params,
    query,
    principal: caller.principal,
  });

/** Cursors a caller might craft: the old plain keys (edited), junk, and the empty string. */
const crafted = () => [
  '',
  'x',
  'AAAA',
  plain({ pk: `PIPELINE#${pipelineId}`, sk: 'ACTIVATION#', extra: '1' }),
  plain({ pk: `PIPELINE#${pipelineId}`, sk: '' }),
  plain({ pk: `PIPELINE#${pipelineId}`, sk: 'ZZZZ' }),
  plain({ gsi1pk: '', gsi1sk: '', pk: '', sk: '' }),
  plain({ part: 0, after: { pk: '', sk: '' } }),
  'A'.repeat(9000),
];

describe('every listing', () => {
  it.each(LISTINGS)('$entry: a crafted cursor is a 400 VALIDATION_ERROR, never a 500', async (listing) => {
    for (const cursor of crafted()) {
      const answer = await list(listing, { cursor });
      expect({ cursor, status: answer.status, error: answer.body.error }).toEqual({
        cursor,
        status: 400,
        error: 'VALIDATION_ERROR',
      });
    }
  });

  it('gives cursors that carry nothing readable, continue their own listing, and nothing else', async () => {
    const pipelines = LISTINGS[0];
    const tokens = LISTINGS[1];
    const first = await list(tokens, { limit: '1' });
    const cursor = first.body.nextCursor as string;
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const readable = Buffer.from(cursor, 'base64url').toString('latin1');
    expect(readable).not.toMatch(/APITOKEN|USER#|[0-9a-f]{16}/);
    const second = await list(tokens, { limit: '1', cursor });
    expect(second.status).toBe(200);
    expect(second.body.items[0].id).not.toBe(first.body.items[0].id);

    // Another listing, another team, an edited byte: 400.
    expect((await list(pipelines, { cursor })).status).toBe(400);
    expect((await list(tokens, { cursor }, other)).status).toBe(400);
    const edited = `${cursor.slice(0, 30)}${cursor[30] === 'A' ? 'B' : 'A'}${cursor.slice(31)}`;
    expect((await list(tokens, { cursor: edited })).status).toBe(400);

    const runs = LISTINGS[4];
    const page = await list(pipelines, { limit: '1' });
    expect(page.body.nextCursor).toEqual(expect.any(String));
    expect((await list(runs, { cursor: page.body.nextCursor })).status).toBe(400);
    expect((await list(runs, {}, other, { pipelineId: otherPipelineId })).status).toBe(200);
  });
});

describe('the export', () => {
  const exportPage = (cursor?: string) =>
    call('export-pipeline', {
      method: 'GET',
      resource: '/pipelines/{pipelineId}/export',
      pathParameters: { pipelineId },
      ...(cursor === undefined ? {} : { query: { cursor } }),
      principal: admin.principal,
    });

  it('answers a crafted cursor with a 400 VALIDATION_ERROR, never a 500', async () => {
    for (const cursor of crafted()) {
      const answer = await exportPage(cursor);
      expect({ cursor, status: answer.status, error: answer.body?.error }).toEqual({
        cursor,
        status: 400,
        error: 'VALIDATION_ERROR',
      });
    }
  });
});
