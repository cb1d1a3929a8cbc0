/*
 * Use cases of a user's API tokens: create one for the session's team (secret shown once),
 * list them without secrets, revoke one.
 */
import { ForbiddenError, NotFoundError, ValidationError } from '../core/errors.ts';
import { type Actor, actorOf, newEvent } from '../core/events.ts';
import type { Clock, IdGenerator, PageRequest } from '../core/ports/common.ts';
import type { Principal } from '../core/principal.ts';
import type { Page } from '../core/schemas/common.ts';
import { generateApiToken, hashApiToken, tokenHint } from './api-token.ts';
import type { ApiTokenRecord, AuthRepository } from './ports.ts';

/** An API token as the token list shows it: never the secret, never its hash. */
export interface ApiTokenView {
  id: string;
  name: string;
  teamId: string;
  /** `psa_…` and the last four characters: enough to recognise a token, not to use it. */
  hint: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
}

function toApiTokenView(token: ApiTokenRecord): ApiTokenView {
  return {
    id: token.tokenId,
    name: token.name,
    teamId: token.teamId,
    hint: token.hint,
    createdAt: token.createdAt,
    lastUsedAt: token.lastUsedAt ?? null,
    expiresAt: token.expiresAt,
    revokedAt: token.revokedAt,
  };
}

export interface ApiTokenDeps {
  auth: AuthRepository;
  clock: Clock;
  ids: IdGenerator;
}

export interface CreateApiTokenInput {
  name: string;
  teamId: string;
  expiresAt?: string | undefined;
}

/**
 * Creates an API token for one of the caller's teams and returns its secret, once. Only a session
 * may create tokens: a leaked token must not be able to mint successors that outlive its own
 * revocation. Any role may create one; the token acts with the user's current role in the team,
 * read again on every authorization, so a viewer's token is a read-only token.
 */
export function makeCreateApiToken({ auth, clock, ids }: ApiTokenDeps) {
  return async (
    principal: Principal,
    input: CreateApiTokenInput,
  ): Promise<ApiTokenView & { token: string }> => {
    if (principal.method !== 'session') {
      throw new ForbiddenError('API tokens are created from a browser session, not with another API token.');
    }
    const now = clock.now();
    // Stryker disable next-line ConditionalExpression: equivalent; without expiresAt, Date.parse gives NaN, and NaN <= now is false.
    if (input.expiresAt !== undefined && Date.parse(input.expiresAt) <= now.getTime()) {
      throw new ValidationError('expiresAt must be in the future.', {
        details: [{ path: 'expiresAt', message: 'must be in the future' }],
      });
    }
    // A credential acts for one team: it may not mint tokens of the user's other teams.
    if (input.teamId !== principal.teamId)
      throw new ForbiddenError(
        'You can create tokens only for the team this session acts for; switch team first.',
      );
    const membership = await auth.getMembership(principal.userId, input.teamId);
    if (!membership) throw new ForbiddenError('You can create tokens only for teams you belong to.');
    const token = generateApiToken();
    const record: ApiTokenRecord = {
      tokenId: ids.newId(),
      tokenHash: hashApiToken(token),
      userId: principal.userId,
      teamId: input.teamId,
      name: input.name,
      hint: tokenHint(token),
      createdAt: now.toISOString(),
      expiresAt: input.expiresAt ?? null,
      revokedAt: null,
      lastUsedAt: null,
    };
    await auth.createApiToken(
      record,
      newEvent(
        'api_token.created',
        { teamId: record.teamId, tokenId: record.tokenId, actor: actorOf(principal) },
        { at: record.createdAt, key: record.tokenId },
      ),
    );
    return { ...toApiTokenView(record), token };
  };
}

/**
 * The caller's own API tokens of the team the credential acts for, newest first, revoked ones
 * included (a credential never sees or touches the user's tokens of another team).
 */
export function makeListApiTokens({ auth }: Pick<ApiTokenDeps, 'auth'>) {
  return async (principal: Principal, page: PageRequest): Promise<Page<ApiTokenView>> => {
    const result = await auth.listApiTokensOfUser(principal.userId, principal.teamId, page);
    return { items: result.items.map(toApiTokenView), nextCursor: result.nextCursor };
  };
}

/**
 * Revokes one of the caller's tokens; revoking twice is fine. Someone else's token is a 404, as
 * if it did not exist: tokens belong to users, and ids of other users' tokens are not disclosed.
 */
export function makeRevokeApiToken({ auth, clock }: Pick<ApiTokenDeps, 'auth' | 'clock'>) {
  return async (principal: Principal, tokenId: string): Promise<void> => {
    const token = await auth.getApiToken(tokenId);
    if (!token || token.userId !== principal.userId || token.teamId !== principal.teamId)
      throw new NotFoundError(`API token ${tokenId} does not exist.`);
    const at = clock.now().toISOString();
    await auth.revokeApiToken(token, at, revokedEvent(token, at, actorOf(principal)));
  };
}

/** api_token.revoked for `token`, by `actor`. */
export function revokedEvent(token: Pick<ApiTokenRecord, 'tokenId' | 'teamId'>, at: string, actor: Actor) {
  return newEvent(
    'api_token.revoked',
    { teamId: token.teamId, tokenId: token.tokenId, actor },
    { at, key: token.tokenId },
  );
}
