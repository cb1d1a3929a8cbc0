import { z } from 'zod';
import { idSchema, timestampSchema } from '../core/schemas.ts';

/** Request bodies of the auth and token endpoints. Lengths bound the work a request can cause. */

const emailField = z.string().trim().min(3).max(254);
/** Where a new session's tokens go: HttpOnly cookies (browsers) or the JSON body (scripts, apps). */
const deliveryField = z.enum(['cookie', 'body']).default('cookie');

export const loginBodySchema = z.strictObject({
  email: emailField,
  // Long enough for any passphrase; the password rules cap new passwords at 128 characters.
  password: z.string().min(1).max(1024),
  teamId: idSchema.optional(),
  delivery: deliveryField,
});

export const refreshBodySchema = z.strictObject({
  /** Absent: the refresh cookie is used and the new tokens come back as cookies. */
  refreshToken: z.string().min(1).max(256).optional(),
  /** Switches the session to another of the user's teams. */
  teamId: idSchema.optional(),
});

export const magicLinkRequestBodySchema = z.strictObject({ email: emailField });

export const magicLinkVerifyBodySchema = z.strictObject({
  token: z.string().min(1).max(256),
  teamId: idSchema.optional(),
  delivery: deliveryField,
});

export const createApiTokenBodySchema = z.strictObject({
  name: z.string().trim().min(1).max(100),
  teamId: idSchema,
  expiresAt: timestampSchema.optional(),
});

export const changePasswordBodySchema = z.strictObject({
  currentPassword: z.string().min(1).max(1024).optional(),
  newPassword: z.string().min(1).max(1024),
});
