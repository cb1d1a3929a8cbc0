/* Request bodies of the team member and invitation endpoints, as zod schemas. */
import * as z from 'zod/mini';
import { roleSchema } from '../core/principal.ts';

export const inviteMemberBodySchema = /* @__PURE__ */ z.strictObject({
  email: /* @__PURE__ */ z
    .string()
    .check(
      /* @__PURE__ */ z.trim(),
      /* @__PURE__ */ z.minLength(3),
      /* @__PURE__ */ z.maxLength(254),
      /* @__PURE__ */ z.regex(/^[^\s@]+@[^\s@]+$/, 'must be an email address'),
    ),
  role: roleSchema,
});

export const setMemberRoleBodySchema = /* @__PURE__ */ z.strictObject({ role: roleSchema });
