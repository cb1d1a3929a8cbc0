import { beforeEach, describe, expect, it, vi } from 'vitest';
import { generateApiToken, hashApiToken, tokenHint } from '../../../lambdas/auth/api-token.ts';
import { makeAuthenticate } from '../../../lambdas/auth/authenticate.ts';
import type { ApiTokenRecord } from '../../../lambdas/auth/ports.ts';
import { signSessionToken } from '../../../lambdas/auth/session-token.ts';
import { makeStartSession } from '../../../lambdas/auth/sessions.ts';
import {
  at,
  FakeAuthRepository,
  FakeClock,
  RecordingAudit,
  refusalOf,
  SIGNING_KEY,
  seedMember,
  sequentialIds,
  signingKey,
} from './fakes.ts';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;

let repo: FakeAuthRepository;
let clock: FakeClock;
let audit: RecordingAudit;
let keyReads: ReturnType<typeof vi.fn<() => Promise<Buffer>>>;
let authenticate: ReturnType<typeof makeAuthenticate>;

beforeEach(async () => {
  repo = new FakeAuthRepository();
  clock = new FakeClock();
  audit = new RecordingAudit();
  keyReads = vi.fn<() => Promise<Buffer>>(signingKey);
  authenticate = makeAuthenticate({ auth: repo, clock, signingKey: keyReads, audit });
  await seedMember(repo, { role: 'member' });
});

const bearer = (secret: string) => ({ secret, via: 'bearer' as const });
const cookie = (secret: string) => ({ secret, via: 'cookie' as const });

let tokenCount = 0;
async function apiToken(
  overrides: Partial<ApiTokenRecord> = {},
): Promise<{ secret: string; tokenId: string }> {
  const secret = generateApiToken();
  const tokenId = `token-${++tokenCount}`;
  await repo.createApiToken({
    tokenId,
    tokenHash: hashApiToken(secret),
    userId: 'user-ada',
    teamId: 'team-a',
    name: 'ci',
    hint: tokenHint(secret),
    createdAt: at(0),
    expiresAt: null,
    revokedAt: null,
    ...overrides,
  });
  return { secret, tokenId };
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const { status, message } = await refusalOf(promise);
  expect(status).toBe(401);
  return message;
}

describe('a request without a usable credential', () => {
  it('is 401 and says which credentials the API takes', async () => {
    expect(await refusal(authenticate(undefined))).toBe(
      'A credential is required: Authorization: Bearer <token> or the session cookie.',
    );
  });

  it('is 401 when the session cookie holds an API token', async () => {
    const { secret } = await apiToken();
    expect(await refusal(authenticate(cookie(secret)))).toBe(
      'The credential is invalid, expired or revoked.',
    );
  });

  it('is 401 for a made-up or mistyped token, refused without a store read', async () => {
    const lookups = vi.spyOn(repo, 'findApiTokenByHash');
    const { secret } = await apiToken();
    const typo = `${secret.slice(0, 10)}${secret[10] === 'x' ? 'y' : 'x'}${secret.slice(11)}`;
    expect(await refusal(authenticate(bearer(typo)))).toBe('The API token is invalid or revoked.');
    expect(await refusal(authenticate(bearer('Bearer-ish nonsense')))).toBe(
      'The API token is invalid or revoked.',
    );
    expect(lookups).not.toHaveBeenCalled();
  });
});

describe('an API token', () => {
  it('acts for its user in its team, with the user’s current role there', async () => {
    const { secret, tokenId } = await apiToken();
    expect(await authenticate(bearer(secret))).toEqual({
      principalId: 'user-ada',
      userId: 'user-ada',
      teamId: 'team-a',
      role: 'member',
      method: 'api-token',
      tokenId,
    });
    await repo.putMembership({ userId: 'user-ada', teamId: 'team-a', role: 'viewer', createdAt: at(0) });
    authenticate.clearCache();
    expect(await authenticate(bearer(secret))).toMatchObject({ role: 'viewer' });
    // The session signing key is never needed for an API token.
    expect(keyReads).not.toHaveBeenCalled();
  });

  it('is 401 when unknown or revoked', async () => {
    expect(await refusal(authenticate(bearer(generateApiToken())))).toBe(
      'The API token is invalid or revoked.',
    );
    const { secret } = await apiToken({ revokedAt: at(0) });
    expect(await refusal(authenticate(bearer(secret)))).toBe('The API token is invalid or revoked.');
  });

  it('works until its expiry, not at it, and its cache entry never outlives it', async () => {
    const { secret } = await apiToken({ expiresAt: at(SECOND) });
    await authenticate(bearer(secret));
    clock.advance(SECOND - 1);
    await expect(authenticate(bearer(secret))).resolves.toMatchObject({ userId: 'user-ada' });
    clock.advance(1);
    expect(await refusal(authenticate(bearer(secret)))).toBe('The API token has expired.');
  });

  it('is 401 once its user left the team', async () => {
    const { secret } = await apiToken();
    repo.memberships.clear();
    expect(await refusal(authenticate(bearer(secret)))).toBe(
      'The API token no longer belongs to a member of its team.',
    );
  });

  it('keeps working for 30 s after its revocation in a warm authorizer, not longer', async () => {
    const { secret, tokenId } = await apiToken();
    await authenticate(bearer(secret));
    await repo.revokeApiToken({ tokenHash: hashApiToken(secret), tokenId }, at(1));
    clock.advance(30 * SECOND - 1);
    await expect(authenticate(bearer(secret))).resolves.toMatchObject({ tokenId });
    clock.advance(1);
    expect(await refusal(authenticate(bearer(secret)))).toBe('The API token is invalid or revoked.');
  });

  it('is looked up again at once after clearCache, or after a shorter configured cache time', async () => {
    const { secret, tokenId } = await apiToken();
    await authenticate(bearer(secret));
    await repo.revokeApiToken({ tokenHash: hashApiToken(secret), tokenId }, at(0));
    authenticate.clearCache();
    expect(await refusal(authenticate(bearer(secret)))).toBe('The API token is invalid or revoked.');

    const other = await apiToken();
    const brief = makeAuthenticate({ auth: repo, clock, signingKey, audit, cacheMs: 5 * SECOND });
    await brief(bearer(other.secret));
    await repo.revokeApiToken({ tokenHash: hashApiToken(other.secret), tokenId: other.tokenId }, at(0));
    clock.advance(5 * SECOND);
    expect(await refusal(brief(bearer(other.secret)))).toBe('The API token is invalid or revoked.');
  });

  it('holds at most 1000 tokens in the cache, forgetting the oldest first', async () => {
    const tokens = [];
    for (let i = 0; i < 1001; i++) tokens.push(await apiToken());
    for (const { secret } of tokens) await authenticate(bearer(secret));
    const [oldest, second] = tokens as [(typeof tokens)[0], (typeof tokens)[0]];
    for (const { secret, tokenId } of [oldest, second])
      await repo.revokeApiToken({ tokenHash: hashApiToken(secret), tokenId }, at(0));
    expect(await refusal(authenticate(bearer(oldest.secret)))).toBe('The API token is invalid or revoked.');
    await expect(authenticate(bearer(second.secret))).resolves.toMatchObject({ tokenId: second.tokenId });
  });

  describe('last use', () => {
    it('is recorded at most once a minute', async () => {
      const touches = vi.spyOn(repo, 'touchApiToken');
      const uncached = makeAuthenticate({ auth: repo, clock, signingKey, audit, cacheMs: 0 });
      const { secret } = await apiToken();
      const hash = hashApiToken(secret);
      await uncached(bearer(secret));
      expect(touches).toHaveBeenLastCalledWith(hash, at(0), at(-MINUTE));
      expect(repo.apiTokens.get(hash)?.lastUsedAt).toBe(at(0));
      clock.advance(MINUTE - 1);
      await uncached(bearer(secret));
      expect(touches).toHaveBeenCalledTimes(1);
      clock.advance(1);
      await uncached(bearer(secret));
      expect(touches).toHaveBeenCalledTimes(2);
      expect(touches).toHaveBeenLastCalledWith(hash, at(MINUTE), at(0));
      clock.advance(1);
      await uncached(bearer(secret));
      expect(repo.apiTokens.get(hash)?.lastUsedAt).toBe(at(MINUTE + 1));
    });

    it('that cannot be recorded never refuses the token; the operator is told', async () => {
      const { secret, tokenId } = await apiToken();
      vi.spyOn(repo, 'touchApiToken').mockRejectedValueOnce(
        Object.assign(new Error('slow down'), { name: 'ProvisionedThroughputExceededException' }),
      );
      await expect(authenticate(bearer(secret))).resolves.toMatchObject({ tokenId });
      expect(audit.entries).toEqual([
        {
          level: 'warn',
          message: 'could not record lastUsedAt',
          attributes: { tokenId, errorClass: 'ProvisionedThroughputExceededException' },
        },
      ]);
    });
  });
});

describe('a session access token', () => {
  let accessToken: string;
  let sessionId: string;

  beforeEach(async () => {
    const start = makeStartSession({ auth: repo, clock, ids: sequentialIds('session'), signingKey, audit });
    const user = await repo.getUser('user-ada');
    if (!user) throw new Error('seeded user missing');
    ({ accessToken, sessionId } = await start(user, 'password'));
  });

  it('acts for the session’s user and team, from the cookie or the Authorization header', async () => {
    const principal = {
      principalId: 'user-ada',
      userId: 'user-ada',
      teamId: 'team-a',
      role: 'member',
      method: 'session',
      sessionId,
    };
    expect(await authenticate(cookie(accessToken))).toEqual(principal);
    expect(await authenticate(bearer(accessToken))).toEqual(principal);
  });

  it('is 401 on the very next request after the session ended (never cached)', async () => {
    await authenticate(cookie(accessToken));
    await repo.revokeSession(sessionId, at(0), 'logout');
    expect(await refusal(authenticate(cookie(accessToken)))).toBe('The session has ended.');
    repo.sessions.delete(sessionId);
    expect(await refusal(authenticate(cookie(accessToken)))).toBe('The session has ended.');
  });

  it('is 401 when forged, tampered with or expired', async () => {
    expect(await refusal(authenticate(cookie('pss_forged.token')))).toBe(
      'The session token is invalid or expired.',
    );
    clock.advance(15 * MINUTE);
    expect(await refusal(authenticate(cookie(accessToken)))).toBe('The session token is invalid or expired.');
  });

  it('is 401 when it names another user than the session’s', async () => {
    const now = Math.floor(clock.now().getTime() / 1000);
    const other = signSessionToken(
      { sid: sessionId, uid: 'user-eve', iat: now, exp: now + 900 },
      SIGNING_KEY,
    );
    expect(await refusal(authenticate(cookie(other)))).toBe('The session has ended.');
  });

  it('is 401 from the session’s absolute end on, whatever the token says', async () => {
    const session = repo.sessions.get(sessionId);
    if (session) session.expiresAt = at(MINUTE);
    clock.advance(MINUTE - 1);
    await expect(authenticate(cookie(accessToken))).resolves.toMatchObject({ sessionId });
    clock.advance(1);
    expect(await refusal(authenticate(cookie(accessToken)))).toBe('The session has expired.');
  });

  it('is 401 once its user left the session’s team', async () => {
    repo.memberships.clear();
    expect(await refusal(authenticate(cookie(accessToken)))).toBe(
      'The session no longer belongs to a member of its team.',
    );
  });
});
