/* PATCH /teams/{teamId}/settings: change the team's retention windows (admins). */
import { teamSettingsSchema, updateTeamSettingsBodySchema } from '../core/lifecycle.ts';
import { idSchema } from '../core/schemas/common.ts';
import { makeUpdateTeamSettings } from '../core/use-cases/lifecycle.ts';
import { operationHandler } from '../http/operation.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import { teamSettingsStoreFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const updateTeamSettings = defineOperation({
  name: 'update-team-settings',
  method: 'PATCH',
  path: '/teams/{teamId}/settings',
  summary:
    'Change how many days (1-3650) signals and executions are kept. Older records are never read again; a shortened window is applied to stored records within a day.',
  access: { data: 'readWrite', events: 'readWrite' },
  params: { teamId: idSchema },
  body: {
    schema: updateTeamSettingsBodySchema,
    required: true,
    example: { signalRetentionDays: 30, executionRetentionDays: 90 },
  },
  response: { status: 200, schema: teamSettingsSchema },
  // 404: a teamId that is not an id (another team's is a 403).
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(updateTeamSettings, () => {
  const update = makeUpdateTeamSettings({
    settings: teamSettingsStoreFromEnv(),
    clock: systemClock,
    ids: nanoidGenerator,
  });
  return async ({ principal, params, body }) => ({ body: await update(principal, params.teamId, body) });
});
