import { describe, expect, it } from 'vitest';
import { settingRows } from '../../../web/src/settings-diff.ts';

describe('settingRows', () => {
  it('lists every key of both versions, the base order first, and marks only the changed ones', () => {
    const rows = settingRows({ topK: 8, timeoutMs: 1500 }, { topK: 8, timeoutMs: 3000, retries: 2 });

    expect(rows.map((row) => [row.key, row.before, row.after, row.changed])).toEqual([
      ['topK', 8, 8, false],
      ['timeoutMs', 1500, 3000, true],
      ['retries', undefined, 2, true],
    ]);
  });

  it('compares objects by value, not by identity', () => {
    const [row] = settingRows({ stop: ['\n\n'] }, { stop: ['\n\n'] });

    expect(row?.changed).toBe(false);
  });

  it('diffs a long prompt by line: the before side keeps the removed line, the after side the added one', () => {
    const before = 'Answer the question.\nUse the documents.\n{{question}}';
    const after = 'Answer the question.\nCite the documents you use.\n{{question}}';
    const [row] = settingRows({ template: before }, { template: after });

    expect(row?.text?.by).toBe('line');
    expect(row?.text?.before.filter((part) => part.kind === 'removed').map((part) => part.text)).toEqual([
      'Use the documents.\n',
    ]);
    expect(row?.text?.after.filter((part) => part.kind === 'added').map((part) => part.text)).toEqual([
      'Cite the documents you use.\n',
    ]);
    expect(row?.text?.after.map((part) => part.text).join('')).toBe(after);
    expect(row?.text?.before.map((part) => part.text).join('')).toBe(before);
  });

  it('diffs one long line by word, and leaves short values whole', () => {
    const sentence =
      'Respond only with valid JSON that matches the requested schema, with no prose around it.';
    const [long] = settingRows(
      { instructions: sentence },
      { instructions: sentence.replace('valid', 'strict') },
    );
    const [short] = settingRows({ model: 'claude-a' }, { model: 'claude-b' });

    expect(long?.text?.by).toBe('word');
    expect(long?.text?.after.filter((part) => part.kind === 'added').map((part) => part.text)).toEqual([
      'strict',
    ]);
    expect(short?.changed).toBe(true);
    expect(short?.text).toBeUndefined();
  });
});
