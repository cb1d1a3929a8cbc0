/** The API Gateway adapter of usage keys: what it asks API Gateway, and how it reads the answers. */
import {
  APIGatewayClient,
  ConflictException,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  GetApiKeysCommand,
  NotFoundException,
} from '@aws-sdk/client-api-gateway';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { makeUsageKeyRegistry } from '../../../lambdas/wiring/usage-key-registry.ts';

const apiGateway = mockClient(APIGatewayClient);
const PLAN = 'plan1a';
const registry = () => makeUsageKeyRegistry(new APIGatewayClient({ region: 'us-east-1' }), PLAN);

beforeEach(() => apiGateway.reset());

describe('makeUsageKeyRegistry', () => {
  it('creates an enabled key named after the plan and the team, and answers its id and value', async () => {
    apiGateway.on(CreateApiKeyCommand).resolves({ id: 'k1', value: 'v1', name: `${PLAN}-team-a` });

    const key = await registry().createKey('team-a');

    expect(key).toEqual({ keyId: 'k1', value: 'v1' });
    expect(apiGateway.commandCalls(CreateApiKeyCommand)[0]?.args[0].input).toMatchObject({
      name: `${PLAN}-team-a`,
      enabled: true,
    });
  });

  it('finds the key of exactly that team, across pages, with its value', async () => {
    apiGateway
      .on(GetApiKeysCommand, { position: undefined })
      .resolves({ items: [{ id: 'k0', name: `${PLAN}-team-ab`, value: 'v0' }], position: 'p2' })
      .on(GetApiKeysCommand, { position: 'p2' })
      .resolves({ items: [{ id: 'k1', name: `${PLAN}-team-a`, value: 'v1' }] });

    expect(await registry().findKey('team-a')).toEqual({ keyId: 'k1', value: 'v1' });
    expect(apiGateway.commandCalls(GetApiKeysCommand)[0]?.args[0].input).toMatchObject({
      nameQuery: `${PLAN}-team-a`,
      includeValues: true,
    });
  });

  it('finds none when no key has the name', async () => {
    apiGateway.on(GetApiKeysCommand).resolves({ items: [] });

    expect(await registry().findKey('team-a')).toBeNull();
  });

  it('puts a key on the plan, and takes a key already on it as done', async () => {
    apiGateway
      .on(CreateUsagePlanKeyCommand, { keyId: 'k1' })
      .resolves({ id: 'k1' })
      .on(CreateUsagePlanKeyCommand, { keyId: 'k2' })
      .rejects(new ConflictException({ message: 'already on the plan', $metadata: {} }));

    await registry().addToPlan('k1');
    await registry().addToPlan('k2');

    expect(apiGateway.commandCalls(CreateUsagePlanKeyCommand).map((call) => call.args[0].input)).toEqual([
      { usagePlanId: PLAN, keyId: 'k1', keyType: 'API_KEY' },
      { usagePlanId: PLAN, keyId: 'k2', keyType: 'API_KEY' },
    ]);
  });

  it('passes on any other refusal (a plan that is gone)', async () => {
    apiGateway
      .on(CreateUsagePlanKeyCommand)
      .rejects(new NotFoundException({ message: 'no plan', $metadata: {} }));

    await expect(registry().addToPlan('k1')).rejects.toThrow('no plan');
  });
});
