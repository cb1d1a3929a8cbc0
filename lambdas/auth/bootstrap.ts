/*
 * Creates a team with its first user, membership and API token in one go: the operator's
 * way in on a fresh deployment (local/bootstrap.ts, local/seed.ts) and the API tests' setup. On
 * AWS the team also gets its usage key of the evaluation plan (auth/usage-keys.ts).
 */
import { newEvent, SYSTEM_ACTOR } from '../core/events.ts';
import type { Clock, IdGenerator } from '../core/ports/common.ts';
import type { Role } from '../core/principal.ts';
import { generateApiToken, hashApiToken, tokenHint } from './api-token.ts';
import { assertPasswordAcceptable, hashPassword } from './password.ts';
import type { AuthRepository } from './ports.ts';
import type { EnsureTeamUsageKey } from './usage-keys.ts';

export interface BootstrapInput {
  teamName: string;
  email: string;
  userName: string;
  password?: string;
  /** A hash from hashPassword, when the caller hashed the password already. */
  passwordHash?: string;
  role?: Role;
  tokenName?: string;
}

export interface BootstrapResult {
  teamId: string;
  userId: string;
  tokenId: string;
  /** The API token secret: shown once, stored only as a hash. */
  apiToken: string;
}

/** Creates a team, its first user (admin by default) and an API token for that team. */
export function makeBootstrapTeam({
  auth,
  clock,
  ids,
  usageKeys,
}: {
  auth: AuthRepository;
  clock: Clock;
  ids: IdGenerator;
  /** Gives the new team its usage key (noUsageKeys on the local stack). */
  usageKeys: EnsureTeamUsageKey;
}) {
  return async (input: BootstrapInput): Promise<BootstrapResult> => {
    // The same rules as a password change: the first admin is the account most worth guessing.
    if (input.password !== undefined) assertPasswordAcceptable(input.password, input.email);
    const createdAt = clock.now().toISOString();
    const teamId = ids.newId();
    const userId = ids.newId();
    const tokenId = ids.newId();
    const apiToken = generateApiToken();
    await auth.createTeam({ teamId, name: input.teamName, createdAt });
    // Before the first member: if API Gateway refuses, nobody is in the team yet and the email is
    // still free, so the command can simply be run again (a team left empty gets its key by the
    // next deploy's backfill, and is never used).
    await usageKeys(teamId);
    await auth.createUser({
      userId,
      email: input.email,
      name: input.userName,
      createdAt,
      ...(input.passwordHash
        ? { passwordHash: input.passwordHash }
        : input.password
          ? { passwordHash: await hashPassword(input.password) }
          : {}),
    });
    await auth.putMembership({ userId, teamId, role: input.role ?? 'admin', createdAt });
    await auth.createApiToken(
      {
        tokenId,
        tokenHash: hashApiToken(apiToken),
        userId,
        teamId,
        name: input.tokenName ?? 'bootstrap',
        hint: tokenHint(apiToken),
        createdAt,
        expiresAt: null,
        revokedAt: null,
      },
      newEvent(
        'api_token.created',
        { teamId, tokenId, actor: SYSTEM_ACTOR },
        { at: createdAt, key: tokenId },
      ),
    );
    return { teamId, userId, tokenId, apiToken };
  };
}
