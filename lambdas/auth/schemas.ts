/*
 * Request bodies of the auth and API token endpoints, as zod schemas: what the handlers
 * parse before calling the use cases.
 */
import * as z from 'zod/mini';
import { idSchema, timestampSchema } from '../core/schemas.ts';

/** Request bodies of the auth and token endpoints. Lengths bound the work a request can cause. */

const emailField = z.string().check(z.trim(), z.minLength(3), z.maxLength(254));
/** Where a new session's tokens go: HttpOnly cookies (browsers) or the JSON body (scripts, apps). */
const deliveryField = z._default(z.enum(['cookie', 'body']), 'cookie');
const boundedString = (min: number, max: number) => z.string().check(z.minLength(min), z.maxLength(max));

export const loginBodySchema = z.strictObject({
  email: emailField,
  // Long enough for any passphrase; the password rules cap new passwords at 128 characters.
  password: boundedString(1, 1024),
  teamId: z.optional(idSchema),
  delivery: deliveryField,
});

export const refreshBodySchema = z.strictObject({
  /** Absent: the refresh cookie is used and the new tokens come back as cookies. */
  refreshToken: z.optional(boundedString(1, 256)),
  /** Switches the session to another of the user's teams. */
  teamId: z.optional(idSchema),
});

export const magicLinkRequestBodySchema = z.strictObject({ email: emailField });

export const magicLinkVerifyBodySchema = z.strictObject({
  token: boundedString(1, 256),
  teamId: z.optional(idSchema),
  delivery: deliveryField,
});

export const createApiTokenBodySchema = z.strictObject({
  name: z.string().check(z.trim(), z.minLength(1), z.maxLength(100)),
  teamId: idSchema,
  expiresAt: z.optional(timestampSchema),
});

export const changePasswordBodySchema = z.strictObject({
  currentPassword: z.optional(boundedString(1, 1024)),
  newPassword: boundedString(1, 1024),
  /** Also revoke every API token of the user, in all their teams (they keep working otherwise). */
  revokeApiTokens: z.optional(z.boolean()),
});
