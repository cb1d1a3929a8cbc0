/**
 * The seed users' passwords are hashed once (scrypt, about a second of CPU each) and kept in the
 * local stack's cache folder: later starts seed the same ones without hashing again.
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '../../../lambdas/auth/password.ts';
import { SEED_USERS, seedPasswords } from '../../../local/early.ts';

describe('the seed users’ passwords', () => {
  let cacheDir: string;
  beforeEach(async () => {
    cacheDir = await mkdtemp(path.join(tmpdir(), 'seed-passwords-'));
  });
  afterEach(() => rm(cacheDir, { recursive: true, force: true }));

  it('are made and hashed on the first start, kept for its owner only, and the same at the next', async () => {
    const first = await seedPasswords(cacheDir);
    const kept = path.join(cacheDir, 'seed-passwords.json');

    expect(first).toHaveLength(SEED_USERS);
    expect(new Set(first.map((entry) => entry.password)).size).toBe(SEED_USERS);
    for (const { password, passwordHash } of first)
      expect(await verifyPassword(password, passwordHash)).toBe(true);
    expect((await stat(kept)).mode & 0o777).toBe(0o600);
    expect(await seedPasswords(cacheDir)).toEqual(first);
  });

  it('are made again when the kept ones are unreadable, too few, or hashed with other parameters', async () => {
    const kept = path.join(cacheDir, 'seed-passwords.json');
    const weak = (await hashPassword('local-weakly-hashed')).replace(/^scrypt\$\d+\$/, 'scrypt$1024$');
    const stale = [
      'not json',
      JSON.stringify([{ password: 'local-one', passwordHash: await hashPassword('local-one') }]),
      JSON.stringify(
        Array.from({ length: SEED_USERS }, () => ({ password: 'local-weakly-hashed', passwordHash: weak })),
      ),
    ];
    for (const content of stale) {
      await writeFile(kept, content);
      const made = await seedPasswords(cacheDir);

      expect(made).toHaveLength(SEED_USERS);
      expect(made.map((entry) => entry.password)).not.toContain('local-weakly-hashed');
      expect(JSON.parse(await readFile(kept, 'utf8'))).toEqual(made);
    }
  });
});
