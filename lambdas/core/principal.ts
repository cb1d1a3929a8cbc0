/*
 * Who is calling (the principal the authorizer established) and the two rules every use case
 * applies to it: a credential acts for one team, and viewers only read.
 */
import * as z from 'zod/mini';
import { ForbiddenError } from './errors.ts';

export const roleSchema = /* @__PURE__ */ z.enum(['admin', 'member', 'viewer']);
export type Role = z.infer<typeof roleSchema>;

/**
 * Who is calling, as the authorizer established it and API Gateway passes it to every handler
 * (`requestContext.authorizer`). Values are strings because API Gateway's context holds only scalars.
 */
export const principalSchema = /* @__PURE__ */ z.object({
  principalId: /* @__PURE__ */ z.string().check(/* @__PURE__ */ z.minLength(1)),
  userId: /* @__PURE__ */ z.string().check(/* @__PURE__ */ z.minLength(1)),
  teamId: /* @__PURE__ */ z.string().check(/* @__PURE__ */ z.minLength(1)),
  role: roleSchema,
  method: /* @__PURE__ */ z.enum(['api-token', 'session']),
  /** Set for an API token. */
  tokenId: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  /** Set for a session: the login (and refresh-token family) the request belongs to. */
  sessionId: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
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
