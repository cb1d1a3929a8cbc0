/*
 * Who is calling (the principal the authorizer established) and the two rules every use case
 * applies to it: a credential acts for one team, and viewers only read.
 */
import * as z from 'zod/mini';
import { ForbiddenError } from './errors.ts';

export const roleSchema = z.enum(['admin', 'member', 'viewer']);
export type Role = z.infer<typeof roleSchema>;

/**
 * Who is calling, as the authorizer established it and API Gateway passes it to every handler
 * (`requestContext.authorizer`). Values are strings because API Gateway's context holds only scalars.
 */
export const principalSchema = z.object({
  principalId: z.string().check(z.minLength(1)),
  userId: z.string().check(z.minLength(1)),
  teamId: z.string().check(z.minLength(1)),
  role: roleSchema,
  method: z.enum(['api-token', 'session']),
  /** Set for an API token. */
  tokenId: z.optional(z.string()),
  /** Set for a session: the login (and refresh-token family) the request belongs to. */
  sessionId: z.optional(z.string()),
});
export type Principal = z.infer<typeof principalSchema>;

/** A credential belongs to one team: anything of another team is forbidden, not hidden. */
export function assertSameTeam(principal: Principal, resourceTeamId: string): void {
  if (principal.teamId !== resourceTeamId) throw new ForbiddenError();
}

const WRITE_ROLES: readonly Role[] = ['admin', 'member'];

/** Viewers read; admins and members may also change the team's resources. */
export function assertCanWrite(principal: Principal): void {
  if (!WRITE_ROLES.includes(principal.role)) {
    throw new ForbiddenError(`The ${principal.role} role can read but not change this team's resources.`);
  }
}
