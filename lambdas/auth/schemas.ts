/*
 * Request bodies of the auth and API token endpoints, as zod schemas: what the handlers
 * parse before calling the use cases.
 */
import * as z from 'zod/mini';
import { idSchema, timestampSchema } from '../core/schemas/common.ts';

/** Request bodies of the auth and token endpoints. Lengths bound the work a request can cause. */

const emailField = /* @__PURE__ */ z
  .string()
  .check(/* @__PURE__ */ z.trim(), /* @__PURE__ */ z.minLength(3), /* @__PURE__ */ z.maxLength(254));
/** Where a new session's tokens go: HttpOnly cookies (browsers) or the JSON body (scripts, apps). */
const deliveryField = /* @__PURE__ */ z._default(/* @__PURE__ */ z.enum(['cookie', 'body']), 'cookie');
const boundedString = (min: number, max: number) =>
  z.string().check(/* @__PURE__ */ z.minLength(min), /* @__PURE__ */ z.maxLength(max));

export const loginBodySchema = /* @__PURE__ */ z.strictObject({
  email: emailField,
  // Long enough for any passphrase; the password rules cap new passwords at 128 characters.
  password: /* @__PURE__ */ boundedString(1, 1024),
  teamId: /* @__PURE__ */ z.optional(idSchema),
  delivery: deliveryField,
});

export const refreshBodySchema = /* @__PURE__ */ z.strictObject({
  /** Absent: the refresh cookie is used and the new tokens come back as cookies. */
  refreshToken: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedString(1, 256)),
  /** Switches the session to another of the user's teams. */
  teamId: /* @__PURE__ */ z.optional(idSchema),
});

export const magicLinkRequestBodySchema = /* @__PURE__ */ z.strictObject({ email: emailField });

export const magicLinkVerifyBodySchema = /* @__PURE__ */ z.strictObject({
  token: /* @__PURE__ */ boundedString(1, 256),
  teamId: /* @__PURE__ */ z.optional(idSchema),
  delivery: deliveryField,
});

export const createApiTokenBodySchema = /* @__PURE__ */ z.strictObject({
  name: /* @__PURE__ */ z
    .string()
    .check(/* @__PURE__ */ z.trim(), /* @__PURE__ */ z.minLength(1), /* @__PURE__ */ z.maxLength(100)),
  teamId: idSchema,
  expiresAt: /* @__PURE__ */ z.optional(timestampSchema),
});

export const changePasswordBodySchema = /* @__PURE__ */ z.strictObject({
  currentPassword: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedString(1, 1024)),
  /** The password rules (auth/password.ts) check the rest; the length is stated here for the document too. */
  newPassword: /* @__PURE__ */ z.string().check(
    /* @__PURE__ */ z.minLength(12, 'must have at least 12 characters'),
    // The password rules' own bound (auth/password.ts), so the document says what is refused.
    /* @__PURE__ */ z.maxLength(128, 'must have at most 128 characters'),
  ),
  /** Also revoke every API token of the user, in all their teams (they keep working otherwise). */
  revokeApiTokens: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
});
