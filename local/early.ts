/**
 * What `npm start` begins before the rest of the stack's modules load, because the seed waits for
 * it and nothing else does: DynamoDB Local's JVM and the seed users' passwords. This module stays
 * light (no AWS SDK, no zod), so Java is launched within milliseconds of local/start.ts beginning
 * (it was 360–480 ms, behind the seed's imports) and boots while the rest of the stack loads.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { hashHasCurrentParameters, hashPassword } from '../lambdas/auth/password.ts';
import { REPO_ROOT } from '../lib/bundling.ts';
import { type DynamoDbLocal, findFreePort, startDynamoDbLocal } from './dynamodb.ts';

/** How many users the seed creates (local/seed.ts: one per team). */
export const SEED_USERS = 2;

/**
 * What the local stack builds once and keeps between starts: the functions' bundles (rebuilt when a
 * file they were built from changes, local/runtime/bundles.ts) and the seed users' passwords with
 * their hashes. LOCAL_BUNDLE_CACHE puts it elsewhere: the bench's start without a cache uses an
 * empty folder, never a running stack's.
 */
export const LOCAL_CACHE_DIR =
  process.env.LOCAL_BUNDLE_CACHE ??
  path.join(REPO_ROOT, 'node_modules', '.cache', 'pipeline-synthesis', 'functions');

export interface SeedPassword {
  password: string;
  passwordHash: string;
}

const SEED_PASSWORDS_FILE = 'seed-passwords.json';

function isSeedPasswords(value: unknown): value is SeedPassword[] {
  return (
    Array.isArray(value) &&
    value.length === SEED_USERS &&
    value.every(
      (entry) =>
        typeof entry?.password === 'string' &&
        entry.password.startsWith('local-') &&
        typeof entry.passwordHash === 'string' &&
        hashHasCurrentParameters(entry.passwordHash),
    )
  );
}

/**
 * The seed users' passwords and their scrypt hashes. scrypt is slow on purpose (about a second of
 * CPU each, which a starting JVM needs too), so they are made once, on the first start, and kept in
 * the cache folder (readable by its owner only): later starts seed the same passwords, and a
 * browser that remembered them still signs in. The API tokens are new at each start.
 */
export async function seedPasswords(cacheDir: string = LOCAL_CACHE_DIR): Promise<SeedPassword[]> {
  const file = path.join(cacheDir, SEED_PASSWORDS_FILE);
  try {
    const kept: unknown = JSON.parse(await readFile(file, 'utf8'));
    if (isSeedPasswords(kept)) return kept;
  } catch {
    // None kept yet (or unreadable): make new ones.
  }
  const made = await Promise.all(
    Array.from({ length: SEED_USERS }, async () => {
      const password = `local-${randomBytes(9).toString('base64url')}`;
      return { password, passwordHash: await hashPassword(password) };
    }),
  );
  try {
    await mkdir(cacheDir, { recursive: true });
    // Written whole, then renamed: a stack starting meanwhile reads the old file or the new one.
    const staging = `${file}.${process.pid}`;
    await writeFile(staging, JSON.stringify(made), { mode: 0o600 });
    await rename(staging, file);
  } catch {
    // A cache that cannot be written costs the next start the hashing, nothing more.
  }
  return made;
}

/** DynamoDB Local and the seed passwords, started at `atMs` (performance.now()). */
export interface EarlyStarts {
  atMs: number;
  /** Where the handlers reach DynamoDB: the local JVM, or DYNAMODB_ENDPOINT's. */
  dynamodbEndpoint: string;
  dynamodb: Promise<DynamoDbLocal>;
  passwords: Promise<SeedPassword[]>;
}

/**
 * Starts DynamoDB Local's JVM and the seed passwords; startLocalStack() awaits both. With
 * DYNAMODB_ENDPOINT, a DynamoDB already running there is used instead (its tables created when
 * missing) and nothing is started or stopped: a DynamoDB Local with -dbPath, a team's, or a proxy.
 */
export async function startEarly(
  endpoint: string | undefined = process.env.DYNAMODB_ENDPOINT || undefined,
): Promise<EarlyStarts> {
  const atMs = performance.now();
  const given = endpoint ? givenDynamoDb(endpoint) : null;
  const dynamodbPort = given ? given.port : await findFreePort();
  const dynamodb = given ? Promise.resolve(given) : startDynamoDbLocal({ port: dynamodbPort });
  const passwords = seedPasswords();
  // Awaited by startLocalStack; a failure before then must not be an unhandled rejection.
  dynamodb.catch(() => undefined);
  passwords.catch(() => undefined);
  return {
    atMs,
    dynamodbEndpoint: given ? given.endpoint : `http://127.0.0.1:${dynamodbPort}`,
    dynamodb,
    passwords,
  };
}

/** A DynamoDB this stack did not start: used as it is, never stopped. */
function givenDynamoDb(endpoint: string): DynamoDbLocal {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new Error(`DYNAMODB_ENDPOINT is not a URL: ${endpoint}`);
  }
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  return { endpoint: endpoint.replace(/\/$/, ''), port, pid: process.pid, stop: async () => undefined };
}
