import { describe, expect, it } from 'vitest';
import type { SynthesisDraft } from '../../../lambdas/synthesis/draft.ts';
import { synthesisDraftJsonSchema, synthesisDraftSchema } from '../../../lambdas/synthesis/draft.ts';

/** Walks a parsed JSON value without casting each level. */
const dig = (value: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>(
    (node, key) => (node !== null && typeof node === 'object' ? Reflect.get(node, key) : undefined),
    value,
  );

const validDraft = (): SynthesisDraft => ({
  diagnosis: {
    summary: 'The generator times out under load.',
    findings: [
      { id: '1', description: 'Timeouts in the generator.', signalRefs: [1, 4] },
      { id: '2', description: 'Truncated answers.', signalRefs: [2] },
    ],
  },
  changes: [
    {
      id: '1',
      slotId: 'generator',
      description: 'Raise timeoutMs to 60000.',
      rationale: 'Slow calls need more time.',
      findingIds: ['1'],
      patch: { timeoutMs: 60_000, stop: null },
    },
  ],
  warnings: [{ type: 'speculative_change', message: 'The new limit is a guess.', changeIds: ['1'] }],
});

describe('synthesisDraftSchema', () => {
  it('accepts a complete submit_synthesis input: findings, changes and linked warnings', () => {
    const draft = validDraft();

    const result = synthesisDraftSchema.safeParse(draft);

    expect(result.success).toBe(true);
  });

  it('refuses finding ids that do not run "1", "2", … in order, pointing at the offending id', () => {
    const draft = validDraft();
    draft.diagnosis.findings = [
      { id: '1', description: 'a', signalRefs: [] },
      { id: '3', description: 'b', signalRefs: [] },
    ];

    const result = synthesisDraftSchema.safeParse(draft);

    expect(result.success).toBe(false);
    expect(result.error?.issues).toContainEqual(
      expect.objectContaining({
        path: ['diagnosis', 'findings', 1, 'id'],
        message: expect.stringContaining('"2"'),
      }),
    );
  });

  it.each([['one'], ['0'], ['01'], ['1.5']])('refuses the change id %j', (id) => {
    const draft = validDraft();
    const [change] = draft.changes;
    if (change === undefined) throw new Error('fixture has a change');
    change.id = id;

    const result = synthesisDraftSchema.safeParse(draft);

    expect(result.success).toBe(false);
  });

  it('refuses a change that cites no finding', () => {
    const draft = validDraft();
    const [change] = draft.changes;
    if (change === undefined) throw new Error('fixture has a change');
    change.findingIds = [];

    const result = synthesisDraftSchema.safeParse(draft);

    expect(result.success).toBe(false);
  });

  it('refuses a patch that uses a reserved key, however deep', () => {
    const draft = validDraft();
    const [change] = draft.changes;
    if (change === undefined) throw new Error('fixture has a change');
    change.patch = JSON.parse('{"options": {"__proto__": {"admin": true}}}') as Record<string, unknown>;

    const result = synthesisDraftSchema.safeParse(draft);

    expect(result.success).toBe(false);
  });

  it('refuses a patch with an empty key at any depth, which DynamoDB could not store', () => {
    for (const patch of [{ x: 1, '': null }, { a: { '': null } }, { list: [{ '': 1 }] }]) {
      const draft = validDraft();
      const [change] = draft.changes;
      if (change === undefined) throw new Error('fixture has a change');
      change.patch = patch;

      const result = synthesisDraftSchema.safeParse(draft);

      expect(result.success, JSON.stringify(patch)).toBe(false);
      expect(result.error?.issues.map((issue) => issue.message)).toContain(
        'must not hold an empty key at any depth',
      );
    }
  });

  it('refuses unknown fields, fractional signal numbers, a blank summary and non snake_case warning types', () => {
    const withExtra = { ...validDraft(), confidence: 'high' };
    const fractional = validDraft();
    fractional.diagnosis.findings[0] = { id: '1', description: 'a', signalRefs: [1.5] };
    const blank = validDraft();
    blank.diagnosis.summary = '   ';
    const badType = validDraft();
    badType.warnings = [{ type: 'Speculative Change', message: 'x' }];

    const results = [withExtra, fractional, blank, badType].map((draft) =>
      synthesisDraftSchema.safeParse(draft),
    );

    expect(results.map((result) => result.success)).toEqual([false, false, false, false]);
  });

  it('leaves out-of-range signal numbers for the code to drop rather than failing the reply', () => {
    const draft = validDraft();
    draft.diagnosis.findings[0] = { id: '1', description: 'a', signalRefs: [0, 999] };

    const result = synthesisDraftSchema.safeParse(draft);

    expect(result.success).toBe(true);
  });

  it('refuses more findings than a reader can use', () => {
    const draft = validDraft();
    draft.diagnosis.findings = Array.from({ length: 21 }, (_, index) => ({
      id: String(index + 1),
      description: 'x',
      signalRefs: [],
    }));

    const result = synthesisDraftSchema.safeParse(draft);

    expect(result.success).toBe(false);
  });
});

describe('synthesisDraftJsonSchema', () => {
  it('describes an object tool input with the three required parts and no extra fields', () => {
    const schema = synthesisDraftJsonSchema();

    expect(schema.type).toBe('object');
    expect(schema.required).toEqual(['diagnosis', 'changes', 'warnings']);
    expect(schema.additionalProperties).toBe(false);
    expect(schema).not.toHaveProperty('$schema');
  });

  it('asks for integer signal numbers, string ids and an object patch', () => {
    const schema = synthesisDraftJsonSchema();

    const finding = dig(schema, 'properties', 'diagnosis', 'properties', 'findings', 'items', 'properties');
    const change = dig(schema, 'properties', 'changes', 'items', 'properties');
    expect(dig(finding, 'signalRefs', 'items', 'type')).toBe('integer');
    expect(dig(change, 'id', 'type')).toBe('string');
    expect(dig(change, 'patch', 'type')).toBe('object');
    expect(dig(change, 'findingIds', 'minItems')).toBe(1);
  });
});
