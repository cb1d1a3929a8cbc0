/*
 * The API Gateway adapter of UsageKeyRegistry (auth/usage-keys.ts): the evaluation plan's API keys,
 * one a team, each named `<prefix><teamId>` so that a key an interrupted attempt made is found again.
 * Needs @aws-sdk/client-api-gateway (the deploy's backfill and `npm run bootstrap` on AWS).
 */
import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  GetApiKeysCommand,
} from '@aws-sdk/client-api-gateway';
import * as z from 'zod/mini';
import type { UsageKeyRegistry } from '../auth/ports.ts';
import { readConfig } from './config.ts';

/** Keys a listing page asks for: a name query answers the keys whose name starts with it. */
const PAGE_SIZE = 500;

/** The name of a team's key: the stack's prefix (its usage plan's id) and the team. */
export const usageKeyName = (usagePlanId: string, teamId: string) => `${usagePlanId}-${teamId}`;

/** UsageKeyRegistry on the API Gateway API, for the usage plan `usagePlanId`. */
export function makeUsageKeyRegistry(client: APIGatewayClient, usagePlanId: string): UsageKeyRegistry {
  return {
    planId: usagePlanId,

    async findKey(teamId) {
      const name = usageKeyName(usagePlanId, teamId);
      let position: string | undefined;
      do {
        const page = await client.send(
          new GetApiKeysCommand({ nameQuery: name, includeValues: true, limit: PAGE_SIZE, position }),
        );
        // A name query matches by prefix: team ids of one length never prefix one another, but be exact.
        const found = (page.items ?? []).find((key) => key.name === name && key.id && key.value);
        if (found?.id && found.value) return { keyId: found.id, value: found.value };
        position = page.position;
      } while (position);
      return null;
    },

    async createKey(teamId) {
      const created = await client.send(
        new CreateApiKeyCommand({
          name: usageKeyName(usagePlanId, teamId),
          description: `Evaluations of team ${teamId} (named by the authorizer; never sent by a caller)`,
          enabled: true,
        }),
      );
      if (!created.id || !created.value)
        throw new Error('API Gateway made an API key without an id or a value.');
      return { keyId: created.id, value: created.value };
    },

    async addToPlan(keyId) {
      try {
        await client.send(new CreateUsagePlanKeyCommand({ usagePlanId, keyId, keyType: 'API_KEY' }));
      } catch (error) {
        // Already on the plan: what a second attempt finds.
        if ((error as Error)?.name !== 'ConflictException') throw error;
      }
    },
  };
}

/** The registry of the stack's evaluation plan (USAGE_PLAN_ID, set by the `managesUsageKeys` access). */
export function usageKeyRegistryFromEnv(): UsageKeyRegistry {
  const { USAGE_PLAN_ID } = readConfig({ USAGE_PLAN_ID: z.string().check(z.minLength(1)) });
  return makeUsageKeyRegistry(new APIGatewayClient({}), USAGE_PLAN_ID);
}
