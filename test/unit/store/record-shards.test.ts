import { describe, expect, it } from 'vitest';
import { accessEnvironment, type EnvironmentSources } from '../../../lambdas/function-environment.ts';
import { DEFAULT_RECORD_SHARDS, recordShardsOf } from '../../../lambdas/store/keys.ts';

/*
 * The data's shard count is a deployment setting (RECORD_SHARDS, docs/scaling.md): a bad value is
 * refused when a function starts, never used to write under keys no reader reads.
 */

describe('the record shard count', () => {
  it('is the default when unset, and the count given otherwise', () => {
    expect(recordShardsOf(undefined)).toBe(DEFAULT_RECORD_SHARDS);
    expect(recordShardsOf('')).toBe(DEFAULT_RECORD_SHARDS);
    expect(recordShardsOf('1')).toBe(1);
    expect(recordShardsOf('99')).toBe(99);
  });

  it('refuses what is not a whole number from 1 to 99, naming it', () => {
    for (const bad of ['0', '100', '2.5', '-3', 'many', '1e1x']) {
      expect(() => recordShardsOf(bad)).toThrow(
        `RECORD_SHARDS must be a whole number from 1 to 99, not "${bad}"`,
      );
    }
  });

  it('reaches the functions that use the data table only, and only when set', () => {
    const sources: EnvironmentSources = {
      tableNames: { Runs: 'r', Data: 'd', Auth: 'a', Events: 'e', Settings: 's' },
      queueUrls: {} as EnvironmentSources['queueUrls'],
      sessionSecret: {},
    };
    expect(accessEnvironment({ data: 'read' }, { ...sources, recordShards: 8 }).RECORD_SHARDS).toBe('8');
    expect(
      accessEnvironment({ runs: 'read' }, { ...sources, recordShards: 8 }).RECORD_SHARDS,
    ).toBeUndefined();
    expect(accessEnvironment({ data: 'readWrite' }, sources).RECORD_SHARDS).toBeUndefined();
  });
});
