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
}

function knownValueFor(parameter: string, ids: KnownIds): string {
  if (parameter === 'pipelineId') return ids.pipelineId;
  if (parameter === 'configurationId') return ids.configurationId;
  if (parameter === 'id') return ids.runId;
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
