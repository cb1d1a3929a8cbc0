/* GET /teams/{teamId}/settings: the team's retention windows (any member of the team). */
import { teamSettingsSchema } from '../core/lifecycle.ts';
import { idSchema } from '../core/schemas/common.ts';
import { makeGetTeamSettings } from '../core/use-cases/lifecycle.ts';
import { operationHandler } from '../http/operation.ts';
import { teamSettingsStoreFromEnv } from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const getTeamSettings = defineOperation({
  name: 'get-team-settings',
  method: 'GET',
  path: '/teams/{teamId}/settings',
  summary: "The team's settings: how many days signals and executions are kept (90 unless changed).",
  access: { data: 'read' },
  params: { teamId: idSchema },
  response: { status: 200, schema: teamSettingsSchema },
  // 404: a teamId that is not an id (another team's is a 403).
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(getTeamSettings, () => {
  const get = makeGetTeamSettings({ settings: teamSettingsStoreFromEnv() });
  return async ({ principal, params }) => ({ body: await get(principal, params.teamId) });
});
