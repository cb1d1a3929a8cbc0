import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { retryAfterSeconds } from '../../../cli/api.ts';
import { resolveConnection } from '../../../cli/config.ts';
import { batches, parseRecords } from '../../../cli/records.ts';

describe('record files', () => {
  const records = [{ kind: 'a' }, { kind: 'b' }];
  it('reads a JSON array, the API body shape and NDJSON alike', () => {
    expect(parseRecords(JSON.stringify(records), 'signals', 'f')).toEqual(records);
    expect(parseRecords(JSON.stringify({ signals: records }), 'signals', 'f')).toEqual(records);
    expect(parseRecords(`${records.map((r) => JSON.stringify(r)).join('\n')}\n\n`, 'signals', 'f')).toEqual(
      records,
    );
  });

  it('names the line that is not JSON, and refuses non-objects', () => {
    expect(() => parseRecords('{"kind":"a"}\n{oops', 'signals', 'f.ndjson')).toThrow(
      'f.ndjson line 2 is not JSON',
    );
    expect(() => parseRecords('[1, 2]', 'signals', 'f')).toThrow('record 1 is not a JSON object');
  });

  it('cuts batches of at most 100', () => {
    expect(batches(Array.from({ length: 250 }, (_, i) => i)).map((batch) => batch.length)).toEqual([
      100, 100, 50,
    ]);
  });
});

describe('where the CLI connects', () => {
  const cwd = mkdtempSync(path.join(tmpdir(), 'cli-config-'));
  writeFileSync(
    path.join(cwd, 'seed.json'),
    JSON.stringify({ apiUrl: 'http://127.0.0.1:3999', teams: [{ name: 'Acme', apiToken: 'seeded' }] }),
  );
  const env = { LOCAL_STATE_DIR: cwd };

  it('prefers options to the environment', () => {
    const connection = resolveConnection(
      { apiUrl: 'https://a.example/prod/', token: 't1' },
      { ...env, PIPELINE_SYNTHESIS_API_URL: 'https://b.example', PIPELINE_SYNTHESIS_API_TOKEN: 't2' },
      cwd,
    );
    expect(connection).toEqual({ apiUrl: 'https://a.example/prod', token: 't1' });
  });

  it('uses the seed file only when neither a URL nor a token is set', () => {
    expect(resolveConnection({}, env, cwd)).toMatchObject({
      apiUrl: 'http://127.0.0.1:3999',
      token: 'seeded',
      fromSeed: { teamName: 'Acme' },
    });
    expect(() => resolveConnection({ token: 't' }, env, cwd)).toThrow('pass --api-url');
  });

  it('refuses a URL that is not http(s)', () => {
    expect(() => resolveConnection({ apiUrl: 'file:///etc/passwd' }, env, cwd)).toThrow('http(s) URL');
  });
});

describe('Retry-After', () => {
  it('reads seconds and HTTP dates, and ignores garbage', () => {
    expect(retryAfterSeconds('5')).toBe(5);
    expect(retryAfterSeconds(new Date(10_000).toUTCString(), 4_000)).toBe(6);
    expect(retryAfterSeconds('soon')).toBeUndefined();
    expect(retryAfterSeconds(null)).toBeUndefined();
  });
});
