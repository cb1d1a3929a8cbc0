/** What the fuzz tests send: hostile and valid-looking bodies, path ids, headers and query strings. */
import fc from 'fast-check';
import { DEMO_SLOTS } from '../../local/seed.ts';

export const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
export const hostileText = fc.constantFrom(
  '',
  '{',
  'null',
  '[]',
  '"x"',
  nested(40),
  nested(5_000),
  '{"x":1e400}',
  '{"x":-1e400}',
  '{"x":1e-300}',
  '{"__proto__":{"admin":true}}',
  '{"constructor":{"prototype":{"admin":true}}}',
  '{"name":"a\\u0000b"}',
  '{"name":"\\ud800"}',
  '{"signals":[{"occurredAt":"9999-12-31T00:00:00.000Z"}]}',
  '\u0000\u0001\u0002',
  'x'.repeat(1_100_000),
);
export const validShapes = fc.constantFrom(
  { name: 'fuzz', slots: DEMO_SLOTS },
  { signals: [{ kind: 'error', severity: 'warning', message: 'm' }] },
  { executions: [{ status: 'failed', durationMs: 10 }] },
  { synthesisHandler: 'heuristic-v1' },
  { reason: 'because' },
  { email: 'a@example.test', password: 'correct horse battery staple' },
  { name: 'token', teamId: 'x' },
  { currentPassword: 'x', newPassword: 'y' },
  { email: 'colleague@example.test', role: 'member' },
  { role: 'viewer' },
  { changes: [{ slotId: 'answer-model', description: 'd', patch: { temperature: 0.3 } }] },
  { rating: 'good', note: 'n' },
);
/** A valid shape with one field replaced by anything. */
export const mutatedShape = fc
  .tuple(validShapes, fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 4 }))
  .map(([shape, key, value]) => JSON.stringify({ ...shape, [key || 'name']: value }));
export const body = fc.oneof(
  fc.constant(null),
  hostileText,
  fc.jsonValue({ maxDepth: 6 }).map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 200, unit: 'binary' }),
  mutatedShape,
);
export const pathValue = (real: () => string) =>
  fc.oneof(
    fc.constant(null).map(() => real()),
    fc.string({ maxLength: 80, unit: 'binary' }),
    fc.constantFrom('', '..', '%00', '__proto__', 'constructor', 'x'.repeat(3_000), 'A'.repeat(21)),
  );
/** The ids the fuzz tests know to exist; a path parameter is sometimes one of them. */
export interface KnownIds {
  pipelineId: string;
  configurationId: string;
  runId: string;
  /** The caller's team and user: the members routes' path parameters. */
  teamId?: string;
  userId?: string;
}

/** The id a path parameter of that name holds on the fuzz's own data. */
export function knownValueFor(parameter: string, ids: KnownIds): string {
  if (parameter === 'pipelineId') return ids.pipelineId;
  if (parameter === 'configurationId') return ids.configurationId;
  if (parameter === 'id') return ids.runId;
  if (parameter === 'teamId' && ids.teamId) return ids.teamId;
  if (parameter === 'userId' && ids.userId) return ids.userId;
  return 'x';
}

/** The parameters of a route's path (`{name}` and greedy `{name+}`), and values for them. */
export function pathParameters(route: string, known: () => KnownIds) {
  const names = [...route.matchAll(/\{(\w+)\+?\}/g)].map((match) => match[1] as string);
  return { names, values: fc.tuple(...names.map((name) => pathValue(() => knownValueFor(name, known())))) };
}

export const headers = fc.record(
  {
    'content-type': fc.constantFrom(
      'application/json',
      'text/plain',
      'application/x-www-form-urlencoded',
      '',
      '\u0000',
    ),
    'idempotency-key': fc.oneof(fc.string({ maxLength: 300, unit: 'binary' }), fc.constant('k'.repeat(256))),
    cookie: fc.string({ maxLength: 200, unit: 'binary' }),
    origin: fc.constantFrom('https://evil.example', 'null', ''),
    'x-requested-with': fc.string({ maxLength: 10 }),
  },
  { requiredKeys: [] },
);
export const query = fc.record(
  {
    limit: fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('0', '-1', '101', '1e3', '20')),
    cursor: fc.string({ maxLength: 200, unit: 'binary' }),
    status: fc.string({ maxLength: 20 }),
  },
  { requiredKeys: [] },
);

/* ---- targeted generators: each one a way in that a generic generator rarely finds ---- */

/** A request's parts a targeted generator sets; `repeatedHeaders` are sent as separate lines. */
export interface RequestPart {
  body?: string;
  headers?: Record<string, string>;
  repeatedHeaders?: Array<[string, string]>;
  query?: Record<string, string>;
}

/** `value` with `{"": extra}` added to the object reached by following `steps` (an index per level). */
export function withEmptyKey(value: unknown, steps: number[], extra: unknown): unknown {
  const [step, ...rest] = steps;
  if (Array.isArray(value)) {
    if (value.length === 0 || step === undefined) return [...value, { '': extra }];
    const index = step % value.length;
    return value.map((item, at) => (at === index ? withEmptyKey(item, rest, extra) : item));
  }
  if (value === null || typeof value !== 'object') return { '': extra };
  const keys = Object.keys(value);
  if (keys.length === 0 || step === undefined || step % (keys.length + 1) === keys.length)
    return { ...value, '': extra };
  const key = keys[step % (keys.length + 1)] as string;
  return { ...value, [key]: withEmptyKey((value as Record<string, unknown>)[key], rest, extra) };
}

const settingsWithEmptyKeys = fc.constantFrom(
  {
    name: 'fuzz',
    slots: DEMO_SLOTS.map((slot, index) => (index === 0 ? { ...slot, settings: { '': 1 } } : slot)),
  },
  {
    name: 'fuzz',
    slots: DEMO_SLOTS.map((slot) => ({ ...slot, settings: { nested: { deeper: { '': [1] } } } })),
  },
  { settings: { '': 1 } },
  { '': '' },
  { patch: { '': null } },
);
/** Bodies holding an empty object key at any depth (`{"settings": {"": 1}}`), valid shapes otherwise. */
export const emptyKeyBody = fc.oneof(
  settingsWithEmptyKeys.map((value) => JSON.stringify(value)),
  fc
    .tuple(validShapes, fc.array(fc.nat(), { maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }))
    .map(([shape, steps, extra]) => JSON.stringify(withEmptyKey(shape, steps, extra))),
);

/** Names every plain object inherits: a lookup by name must not find the prototype's. */
export const PROTOTYPE_NAMES = ['constructor', 'toString', 'hasOwnProperty', '__proto__', 'valueOf'] as const;
const prototypeNamed = fc
  .uniqueArray(fc.tuple(fc.constantFrom(...PROTOTYPE_NAMES), fc.string({ maxLength: 20 })), {
    minLength: 1,
    maxLength: PROTOTYPE_NAMES.length,
    selector: ([name]) => name,
  })
  // fromEntries defines `__proto__` as an own key, as a parsed header or query string holds it.
  .map((entries) =>
    Object.fromEntries(entries.map(([name, value]) => [name, value.replace(/[^\x20-\x7e]/g, '')])),
  );

/** How a client may write the Bearer scheme: any case, extra spaces or tabs, around any credential. */
export const bearerSpelling = (credential: () => string) =>
  fc
    .tuple(
      fc.constantFrom('Bearer', 'bearer', 'BEARER', 'BeArEr', ' Bearer', 'Bearer:', 'Basic'),
      fc.constantFrom(' ', '  ', '\t', '', ' \t '),
      fc.oneof(
        fc.constant(null).map(() => credential()),
        fc.string({ maxLength: 40 }).map((text) => text.replace(/[^\x21-\x7e]/g, '')),
      ),
      fc.constantFrom('', ' ', '  ', ',', ', Bearer x'),
    )
    .map(([scheme, gap, token, tail]) => `${scheme}${gap}${token}${tail}`);

/** A targeted generator: its request parts, and whether only operations that read a body matter. */
export interface TargetedGenerator {
  part: fc.Arbitrary<RequestPart>;
  bodiesOnly: boolean;
}

/**
 * The targeted generators by name; the fuzz reports each one's count of 5xx answers. `credential`
 * gives a token that works, so a generated header is sometimes one a valid request carries.
 */
/** A store key as a cursor once carried one: base64url JSON, with keys a caller might craft. */
const plainCursor = fc
  .dictionary(
    fc.constantFrom('pk', 'sk', 'gsi1pk', 'gsi1sk', 'part', 'after', 'extra', ''),
    fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.integer(),
      fc.constant(null),
      fc.dictionary(fc.string(), fc.string()),
    ),
    { maxKeys: 5 },
  )
  .map((key) => Buffer.from(JSON.stringify(key)).toString('base64url'));

/** Forged cursors: old-style plain keys, random base64url, edited bytes, empty and oversized ones. */
export const forgedCursor = fc.oneof(
  plainCursor,
  fc
    .base64String({ maxLength: 400 })
    .map((text) => text.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')),
  fc.uint8Array({ minLength: 0, maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString('base64url')),
  fc.constantFrom('', '-', 'A'.repeat(9_000), '%00', 'null'),
  fc.string({ maxLength: 100 }),
);

/** Bodies of the people and proposal operations: invitations, roles, changes by hand, feedback. */
const patchValue = fc.oneof(
  fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }),
  fc.constantFrom(
    { temperature: 5 },
    { maxTokens: -1 },
    { template: 'x'.repeat(20_000) },
    { timeoutMs: null },
    { topK: 'many' },
    { '': 1 },
    { nested: { '': { deeper: 1 } } },
  ),
);
export const peopleBodies = fc.oneof(
  fc.record(
    {
      changes: fc.array(
        fc.record(
          {
            slotId: fc.oneof(
              fc.constantFrom('retrieve', 'answer-model', 'answer-prompt'),
              fc.string({ maxLength: 70 }),
            ),
            description: fc.string({ maxLength: 600 }),
            rationale: fc.string({ maxLength: 50 }),
            patch: fc.oneof(patchValue, fc.jsonValue({ maxDepth: 2 })),
          },
          { requiredKeys: ['slotId', 'description', 'patch'] },
        ),
        { maxLength: 25 },
      ),
      note: fc.string({ maxLength: 2_100 }),
    },
    { requiredKeys: ['changes'] },
  ),
  fc.record({
    email: fc.oneof(fc.emailAddress(), fc.string({ maxLength: 300 })),
    role: fc.oneof(fc.constantFrom('admin', 'member', 'viewer'), fc.string({ maxLength: 20 })),
  }),
  fc.record({
    role: fc.oneof(fc.constantFrom('admin', 'member', 'viewer', 'owner'), fc.jsonValue({ maxDepth: 2 })),
  }),
  fc.record(
    {
      rating: fc.oneof(fc.constantFrom('good', 'bad'), fc.jsonValue({ maxDepth: 2 })),
      note: fc.string({ maxLength: 1_100 }),
    },
    { requiredKeys: ['rating'] },
  ),
);

export function targetedGenerators(credential: () => string): Record<string, TargetedGenerator> {
  const twoAuthorizations = fc.tuple(bearerSpelling(credential), bearerSpelling(credential)).map(
    ([first, second]): RequestPart => ({
      repeatedHeaders: [
        ['Authorization', first],
        ['Authorization', second],
      ],
    }),
  );
  return {
    'empty object keys in bodies': {
      part: emptyKeyBody.map((body) => ({ body, headers: { 'content-type': 'application/json' } })),
      bodiesOnly: true,
    },
    'member, invitation, proposal and feedback bodies': {
      part: peopleBodies.map((value) => ({
        body: JSON.stringify(value),
        headers: { 'content-type': 'application/json' },
      })),
      bodiesOnly: true,
    },
    'prototype-named query parameters': {
      part: prototypeNamed.map((query) => ({ query })),
      bodiesOnly: false,
    },
    'prototype-named headers': { part: prototypeNamed.map((headers) => ({ headers })), bodiesOnly: false },
    'two Authorization headers': { part: twoAuthorizations, bodiesOnly: false },
    'forged cursors': {
      part: fc
        .tuple(forgedCursor, fc.constantFrom(undefined, '1', '100', '0'))
        .map(([cursor, limit]) => ({ query: { cursor, ...(limit === undefined ? {} : { limit }) } })),
      bodiesOnly: false,
    },
    'spellings of Bearer': {
      part: bearerSpelling(credential).map((authorization) => ({
        headers: { Authorization: authorization },
      })),
      bodiesOnly: false,
    },
  };
}

/** Counts per generator: requests and answers ≥ 500. */
export type GeneratorTally = Map<string, { requests: number; serverErrors: number }>;

export function countAnswer(tally: GeneratorTally, generator: string, status: number): void {
  const counts = tally.get(generator) ?? { requests: 0, serverErrors: 0 };
  counts.requests += 1;
  if (status >= 500) counts.serverErrors += 1;
  tally.set(generator, counts);
}

export function formatGeneratorTally(tally: GeneratorTally): string {
  return [...tally]
    .map(([name, counts]) => `  ${name}: ${counts.requests} requests, ${counts.serverErrors} × 5xx`)
    .join('\n');
}
