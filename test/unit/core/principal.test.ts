/** Who may do what: a credential acts for one team, and viewers only read. */
import { describe, expect, it } from 'vitest';
import {
  assertCanWrite,
  assertSameTeam,
  type Principal,
  principalSchema,
} from '../../../lambdas/core/principal.ts';

const principal = (overrides: Partial<Principal> = {}): Principal => ({
  principalId: 'user-1',
  userId: 'user-1',
  teamId: 'team-1',
  role: 'member',
  method: 'api-token',
  tokenId: 'token-1',
  ...overrides,
});

describe('the principal', () => {
  it('is read from the authorizer context, which must name a user, a team and a known role', () => {
    expect(principalSchema.parse(principal())).toEqual(principal());
    expect(principalSchema.safeParse(principal({ role: 'owner' as never })).success).toBe(false);
    expect(principalSchema.safeParse(principal({ teamId: '' })).success).toBe(false);
    expect(principalSchema.safeParse(principal({ method: 'cookie' as never })).success).toBe(false);
  });

  it('is forbidden (403, not 404) anything of another team', () => {
    expect(() => assertSameTeam(principal(), 'team-1')).not.toThrow();
    expect(() => assertSameTeam(principal(), 'team-2')).toThrow(
      expect.objectContaining({
        statusCode: 403,
        code: 'FORBIDDEN',
        message: 'The credential has no permission for this resource.',
      }),
    );
  });

  it('may change the team’s resources as admin or member, and only read as viewer', () => {
    expect(() => assertCanWrite(principal({ role: 'admin' }))).not.toThrow();
    expect(() => assertCanWrite(principal({ role: 'member' }))).not.toThrow();
    expect(() => assertCanWrite(principal({ role: 'viewer' }))).toThrow(
      expect.objectContaining({
        statusCode: 403,
        message: "The viewer role can read but not change this team's resources.",
      }),
    );
  });
});
